"""Frames the pixels cannot see: a step's capture whose app area is one colour.

Two causes (``perception.blank_screen``): the frame was caught before the app drew it
(a transition, a splash), or the app's window is FLAG_SECURE, which a real phone's
capture blacks out ("preventing it from appearing in screenshots":
``WindowManager.LayoutParams.FLAG_SECURE``; SurfaceFlinger's ``SecureLayerMode::Redact``
in AOSP frameworks/native ``libs/gui/aidl/android/gui/SecureLayerMode.aidl``).

``look_again`` captures again, a bounded number of times, while the frame stays blank;
a frame still blank is then read through the accessibility tree, which a secure window
keeps: when the tree holds texts, the screen is protected, and the model is told so in
words, with the texts it may name (operations then locate by the tree:
``mobile_agent.operations.catalog.find_text_on``).

May import: the standard library, numpy, ``perception``, ``mobile_agent`` (device, operations).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from mobile_agent.errors import DeviceLostError
from mobile_agent.operations.context import AgentDevice, ScreenshotLike
from perception.accessibility import parse_uiautomator_dump, text_lines
from perception.blank_screen import blank_app_area
from perception.errors import InvalidInputError

__all__ = ["BLANK_LOOKS", "BLANK_WAIT_S", "BlankScreen", "look_again", "tree_texts"]

log = logging.getLogger(__name__)

# captures of a blank frame before it counts as what the screen shows, and the wait before
# each: a transition is over in well under a second (Android's default animations: 300 ms)
BLANK_LOOKS = 3
BLANK_WAIT_S = 0.4
# the texts a protected screen's note lists, and how long each may be
_NOTE_TEXTS = 25
_NOTE_TEXT_CHARS = 60


@dataclass(frozen=True)
class BlankScreen:
    """A step's frame that stayed blank: what the model is told, and the texts the tree
    listed (compared after the action: the pixels of a protected screen never change)."""

    note: str
    texts: tuple[str, ...]


def look_again(
    device: AgentDevice, frame: ScreenshotLike, cancel: threading.Event | None = None
) -> tuple[ScreenshotLike, BlankScreen | None]:
    """``frame`` unless its app area is blank; then up to ``BLANK_LOOKS`` more captures
    ``BLANK_WAIT_S`` apart, and the first that is not blank. A frame still blank comes
    back with a ``BlankScreen``: what the accessibility tree shows there, or that
    nothing could be read."""
    if not blank_app_area(frame.pixels):
        return frame, None
    started = time.monotonic()
    for _ in range(BLANK_LOOKS):
        if cancel is not None and cancel.wait(BLANK_WAIT_S):
            return frame, None  # cancelled: the step loop ends the run
        if cancel is None:
            time.sleep(BLANK_WAIT_S)
        frame = device.screenshot()
        if not blank_app_area(frame.pixels):
            return frame, None
    waited = time.monotonic() - started
    texts = tree_texts(device, frame)
    log.info("the screen of %s stayed blank for %.1f s; its tree holds %d texts", device.serial, waited, len(texts))
    if texts:
        listed = ", ".join(f'"{t}"' for t in texts)
        return frame, BlankScreen(texts=texts, note=(
            "The screenshot shows one flat colour where the app should be, while the phone's accessibility tree "
            "lists content there: this app protects its screen from capture (Android's FLAG_SECURE), so you cannot "
            "see it. Its accessibility tree lists these texts, top to bottom: "
            f"{listed}. Name your target by one of them (Click text, Long press, Type into a field find it through "
            "the tree); do not guess taps by position."
        ))
    return frame, BlankScreen(texts=(), note=(
        f"The screenshot stayed blank where the app should be ({BLANK_LOOKS + 1} captures over {waited:.1f} s) and "
        "the phone's accessibility tree lists no text there: the screen is not drawn, or is protected and unreadable. "
        "Wait, go back, or reach the goal another way."
    ))


def tree_texts(device: AgentDevice, frame: ScreenshotLike) -> tuple[str, ...]:
    """The labels of the tree's nodes on the frame, top to bottom, each once (bounded)."""
    try:
        xml = device.accessibility_xml()
    except DeviceLostError:
        raise
    except Exception as exc:  # noqa: BLE001 - no tree: the note says nothing could be read
        log.info("no accessibility tree on %s: %s", device.serial, exc)
        return ()
    if xml is None:
        return ()
    try:
        nodes = parse_uiautomator_dump(xml)
    except InvalidInputError:
        return ()  # the phone answered an error (no idle state, a null root): nothing to read
    seen: list[str] = []
    for line in sorted(text_lines(nodes, (frame.width, frame.height)), key=lambda ln: (ln.box.top, ln.box.left)):
        text = " ".join(line.text.split())[:_NOTE_TEXT_CHARS]
        if text and text not in seen:
            seen.append(text)
    return tuple(seen[:_NOTE_TEXTS])
