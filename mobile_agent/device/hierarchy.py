"""The phone's accessibility tree: ``uiautomator dump``.

``uiautomator dump /dev/tty`` prints the XML and then AOSP DumpCommand's confirmation,
``UI hierchary dumped to: /dev/tty`` (sic: the typo is the tool's). When the
accessibility bridge has no window (mid-transition, screen off, secure window) it prints
``ERROR: null root node returned by UiTestAutomationBridge.``; on a screen that never
settles (animations, video), ``ERROR: could not get idle state.``. Those are the real
outputs quoted by tools that drive real phones (uiautomator2, appium-adb users, agent
projects; see the search notes in ``tests/device/test_perception_accessibility.py``).

Some builds refuse ``/dev/tty`` (no controlling terminal under ``adb exec-out``), so a
dump that prints no XML is retried into a file on the phone, read back with ``cat``,
then removed.

A missing tree is not an error for the agent: vision decides. So ``dump_hierarchy``
returns ``None`` when the phone cannot give one, and raises only for a lost device.

This is how an adb phone answers ``accessibility_xml()`` (``mobile_agent.device.Device``), the
device protocol's tree (``mobile_agent.operations.context.DeviceLike``); an iPhone answers
it with WDA's page source written in this format (``mobile_agent.device.ios``).

May import: ``mobile_agent.errors``, the standard library.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from mobile_agent.errors import DeviceLostError

__all__ = ["DUMP_FILE", "HierarchyDump", "ShellDevice", "dump_hierarchy", "split_dump_output"]

log = logging.getLogger(__name__)

DUMP_FILE = "/data/local/tmp/mobile_agent_window_dump.xml"
_CONFIRMATION = "UI hierchary dumped to:"
_TAIL = "</hierarchy>"


class _Printed(Protocol):
    @property
    def stdout(self) -> bytes: ...

    @property
    def stderr(self) -> bytes: ...


class ShellDevice(Protocol):
    """What a dump needs of a device: a shell (``mobile_agent.device.Device``)."""

    @property
    def serial(self) -> str: ...

    def run(self, args: list[str]) -> _Printed: ...


@dataclass(frozen=True)
class HierarchyDump:
    """What one ``uiautomator dump`` gave: the XML, or the phone's reason for none."""

    xml: str | None
    error: str | None = None


def split_dump_output(output: str) -> HierarchyDump:
    """The XML out of ``uiautomator dump /dev/tty``'s output (which adds the confirmation
    line after it, and warnings before it on some vendors' builds), or the error line."""
    start = output.find("<?xml")
    if start < 0:
        start = output.find("<hierarchy")
    end = output.rfind(_TAIL)
    if start >= 0 and end > start:
        return HierarchyDump(output[start : end + len(_TAIL)])
    errors = [ln.strip() for ln in output.splitlines() if ln.strip().upper().startswith("ERROR")]
    reason = errors[0] if errors else (output.strip().splitlines() or ["uiautomator printed nothing"])[-1]
    return HierarchyDump(None, reason[:300])


def dump_hierarchy(device: ShellDevice) -> HierarchyDump:
    """The current screen's accessibility tree (``HierarchyDump.xml``), or why there is none."""
    try:
        result = device.run(["uiautomator", "dump", "/dev/tty"])
        out = result.stdout.decode("utf-8", "replace") + "\n" + result.stderr.decode("utf-8", "replace")
        dump = split_dump_output(out)
        if dump.xml is not None or "null root node" in (dump.error or "") or "idle state" in (dump.error or ""):
            return dump
        # no XML and no known bridge error: this build may not write to /dev/tty; use a file
        result = device.run(["uiautomator", "dump", DUMP_FILE])
        said = (result.stdout + result.stderr).decode("utf-8", "replace")
        if _CONFIRMATION not in said:
            return split_dump_output(said)
        xml = device.run(["cat", DUMP_FILE]).stdout.decode("utf-8", "replace")
        device.run(["rm", "-f", DUMP_FILE])
        return split_dump_output(xml)
    except DeviceLostError:
        raise
    except Exception as exc:  # a phone without uiautomator, a shell error: vision decides
        log.info("uiautomator dump failed on %s: %s", device.serial, exc)
        return HierarchyDump(None, str(exc)[:300])
