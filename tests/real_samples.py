"""Real Android output kept under ``tests/fixtures/android/`` (each file names its source
in ``# source:`` header lines, which ``sample`` strips)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "android"


def sample(name: str) -> str:
    """The output in ``fixtures/android/NAME`` without its header lines."""
    lines = (FIXTURES / name).read_text("utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)
