"""The phone as an evaluation environment: reset it, read its state, tidy up.

android_world's ``initialize_task`` / ``is_successful`` / ``tear_down`` over ADB only. What
the phone can do is asked over ADB, never assumed from what it is: a phone that answers
``dumpsys simphone`` with a JSON object has readable state and ``cmd simphone reset``
(the simulated phone; any device that implements the same service would qualify). Any
other phone is reset the way a person would — home, and force-stop the task's apps — and
its runs are judged by a person or an MLLM, since success cannot be read from it.

An iPhone (``ios:NAME``) has no adb shell: the harness asks the same commands through
``IphoneShell``, the simulated iPhone's own route next to its WDA (``POST /simphone/shell``,
``simphone.ios.wda``); a real iPhone's WDA answers it ``unknown command``, so a real iPhone
is reset like any phone without readable state (home, and the task's apps stopped through
WDA's ``/wda/apps/terminate`` by their bundle ids) and judged by a person or an MLLM.

May import: httpx, mobile_agent (device API), mobile_eval.errors.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, overload

import httpx

from eval.mobile_eval.errors import DeviceStateError
from mobile_agent.errors import DeviceCommandError, DeviceError
from mobile_agent.urls import shown_url

__all__ = ["IphoneShell", "PhoneEnvironment", "ResetKind", "ShellAnswer", "environment_for"]

log = logging.getLogger(__name__)

ResetKind = Literal["state", "home"]


class _Device(Protocol):
    @property
    def serial(self) -> str: ...

    def key(self, name: str) -> object: ...
    def resolve_app_label(self, label: str) -> str | None: ...


class _Shell(Protocol):
    """The harness's channel to the phone's commands: an adb phone's shell (``Device``)."""

    def run(self, args: list[str]) -> Any: ...
    def force_stop(self, package: str) -> None: ...


class _AdbDevice(_Device, _Shell, Protocol):
    """An adb phone: the device and its shell in one (``mobile_agent.device.Device``)."""


@dataclass(frozen=True)
class ShellAnswer:
    """What one command printed, as an adb phone's ``Device.run`` answers it."""

    stdout: bytes
    stderr: bytes
    exit_code: int | None


class IphoneShell:
    """The commands of the simulated iPhone at ``url`` (its WDA address), through the
    simulator's ``POST /simphone/shell``. A real WDA answers ``unknown command``: exit 127,
    as a shell without the command, so the phone reads as one without readable state."""

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.shown = shown_url(self.url)  # what messages name: no user:password (ios.devices may hold one)
        self.timeout_s = timeout_s

    def run(self, args: list[str]) -> ShellAnswer:
        try:
            response = httpx.post(f"{self.url}/simphone/shell", json={"argv": list(args)}, timeout=self.timeout_s)
            value = response.json().get("value")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            return ShellAnswer(b"", f"no shell at {self.shown}: {exc}".encode(), 127)
        if not isinstance(value, dict) or "exitCode" not in value:  # WDA's error object: no such route
            message = value.get("message", "") if isinstance(value, dict) else ""
            return ShellAnswer(b"", f"an iPhone has no shell ({message})".encode(), 127)
        return ShellAnswer(str(value.get("stdout", "")).encode(), str(value.get("stderr", "")).encode(),
                           int(value["exitCode"]))

    def force_stop(self, package: str) -> None:
        """Stop the app whose bundle id is ``package`` through WDA's ``POST
        /session/{id}/wda/apps/terminate`` (``FBSessionCommands.m``: a session route; the
        value says whether it was running), in WDA's current session (every answer's
        ``sessionId``), or one made for it. ``DeviceCommandError`` when WDA refuses (an app not
        installed) or does not answer."""
        command = ["terminate", package]
        try:
            session = httpx.get(f"{self.url}/status", timeout=self.timeout_s).json().get("sessionId")
            if not isinstance(session, str) or not session:
                made = httpx.post(f"{self.url}/session", json={"capabilities": {}}, timeout=self.timeout_s).json()
                session = made.get("sessionId") or (made.get("value") or {}).get("sessionId")
            answer = httpx.post(f"{self.url}/session/{session}/wda/apps/terminate", json={"bundleId": package},
                                timeout=self.timeout_s)
            value = answer.json().get("value")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise DeviceCommandError(f"{package} was not stopped: no WDA answer at {self.shown} ({exc})",
                                     command=command) from exc
        if answer.status_code != 200 or isinstance(value, dict):  # WDA's error object
            message = value.get("message", "") if isinstance(value, dict) else answer.text[:200]
            raise DeviceCommandError(f"{package} was not stopped: {message}", command=command)
        log.info("terminated %s through %s (it was %srunning)", package, self.shown, "" if value else "not ")


class PhoneEnvironment:
    """One phone, seen by the evaluation harness (not by the agent): ``device`` the phone the
    agent drives, ``shell`` its commands (default: the device's own adb shell)."""

    @overload
    def __init__(self, device: _AdbDevice) -> None: ...

    @overload
    def __init__(self, device: _Device, shell: _Shell) -> None: ...

    def __init__(self, device: _Device, shell: _Shell | None = None) -> None:
        self.device = device
        # an adb phone is its own shell (the first overload)
        self.shell: _Shell = shell if shell is not None else cast(_AdbDevice, device)
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
        result = self.shell.run(["dumpsys", "simphone"])
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
            result = self.shell.run(["cmd", "simphone", "reset", "--seed", str(int(seed))])
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
                    self.shell.force_stop(package)
            except DeviceError as exc:  # an app that is not installed has nothing to stop
                log.info("could not force-stop %s on %s: %s", label, self.serial, exc.message)
        self.device.key("home")
        return "home"

    def set_up(self, commands: list[list[str]]) -> None:
        """A task's initial state beyond the reset, through plain adb shell commands
        (``settings put``, ``cmd uimode night``, ``cmd simphone clock``); any failure stops the task."""
        for argv in commands:
            result = self.shell.run(list(argv))
            output = (result.stderr or result.stdout or b"").decode("utf-8", "replace").strip()
            # `content` exits 0 whatever happens (AOSP cmds/content): its failure is in what it prints
            refused = argv[:1] == ["content"] and ("Error while accessing provider" in output or "[ERROR]" in output)
            if result.exit_code not in (0, None) or refused:
                raise DeviceStateError(f"{self.serial}: setup `{' '.join(argv)}` failed (exit {result.exit_code}): "
                                       f"{output[:200]}", serial=self.serial)


def environment_for(device: Any, ios_devices: dict[str, str]) -> PhoneEnvironment:
    """The harness's view of ``device``: an adb phone with its own shell; an iPhone
    (``platform`` ``ios``) with ``IphoneShell`` at its WDA address: the one its client talks to
    (``wda_url``: the URL of ``ios.devices``, or a USB iPhone's local forward), else
    ``ios_devices``'s (``ios.devices``: NAME -> URL)."""
    from mobile_agent.device import wda_url

    if device.platform == "ios":
        url = wda_url(device) or ios_devices.get(str(device.serial).removeprefix("ios:"))
        if url is None:
            raise DeviceStateError(f"{device.serial} is not one of ios.devices", serial=device.serial)
        return PhoneEnvironment(device, IphoneShell(url))
    return PhoneEnvironment(device)
