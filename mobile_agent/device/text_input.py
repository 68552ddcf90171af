"""How text reaches a phone exactly.

Printable ASCII goes through ``input text``: the argument passes the device's
``/system/bin/sh`` (so it is ``shlex.quote``-d: nothing in it is ever interpreted), then
Android's ``input`` turns ``%s`` into a space. Spaces are therefore sent as ``%s``, and
a literal ``%`` directly followed by a literal ``s`` cannot be sent in one call: the text
is split there into several ``input text`` calls. Anything else (non-ASCII, control
characters) goes through ADB Keyboard's base64 broadcast.

May import: the standard library only.
"""

from __future__ import annotations

import base64
import shlex

__all__ = [
    "ADB_KEYBOARD_IME",
    "ADB_KEYBOARD_PACKAGE",
    "adb_keyboard_broadcast",
    "input_text_commands",
    "is_plain_ascii",
]

ADB_KEYBOARD_PACKAGE = "com.android.adbkeyboard"
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_CLEAR = "ADB_CLEAR_TEXT"  # the actions AdbIME.java registers
ADB_KEYBOARD_HINT = (
    "install ADB Keyboard: download the APK from https://github.com/senzhk/ADBKeyBoard/releases "
    "and run `adb install ADBKeyboard.apk`"
)
# Android's input text is slow on long arguments and some shells cap a line; keep
# each call modest.
_MAX_SEGMENT = 200


def is_plain_ascii(text: str) -> bool:
    """True when ``input text`` can type ``text`` (printable ASCII only)."""
    return all(0x20 <= ord(ch) < 0x7F for ch in text)


def _encode_segment(segment: str) -> str:
    return segment.replace(" ", "%s")


def input_text_segments(text: str) -> list[str]:
    """``text`` split and encoded into ``input text`` arguments (before shell quoting).

    Splits between a literal ``%`` and a following literal ``s`` (which ``input`` would
    read as a space), and every ``_MAX_SEGMENT`` characters.
    """
    if not is_plain_ascii(text):
        raise ValueError("input text carries printable ASCII only")
    pieces: list[str] = []
    start = 0
    for i in range(1, len(text) + 1):
        boundary = i == len(text) or (text[i - 1] == "%" and text[i] == "s") or i - start >= _MAX_SEGMENT
        if boundary:
            pieces.append(text[start:i])
            start = i
    return [_encode_segment(p) for p in pieces if p]


def decode_input_text(argument: str) -> str:
    """What Android's ``input text`` types for ``argument`` (its ``%s`` rule).

    Mirrors ``InputShellCommand.sendText``: a ``%`` arms an escape, and an ``s`` right
    after an armed ``%`` becomes a space (the ``%`` is removed).
    """
    out: list[str] = []
    escape = False
    for ch in argument:
        if escape:
            escape = False
            if ch == "s":
                out[-1] = " "
                continue
        out.append(ch)
        if ch == "%":
            escape = True
    return "".join(out)


def input_text_commands(text: str) -> list[list[str]]:
    """Argument lists (``["input", "text", ARG]``) typing ``text`` exactly."""
    return [["input", "text", seg] for seg in input_text_segments(text)]


def adb_keyboard_broadcast(text: str) -> list[str]:
    """The ``am broadcast`` argument list that makes ADB Keyboard type ``text``."""
    b64 = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", b64]


def shell_line(argv: list[str]) -> str:
    """One shell command line, every argument quoted (never interpreted by sh)."""
    return " ".join(shlex.quote(str(a)) for a in argv)
