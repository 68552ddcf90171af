"""`screenrecord`, as AOSP's command behaves, writing a real MP4.

`screenrecord` follows AOSP's frameworks/av/cmds/screenrecord/screenrecord.cpp (main(),
usage(), runEncoder()): long options only (`--help`, `--verbose`, `--size WxH`, `--bit-rate
RATE` with an optional `M`, `--time-limit SECONDS`, `--bugreport`, and the unofficial
`--rotate`, `--output-format`, `--codec-name`, `--show-device-info`, `--show-frame-time`,
`--monotonic-time`, `--persistent-surface`), exactly one output file, and its answers:

- `--help`: the usage on stderr, exit 0;
- a bad size, bit rate (outside 0.1-200 Mbps) or time limit (outside 1-180 s), an unknown
  option, no file or two: a message on stderr, exit 2 (the messages are the tool's own);
- a file that cannot be created: `Unable to open '<file>': <reason>`, exit 1;
- then it records until the time limit or SIGINT/SIGHUP (`pkill -INT screenrecord`), finishes
  the MP4 (H.264, the display's size unless `--size`) and exits 0. SIGTERM/SIGKILL end it
  without finishing: the file stays empty, exit 143/137, as a killed process leaves it.

The recording runs outside the phone's lock (``CommandResult.pending``): the phone goes on
serving input, screencap and the `pkill` that stops it. A frame is encoded when the screen
changed, and at least 4 times a second (a real virtual display sends frames when something
is composed; here an unchanged screen still gets frames, so a recording shows every step of a
run; the last frame repeats at the end so the video lasts until the stop).

`pkill` (simphone.toybox) stops it as on a phone.

Encoding needs PyAV (FFmpeg's libraries; mobile-agent's `video` extra); without it the
command fails as on a phone whose encoder cannot be created.

May import: the standard library, numpy, `simphone.commands`, `simphone.types`; av lazily.
"""

from __future__ import annotations

import io
import re
import threading
import time
import weakref
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from simphone.commands import command, fail
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["Recording", "running"]

MAX_TIME_LIMIT_S = 180  # AOSP kMaxTimeLimitSec
MIN_BIT_RATE, MAX_BIT_RATE = 100_000, 200_000_000  # kMinBitRate, kMaxBitRate
DEFAULT_BIT_RATE = 20_000_000
VERSION = (1, 3)
_POLL_S = 0.1  # how often the screen is looked at
_MIN_FRAME_GAP_S = 0.25  # an unchanged screen still gets a frame this often (4 a second)

_USAGE = """Usage: screenrecord [options] <filename>

Android screenrecord v{major}.{minor}.  Records the device's display to a .mp4 file.

Options:
--size WIDTHxHEIGHT
    Set the video size, e.g. "1280x720".  Default is the device's main
    display resolution (if supported), 1280x720 if not.  For best results,
    use a size supported by the AVC encoder.
--bit-rate RATE
    Set the video bit rate, in bits per second.  Value may be specified as
    bits or megabits, e.g. '4000000' is equivalent to '4M'.  Default {rate}Mbps.
--bugreport
    Add additional information, such as a timestamp overlay, that is helpful
    in videos captured to illustrate bugs.
--time-limit TIME
    Set the maximum recording time, in seconds.  Default / maximum is {limit}.
--verbose
    Display interesting information on stdout.
--help
    Show this message.

Recording continues until Ctrl-C is hit or the time limit is reached.

"""
_FLAGS = {"--verbose", "--bugreport", "--rotate", "--show-device-info", "--show-frame-time", "--monotonic-time",
          "--persistent-surface"}  # fmt: skip
_VALUED = {"--size", "--bit-rate", "--time-limit", "--output-format", "--codec-name"}
_FORMATS = {"mp4", "h264", "webm", "3gpp", "frames", "raw-frames"}

# the recordings running on each phone (what `pkill` sees)
_RUNNING: weakref.WeakKeyDictionary[Any, list[Recording]] = weakref.WeakKeyDictionary()
_RUNNING_LOCK = threading.Lock()


def running(phone: Phone) -> list[Recording]:
    with _RUNNING_LOCK:
        return list(_RUNNING.get(phone, []))


def _usage() -> CommandResult:
    text = _USAGE.format(major=VERSION[0], minor=VERSION[1], rate=DEFAULT_BIT_RATE // 1_000_000, limit=MAX_TIME_LIMIT_S)
    return CommandResult(stderr=text.encode(), exit_code=0)


def _leading_int(text: str) -> int:
    """C's strtol/atoi on base 10: the leading digits (0 when none)."""
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


@command("screenrecord")
def screenrecord(phone: Phone, args: list[str]) -> CommandResult:
    size: tuple[int, int] | None = None
    time_limit = MAX_TIME_LIMIT_S
    verbose = False
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if arg == "--help":
            return _usage()
        if arg == "--":
            files += args[i + 1 :]
            break
        if not arg.startswith("--") or arg == "-":
            files.append(arg)
            i += 1
            continue
        if name in _FLAGS and not eq:
            verbose = verbose or name == "--verbose"
            i += 1
            continue
        if name not in _VALUED:
            return fail(f"screenrecord: unrecognized option '{arg}'\n", 2)
        if eq:
            value = inline
        elif i + 1 < len(args):
            value = args[i + 1]
            i += 1
        else:
            return fail(f"screenrecord: option '{name}' requires an argument\n", 2)
        i += 1
        if name == "--size":
            match = re.fullmatch(r"(\d+)x(\d+)", value)
            if match is None:
                return fail(f"Invalid size '{value}', must be width x height\n", 2)
            width, height = int(match.group(1)), int(match.group(2))
            if width == 0 or height == 0:
                return fail(f"Invalid size {width}x{height}, width and height may not be zero\n", 2)
            size = (width, height)
        elif name == "--bit-rate":
            match = re.fullmatch(r"([+-]?\d+)([mM]?)", value)
            if match is None:
                return fail(f"Unrecognized value: {value}\n", 2)
            rate = int(match.group(1)) * (1_000_000 if match.group(2) else 1)
            if not MIN_BIT_RATE <= rate <= MAX_BIT_RATE:
                return fail(f"Bit rate {rate}bps outside acceptable range [{MIN_BIT_RATE},{MAX_BIT_RATE}]\n", 2)
        elif name == "--time-limit":
            time_limit = _leading_int(value)
            if time_limit <= 0 or time_limit > MAX_TIME_LIMIT_S:
                return fail(f"Time limit {time_limit}s outside acceptable range [1,{MAX_TIME_LIMIT_S}]\n", 2)
        elif name == "--output-format" and value not in _FORMATS:
            return fail(f"Unknown format '{value}'\n", 2)
    if len(files) != 1:
        return fail("Must specify output file (see --help).\n", 2)
    path = files[0] if files[0].startswith("/") else "/" + files[0]
    try:
        if not phone.fs.exists(path):
            phone.fs.write_file(path, b"", mode=0o644)
    except FileNotFoundError:
        return fail(f"Unable to open '{files[0]}': No such file or directory\n", 1)
    except (IsADirectoryError, NotADirectoryError, ValueError) as exc:
        return fail(f"Unable to open '{files[0]}': {exc}\n", 1)
    try:
        import av  # noqa: F401  (the encoder: FFmpeg's libraries)
    except ImportError:
        return fail("ERROR: unable to create video/avc codec instance\n", 1)
    recording = Recording(phone, path, time_limit, size or (phone.width, phone.height), verbose)
    with _RUNNING_LOCK:
        _RUNNING.setdefault(phone, []).append(recording)
    started = ""
    if verbose:
        started = (f"Main display is {phone.width}x{phone.height} @60.00fps (orientation=0)\n"
                   f"Configuring recorder for {recording.size[0]}x{recording.size[1]} video/avc at "
                   f"{DEFAULT_BIT_RATE / 1e6:.2f}Mbps\n")  # fmt: skip
    return CommandResult(stdout=started.encode(), pending=recording.run)


class Recording:
    """One running screenrecord: ``run`` records until the time limit or a signal."""

    name = "screenrecord"

    def __init__(self, phone: Phone, path: str, time_limit_s: int, size: tuple[int, int], verbose: bool) -> None:
        self.phone = phone
        self.path = path
        self.time_limit_s = time_limit_s
        self.size = (max(2, size[0] // 2 * 2), max(2, size[1] // 2 * 2))  # H.264's 4:2:0 needs even sizes
        self.verbose = verbose
        self.frames = 0
        self._signal: int | None = None
        self._signalled = threading.Event()

    def signal(self, number: int) -> None:
        self._signal = number
        self._signalled.set()

    def run(self) -> CommandResult:
        import av

        buffer = io.BytesIO()
        container = av.open(buffer, mode="w", format="mp4")
        stream = container.add_stream("libx264", rate=None)
        stream.width, stream.height = self.size
        stream.pix_fmt = "yuv420p"
        stream.time_base = Fraction(1, 1000)
        stream.codec_context.time_base = Fraction(1, 1000)
        stream.options = {"preset": "ultrafast", "crf": "30"}
        started = time.monotonic()
        deadline = started + self.time_limit_s
        seen: str | None = None
        last_frame_at = -1.0
        image = None
        last_pts = -1
        try:
            while True:
                now = time.monotonic()
                key = self.phone.frame_key()
                if key != seen or now - last_frame_at >= _MIN_FRAME_GAP_S:
                    image = self.phone.screenshot()
                    seen, last_frame_at = key, now
                    last_pts = self._encode(av, container, stream, image, now - started, last_pts)
                if self._signalled.wait(max(0.0, min(_POLL_S, deadline - time.monotonic()))):
                    break
                if time.monotonic() >= deadline:
                    break
            if self._signal in (15, 9):  # killed: the muxer never writes its index
                container = None
                self.phone.fs.write_file(self.path, b"", mode=0o644)
                return CommandResult(exit_code=128 + self._signal)
            if image is not None:  # the screen as it is at the stop, so the video lasts until then
                self._encode(av, container, stream, self.phone.screenshot(), time.monotonic() - started, last_pts)
            for packet in stream.encode(None):
                container.mux(packet)
            container.close()
            container = None
            self.phone.fs.write_file(self.path, buffer.getvalue(), mode=0o644)
        finally:
            if container is not None:
                container.close()
            with _RUNNING_LOCK:
                mine = _RUNNING.get(self.phone, [])
                if self in mine:
                    mine.remove(self)
        out = "Time limit reached\nStopping encoder and muxer\n" if self.verbose and self._signal is None else ""
        if self.verbose and self._signal is not None:
            out = "Stopping encoder and muxer\n"
        return CommandResult(stdout=out.encode(), exit_code=0)

    def _encode(self, av: Any, container: Any, stream: Any, image: Any, at_s: float, last_pts: int) -> int:
        pts = max(last_pts + 1, int(round(at_s * 1000)))
        frame = av.VideoFrame.from_image(image.convert("RGB"))
        frame = frame.reformat(width=stream.width, height=stream.height, format="yuv420p")
        frame.pts, frame.time_base = pts, Fraction(1, 1000)
        for packet in stream.encode(frame):
            container.mux(packet)
        self.frames += 1
        return pts
