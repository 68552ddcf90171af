"""Prompts of the data engine's MLLM verifiers, loaded with ``importlib.resources``."""
