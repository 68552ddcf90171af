"""Types shared by the simulated phone's ADB side and its device model.

May import: the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["CommandResult", "PhoneLike"]


@dataclass(frozen=True)
class CommandResult:
    """What one shell command printed and its exit code (as Android's shell reports it)."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    # the program wrote stderr before stdout (screencap's multi-display warning comes
    # before the image; a merged stream must show it first)
    stderr_first: bool = False
    # a program that runs on after it started (screenrecord records until its time limit or a
    # signal): the rest of it, which the ADB side runs once the phone's locks are free, so that
    # other connections (the `pkill -INT screenrecord` that stops it) are served meanwhile
    pending: Callable[[], CommandResult] | None = None


class PhoneLike(Protocol):
    """What the ADB server needs from a phone model."""

    name: str  # ro.product.name
    model: str  # ro.product.model
    device: str  # ro.product.device

    def run(self, argv: list[str]) -> CommandResult:
        """Run one simple command (no `;`, `&&`: the shell grammar splits those)."""
        ...
