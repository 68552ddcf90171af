"""The real model output and screenshot that the parser's and perception's tests read:
tests/data/mobile-agent-v1-runs (its README names the source and licence).

The data lives in the repository, so a fresh clone tests as much as this checkout: a
missing file is an error at collection, never a skip.
"""

from __future__ import annotations

import json
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent / "data" / "mobile-agent-v1-runs"


def reference_file(*parts: str) -> Path:
    """A file of the reference runs; FileNotFoundError when it is missing."""
    path = REFERENCE.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"test data missing: {path} (committed with the tests; restore it with git)")
    return path


def reference_steps() -> list[tuple[str, dict[str, str]]]:
    """Every recorded step, as ("<App>/<run>#<step>", {"Observation", "Thought", "Action"})."""
    steps = []
    for path in sorted(REFERENCE.glob("*/*/data.json")):
        for number, step in json.loads(path.read_text(encoding="utf-8")).items():
            steps.append((f"{path.parent.parent.name}/{path.parent.name}#{number}", step))
    if not steps:
        raise FileNotFoundError(f"test data missing: no {REFERENCE}/*/*/data.json (committed with the tests)")
    return steps
