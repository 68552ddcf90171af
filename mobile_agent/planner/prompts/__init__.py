"""The planner's prompt texts (Markdown package files, read with importlib.resources)."""
