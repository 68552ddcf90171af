"""Package data: the Mobile-Eval task files (one JSON file per Table 1 row)."""
