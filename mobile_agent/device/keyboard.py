"""ADB Keyboard (senzhk/ADBKeyBoard): switch to it, wait until it listens, switch back.

``ime set`` flips ``default_input_method`` at once, but the IME service, whose
``onCreate`` registers the broadcast receiver, is bound a moment later; a broadcast sent
in between is dropped without a word (``am`` still prints ``Broadcast completed:
result=0``: ADBKeyBoard never sets a result code, so the result cannot confirm
delivery). So the session waits until ``dumpsys input_method`` names ADB Keyboard as the
bound method (``mCurMethodId`` / ``mCurId``, and ``mBoundToMethod=true`` where printed)
and raises ``TextInputError`` when it never does: text is never reported typed when it
was dropped.

May import: the standard library, ``mobile_agent.errors`` and the sibling modules.
"""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING

from mobile_agent.device.text_input import ADB_KEYBOARD_IME
from mobile_agent.errors import DeviceError, TextInputError

if TYPE_CHECKING:
    from mobile_agent.device.device import Device

__all__ = ["AdbKeyboardSession", "broadcast_delivered", "ime_bound"]

log = logging.getLogger(__name__)

_READY_TIMEOUT_S = 3.0
_POLL_S = 0.1
_METHOD_RE = re.compile(r"\b(?:mCurMethodId|mCurId)=(\S+)")
_BOUND_RE = re.compile(r"\bmBoundToMethod=(true|false)")
_BROADCAST_RE = re.compile(r"Broadcast completed: result=(-?\d+)")


def ime_bound(dump: str, ime: str = ADB_KEYBOARD_IME) -> bool | None:
    """From ``dumpsys input_method``: is ``ime`` the bound input method? None when the
    dump names no current method at all (nothing to tell)."""
    methods = _METHOD_RE.findall(dump)
    if not methods:
        return None
    if ime not in methods:
        return False
    bound = _BOUND_RE.search(dump)
    return bound is None or bound.group(1) == "true"


def broadcast_delivered(output: str) -> bool:
    """``am broadcast`` finished (``Broadcast completed: result=N``). It says the
    broadcast went out, not that a receiver took it: the IME check comes first."""
    return _BROADCAST_RE.search(output) is not None


class AdbKeyboardSession:
    """Switch to ADB Keyboard for the ``with`` block (waiting until it is bound), then
    back to the user's IME."""

    def __init__(self, device: Device, timeout_s: float = _READY_TIMEOUT_S) -> None:
        self.device = device
        self.timeout_s = timeout_s
        self.previous: str | None = None

    def __enter__(self) -> AdbKeyboardSession:
        current = self.device.shell(["settings", "get", "secure", "default_input_method"]).strip()
        self.previous = current if current and current != "null" else None
        if self.previous != ADB_KEYBOARD_IME:
            self.device.check(["ime", "enable", ADB_KEYBOARD_IME])
            self.device.check(["ime", "set", ADB_KEYBOARD_IME])
        try:
            self._wait_ready()
        except BaseException as exc:
            self.__exit__(type(exc), exc, None)  # switch back; the wait's error is the one to see
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        state = "default_input_method not switched"
        while True:
            setting = self.device.shell(["settings", "get", "secure", "default_input_method"]).strip()
            if setting == ADB_KEYBOARD_IME:
                bound = ime_bound(self.device.shell(["dumpsys", "input_method"]))
                if bound is not False:  # True, or a build that prints no binding state
                    return
                state = "selected but not bound yet"
            if time.monotonic() >= deadline:
                raise TextInputError(
                    f"ADB Keyboard did not become the active input method on {self.device.serial} within "
                    f"{self.timeout_s:.0f}s ({state}); the text was not typed. Check that it is enabled in the "
                    "phone's keyboard settings.",
                    serial=self.device.serial,
                    reason="ime_not_active",
                )
            time.sleep(_POLL_S)

    def send(self, argv: list[str]) -> None:
        """Run one ADB Keyboard broadcast; a broadcast that did not complete raises."""
        result = self.device.run(argv)
        output = (result.stdout + result.stderr).decode("utf-8", "replace")
        if result.exit_code not in (0, None) or not broadcast_delivered(output):
            raise TextInputError(
                f"ADB Keyboard's broadcast failed on {self.device.serial}: {output.strip()[:200]}; the text was not typed",
                serial=self.device.serial,
                reason="broadcast_failed",
                output=output.strip()[:500],
            )

    def __exit__(self, *exc: object) -> None:
        if self.previous and self.previous != ADB_KEYBOARD_IME:
            try:
                self.device.check(["ime", "set", self.previous])
            except DeviceError as err:  # the original error (if any) matters more
                if exc[0] is None:
                    raise
                log.warning("could not restore the IME %s on %s: %s", self.previous, self.device.serial, err)
