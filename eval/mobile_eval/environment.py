"""The phone as an evaluation environment: reset it, read its state, tidy up.

android_world's ``initialize_task`` / ``is_successful`` / ``tear_down`` over ADB only. What
the phone can do is asked over ADB, never assumed from what it is: a phone that answers
``dumpsys simphone`` with a JSON object has readable state and ``cmd simphone reset``
(the simulated phone; any device that implements the same service would qualify). Any
other phone is reset the way a person would — home, and force-stop the task's apps — and
its runs are judged by a person or an MLLM, since success cannot be read from it.

May import: mobile_agent (device API), mobile_eval.errors.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, Protocol

from eval.mobile_eval.errors import DeviceStateError
from mobile_agent.errors import DeviceError

__all__ = ["PhoneEnvironment", "ResetKind"]

log = logging.getLogger(__name__)

ResetKind = Literal["state", "home"]


class _Device(Protocol):
    serial: str

    def run(self, args: list[str]) -> Any: ...
    def key(self, name: str | int) -> None: ...
    def force_stop(self, package: str) -> None: ...
    def resolve_app_label(self, label: str) -> str | None: ...


class PhoneEnvironment:
    """One phone, seen by the evaluation harness (not by the agent)."""

    def __init__(self, device: _Device) -> None:
        self.device = device
        self._stateful: bool | None = None

    @property
    def serial(self) -> str:
        return self.device.serial

    @property
    def stateful(self) -> bool:
        """Whether the phone's state can be read (probed once, over ADB)."""
        if self._stateful is None:
            self._stateful = self._try_read_state() is not None
        return self._stateful

    def _try_read_state(self) -> dict[str, Any] | None:
        result = self.device.run(["dumpsys", "simphone"])
        if result.exit_code not in (0, None):
            return None
        try:
            data = json.loads(result.stdout.decode("utf-8", "replace"))
        except json.JSONDecodeError:
            return None  # a real phone: "Can't find service: simphone"
        return data if isinstance(data, dict) else None

    def read_state(self) -> dict[str, Any]:
        """The phone's state JSON; ``DeviceStateError`` on a phone without one."""
        state = self._try_read_state()
        if state is None:
            raise DeviceStateError(f"{self.serial} does not report its state (dumpsys simphone)", serial=self.serial)
        return state

    def reset(self, *, seed: int = 0, apps: list[str] | None = None) -> ResetKind:
        """Back to a known start: the seeded state where possible, else home + force-stop."""
        if self.stateful:
            result = self.device.run(["cmd", "simphone", "reset", "--seed", str(int(seed))])
            if result.exit_code not in (0, None):
                output = (result.stderr or result.stdout or b"").decode("utf-8", "replace").strip()
                raise DeviceStateError(
                    f"{self.serial}: `cmd simphone reset` failed (exit {result.exit_code}): {output[:200]}",
                    serial=self.serial,
                )
            return "state"
        self.device.key("home")
        for label in apps or []:
            try:
                package = self.device.resolve_app_label(label)
                if package:
                    self.device.force_stop(package)
            except DeviceError as exc:  # an app that is not installed has nothing to stop
                log.info("could not force-stop %s on %s: %s", label, self.serial, exc.message)
        self.device.key("home")
        return "home"

    def set_up(self, commands: list[list[str]]) -> None:
        """A task's initial state beyond the reset, through plain adb shell commands
        (``settings put``, ``cmd uimode night``, ``cmd simphone clock``); any failure stops the task."""
        for argv in commands:
            result = self.device.run(list(argv))
            output = (result.stderr or result.stdout or b"").decode("utf-8", "replace").strip()
            # `content` exits 0 whatever happens (AOSP cmds/content): its failure is in what it prints
            refused = argv[:1] == ["content"] and ("Error while accessing provider" in output or "[ERROR]" in output)
            if result.exit_code not in (0, None) or refused:
                raise DeviceStateError(f"{self.serial}: setup `{' '.join(argv)}` failed (exit {result.exit_code}): "
                                       f"{output[:200]}", serial=self.serial)
