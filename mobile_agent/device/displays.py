"""Phones with several displays (foldables, Android 14+ emulators, cars, DeX): which one
we capture and send input to.

Two id spaces meet here (AOSP ``cmds/screencap/screencap.cpp`` and
``InputShellCommand``): ``screencap -d`` takes the 64-bit *physical* id that
``dumpsys SurfaceFlinger --display-id`` lists, ``input -d`` the small *logical* id of
``dumpsys display``. ``DisplayInfo{... displayId 0 ... uniqueId "local:<physical>"}``
links the two.

Without ``-d`` on a phone with several displays, ``screencap`` writes a three-line
warning to stderr, which the ``exec:`` service merges into the image stream
(``MULTI_DISPLAY_WARNING_START`` is its first words); ``strip_text_preamble`` removes it.

May import: the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MULTI_DISPLAY_WARNING_START",
    "DisplayTarget",
    "LogicalDisplay",
    "choose_display",
    "parse_display_infos",
    "parse_surfaceflinger_ids",
    "split_text_preamble",
]

MULTI_DISPLAY_WARNING_START = b"[Warning] Multiple displays were found"

_SF_RE = re.compile(r"^Display (\d+) \(HWC display (\d+)\)", re.M)
_INFO_RE = re.compile(r"DisplayInfo\{\"([^\"]*)\", displayId (\d+)\"?,([^\n]*?)\}(?=\s|$)", re.M)
_REAL_RE = re.compile(r"\breal (\d+) x (\d+)")
_ROTATION_RE = re.compile(r"\brotation (\d)")
_STATE_RE = re.compile(r"\bstate (\w+)")
_TYPE_RE = re.compile(r"\btype (\w+)")
_UNIQUE_RE = re.compile(r"uniqueId \"([^\"]*)\"")


@dataclass(frozen=True)
class LogicalDisplay:
    """One display of ``dumpsys display`` (``DisplayInfo{...}``)."""

    display_id: int
    name: str
    unique_id: str | None
    width: int | None  # "real W x H": the current orientation
    height: int | None
    rotation: int | None
    state: str | None  # ON, OFF, DOZE, ...
    kind: str | None  # INTERNAL, EXTERNAL, VIRTUAL, OVERLAY

    @property
    def physical_id(self) -> int | None:
        if self.unique_id and self.unique_id.startswith("local:"):
            tail = self.unique_id[6:]
            return int(tail) if tail.isdigit() else None
        return None


@dataclass(frozen=True)
class DisplayTarget:
    """The display the agent works on: ``physical_id`` for ``screencap -d``,
    ``logical_id`` for ``input -d``."""

    physical_id: int
    logical_id: int | None


def parse_surfaceflinger_ids(text: str) -> list[int]:
    """Physical display ids from ``dumpsys SurfaceFlinger --display-id``, in HWC order:
    ``Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName="..."``."""
    pairs = sorted((int(hwc), int(pid)) for pid, hwc in _SF_RE.findall(text))
    return [pid for _, pid in pairs]


def parse_display_infos(text: str) -> list[LogicalDisplay]:
    """Logical displays of ``dumpsys display``; when a display is printed several times
    (base info, then the override info that carries the current rotation), the last
    one wins."""
    found: dict[int, LogicalDisplay] = {}
    for m in _INFO_RE.finditer(text):
        body = m.group(3)
        real = _REAL_RE.search(body)
        rotation = _ROTATION_RE.search(body)
        state = _STATE_RE.search(body)
        kind = _TYPE_RE.search(body)
        unique = _UNIQUE_RE.search(body)
        display = LogicalDisplay(
            display_id=int(m.group(2)),
            name=m.group(1),
            unique_id=unique.group(1) if unique else None,
            width=int(real.group(1)) if real else None,
            height=int(real.group(2)) if real else None,
            rotation=int(rotation.group(1)) if rotation else None,
            state=state.group(1) if state else None,
            kind=kind.group(1) if kind else None,
        )
        previous = found.get(display.display_id)
        if previous is not None and display.state is None and previous.state is not None:
            continue  # a shorter line says less
        found[display.display_id] = display
    return sorted(found.values(), key=lambda d: d.display_id)


def choose_display(physical_ids: list[int], displays: list[LogicalDisplay]) -> DisplayTarget | None:
    """The display to drive when there are several physical ones, else None (a phone
    with one display needs no ``-d``).

    The built-in display that is on wins (an unfolded foldable's inner screen, the
    cover screen when folded), the default display 0 first; its ``uniqueId`` names
    the physical id. Without a usable ``dumpsys display``, the first physical display
    in HWC order (what ``screencap`` itself would pick) with logical display 0.
    """
    if len(physical_ids) < 2:
        return None
    internal = [d for d in displays if d.physical_id in physical_ids and d.kind in (None, "INTERNAL")]
    on = [d for d in internal if (d.state or "ON").upper() == "ON"]
    for pool in (on, internal):
        if pool:
            best = min(pool, key=lambda d: d.display_id)
            assert best.physical_id is not None
            return DisplayTarget(physical_id=best.physical_id, logical_id=best.display_id)
    return DisplayTarget(physical_id=physical_ids[0], logical_id=0)


def split_text_preamble(data: bytes) -> tuple[list[bytes], bytes] | None:
    """Split text lines that a tool printed before a binary stream (``screencap``'s
    multi-display warning, a linker warning) from the stream.

    A raw framebuffer starts with its width as a little-endian uint32 (< 65536, so
    bytes 2-3 are NUL); a PNG with its signature. Lines are taken while the data does
    not start like either. Returns ``(lines, rest)``, or None when more data is needed
    to decide (an unfinished line, fewer than 4 bytes).
    """
    lines: list[bytes] = []
    while True:
        if len(data) < 4:
            return None
        if b"\0" in data[:4] or data.startswith(b"\x89PNG"):
            return lines, data
        end = data.find(b"\n")
        if end < 0:
            return None
        lines.append(data[: end + 1])
        data = data[end + 1 :]
