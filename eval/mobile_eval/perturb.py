"""Perturbed starts: the phone a task meets the second time is not the one it was
recorded on (the plan cache's perturbed repeats: ``benchmarks/bench_replay.py
--perturbed``, ``tests/device/test_replay_perturbed.py``).

Each perturbation is made after the task's reset the way a person or a test harness
would make it on a real phone, over adb only:

- ``scrolled``: the Settings list left scrolled down by about two rows: the app started
  (``am start -n com.android.settings/.Settings``), swiped (``input swipe``), HOME; its
  task keeps the scroll, so opening Settings again shows the rows moved up.
- ``extra_note``: one more note in Notes than when the plan was recorded, written
  through the Notes UI as UI automation does it (``uiautomator dump`` finds the new-note
  button; ``input tap``, ``input text``, ``input keyevent BACK`` twice, HOME).
- ``location_dialog``: Google Maps' location permission revoked (``pm revoke``): Maps
  asks for it when it opens, the system's permission dialog over it. The reference
  solution gains the answer to that dialog after opening Maps.
- ``elsewhere``: the task starts in Chrome instead of the home screen.

May import: the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PERTURBATIONS", "Perturbation", "Shell"]

Shell = Callable[[list[str]], str]  # one adb shell command as an argument list -> its output

_MAPS = "com.google.android.apps.maps"
_BOUNDS = re.compile(r'bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"')


@dataclass(frozen=True)
class Perturbation:
    name: str
    description: str
    apps: tuple[str, ...]  # the Mobile-Eval apps whose tasks it applies to
    apply: Callable[[Shell], None]
    after_open: str | None = None  # a step the reference needs right after "Open App", if any

    def reference(self, lines: list[str]) -> list[str]:
        """The task's reference solution on the perturbed phone."""
        if self.after_open is None or not lines or not lines[0].startswith("Open App"):
            return list(lines)
        return [lines[0], self.after_open, *lines[1:]]


def _scroll_settings(shell: Shell) -> None:
    shell(["am", "start", "-n", "com.android.settings/.Settings"])
    shell(["input", "swipe", "540", "1500", "540", "1150", "400"])
    shell(["input", "keyevent", "KEYCODE_HOME"])


def _center_of(dump: str, description: str) -> tuple[int, int]:
    for node in re.findall(r"<node [^>]*>", dump):
        if description in node:
            found = _BOUNDS.search(node)
            if found:
                left, top, right, bottom = (int(v) for v in found.groups())
                return (left + right) // 2, (top + bottom) // 2
    raise RuntimeError(f"no element {description!r} in the UI dump")


def _add_note(shell: Shell) -> None:
    shell(["am", "start", "-n", "com.google.android.keep/.activities.BrowseActivity"])
    x, y = _center_of(shell(["uiautomator", "dump", "/dev/tty"]), "new note")
    shell(["input", "tap", str(x), str(y)])
    shell(["input", "text", "Buy%smilk"])  # input text's %s is a space
    shell(["input", "keyevent", "KEYCODE_BACK"])  # hides the keyboard
    shell(["input", "keyevent", "KEYCODE_BACK"])  # saves the note, as Keep does
    shell(["input", "keyevent", "KEYCODE_HOME"])


def _revoke_location(shell: Shell) -> None:
    shell(["pm", "revoke", _MAPS, "android.permission.ACCESS_FINE_LOCATION"])
    shell(["pm", "revoke", _MAPS, "android.permission.ACCESS_COARSE_LOCATION"])


def _start_in_chrome(shell: Shell) -> None:
    shell(["am", "start", "-n", "com.android.chrome/com.google.android.apps.chrome.Main"])


PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation("scrolled", "the Settings list scrolled down by two rows", ("Settings",), _scroll_settings),
        Perturbation("extra_note", "one more note in Notes than when recorded", ("Notes",), _add_note),
        Perturbation("location_dialog", "Maps' location permission revoked: the system dialog shows",
                     ("Google Maps",), _revoke_location, after_open="Click text (While using the app)"),
        Perturbation("elsewhere", "the task starts in Chrome, not on the home screen",
                     ("Amazon Music", "Gmail"), _start_in_chrome),
    )
}
