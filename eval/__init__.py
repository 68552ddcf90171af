"""Benchmarks of mobile-agent (top layer: uses ``mobile_agent``'s public API only)."""
