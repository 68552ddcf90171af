"""Video evidence of a test: the phone's own ``screenrecord``, or the captured frames encoded.

``ScreenRecorder(device, out).start()`` … ``stop() -> Path | None``:

- On a phone (``mobile_agent.device.Device``) with ``screenrecord``: AOSP's command
  (frameworks/av/cmds/screenrecord/screenrecord.cpp) records to a file on the phone until
  its ``--time-limit`` (at most 180 s) or until it gets SIGINT, then finishes the MP4.
  So a background thread runs segments of ``--time-limit 180`` one after the other (the
  3-minute limit chained), ``stop`` sends ``pkill -INT screenrecord``, waits for the
  segment to end, pulls every segment over sync, joins them into one MP4 (PyAV remux, no
  re-encoding) and removes them from the phone.
- Where ``screenrecord`` is missing or fails at once (an emulator image without it, a
  phone that refuses, another kind of ``AgentDevice``): a background thread captures
  frames and encodes them as they come (H.264 in MP4 with PyAV, each frame at the time it
  was captured, so the video lasts as long as the run); the last frame is captured at
  ``stop``.

A recording with secrets (``mask``: the settings' ``agent.mask.SecretMask``) is made of captured
frames only, each masked as a run's frames are before it is encoded (the phone's own file could
not be): the video leaves the run like its screenshots do (the report, the REST task's files,
the JUnit attachment). It has fewer frames: each is read (OCR, a dump) first.

PyAV is the ``video`` extra (``pip install 'mobile-agent[video]'``); without it a recording
is refused with that hint.

May import: the standard library, numpy, ``mobile_agent`` (device, errors, agent.mask), av (lazily).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mobile_agent.errors import ConfigError, MobileAgentError
from mobile_agent.operations.context import AgentDevice

if TYPE_CHECKING:
    from mobile_agent.agent.mask import SecretMask

__all__ = ["ScreenRecorder", "encode_frames_available", "join_mp4", "video_duration"]

log = logging.getLogger(__name__)

SEGMENT_LIMIT_S = 180  # screenrecord's own maximum --time-limit (AOSP: kMaxTimeLimitSec)
FRAME_INTERVAL_S = 0.4  # the fallback's capture period
_FAILED_AT_ONCE_S = 1.0  # a screenrecord that ends this fast, not by our stop, did not record
_REMOTE_DIR = "/sdcard"
_MAX_SIDE = 1280  # the fallback's encoded long side (a phone frame halved, even sizes)


def _av() -> Any:
    try:
        import av
    except ImportError as exc:
        raise ConfigError("recording a video needs PyAV: pip install 'mobile-agent[video]'") from exc
    return av


def encode_frames_available() -> bool:
    try:
        _av()
    except ConfigError:
        return False
    return True


def video_duration(path: Path) -> float:
    """Seconds of the first video stream of ``path`` (what ffprobe's format duration says)."""
    av = _av()
    with av.open(str(path)) as container:
        if container.duration is not None:
            return float(container.duration) / 1_000_000  # AV_TIME_BASE
        stream = container.streams.video[0]
        return float(stream.duration * stream.time_base) if stream.duration else 0.0


class ScreenRecorder:
    """Records ``device``'s screen from ``start`` to ``stop`` into ``out`` (an MP4)."""

    def __init__(self, device: AgentDevice, out: Path, *, use_screenrecord: bool = True,
                 frame_interval_s: float = FRAME_INTERVAL_S, mask: SecretMask | None = None) -> None:  # fmt: skip
        self.device = device
        self.out = Path(out)
        self.frame_interval_s = frame_interval_s
        self.mask = mask if mask is not None and mask.active else None  # every frame masked before it is encoded
        use_screenrecord = use_screenrecord and self.mask is None
        self.method: str | None = None  # "screenrecord" or "frames", once started
        self.segments: list[str] = []  # remote files of screenrecord's segments
        self._use_screenrecord = use_screenrecord
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: str | None = None
        self._encoder: _FrameEncoder | None = None
        self.frames = 0

    def start(self) -> None:
        _av()  # refuse at once, not at the end of the run
        self.out.parent.mkdir(parents=True, exist_ok=True)
        if self.mask is not None and not self.mask.armed:
            self.mask.arm(self.device, None, 0)  # a secret may be typed at any moment of the recording
        from mobile_agent.device import Device

        if self._use_screenrecord and isinstance(self.device, Device) and self._has_screenrecord(self.device):
            self.method = "screenrecord"
            self._thread = threading.Thread(target=self._record_segments, args=(self.device,),
                                            name="screenrecord", daemon=True)  # fmt: skip
        else:
            self._start_frames()
            return
        self._thread.start()

    def stop(self) -> Path | None:
        """Stop, finish the MP4 and answer its path (None when nothing could be recorded)."""
        self._stop.set()
        if self.method == "screenrecord":
            from mobile_agent.device import Device

            assert isinstance(self.device, Device)
            try:
                self.device.run(["pkill", "-INT", "screenrecord"])
            except MobileAgentError as exc:
                log.warning("could not stop screenrecord: %s", exc.message)
            if self._thread is not None:
                self._thread.join(timeout=30)
            if self.method == "screenrecord":  # it did not fall back to frames meanwhile
                return self._collect(self.device)
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._encoder is not None:
            try:
                self._encoder.add(self._masked(self.device.screenshot().pixels), time.monotonic())  # the end state
            except MobileAgentError:
                pass
            self._encoder.close()
            self.frames = self._encoder.frames
            return self.out if self._encoder.frames else None
        return None

    def add_frame(self, pixels: np.ndarray) -> None:
        """A frame the run captured anyway (a step's screenshot), encoded at this moment when
        recording by frames: every step is in the video however short it was."""
        if self.method == "frames" and self._encoder is not None and not self._stop.is_set():
            self._encoder.add(self._masked(pixels), time.monotonic())

    def _masked(self, pixels: np.ndarray) -> np.ndarray:
        return self.mask.masked(pixels, self.device) if self.mask is not None else pixels

    # -- screenrecord on the phone ------------------------------------------------------

    @staticmethod
    def _has_screenrecord(device: Any) -> bool:
        try:
            result = device.run(["screenrecord", "--help"])
        except MobileAgentError:
            return False
        # AOSP prints its usage and exits 0 for --help; a shell without it answers 127 "not found"
        return result.exit_code in (0, None) and b"not found" not in result.stderr + result.stdout

    def _record_segments(self, device: Any) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        while not self._stop.is_set():
            remote = f"{_REMOTE_DIR}/mobile-agent-{stamp}-{len(self.segments) + 1:03d}.mp4"
            self.segments.append(remote)
            began = time.monotonic()
            try:
                reply = device.adbutils_device.shell2(
                    ["screenrecord", "--time-limit", str(SEGMENT_LIMIT_S), remote], timeout=SEGMENT_LIMIT_S + 30
                )
                code, output = reply.returncode, reply.output
            except Exception as exc:  # adbutils' errors: the phone went away, a timeout
                code, output = -1, str(exc)
            if code != 0 and time.monotonic() - began < _FAILED_AT_ONCE_S and not self._stop.is_set():
                log.warning("screenrecord failed at once (%s): %s; encoding captured frames instead", code, output[:200])
                self.segments.pop()
                self._start_frames()
                return

    def _collect(self, device: Any) -> Path | None:
        folder = Path(tempfile.mkdtemp(prefix="screenrecord-"))
        try:
            local = []
            for remote in self.segments:
                path = folder / Path(remote).name
                try:
                    device.adbutils_device.sync.pull(remote, str(path))
                except Exception as exc:
                    log.warning("could not pull %s: %s", remote, exc)
                    continue
                if path.stat().st_size:
                    local.append(path)
                device.run(["rm", "-f", remote])
            if not local:
                return None
            if len(local) == 1:
                shutil.move(str(local[0]), self.out)
            else:
                join_mp4(local, self.out)
            return self.out
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    # -- the fallback: frames ---------------------------------------------------------------

    def _start_frames(self) -> None:
        self.method = "frames"
        self._encoder = _FrameEncoder(self.out)
        self._thread = threading.Thread(target=self._capture_frames, name="frame-recorder", daemon=True)
        self._thread.start()

    def _capture_frames(self) -> None:
        assert self._encoder is not None
        while True:
            began = time.monotonic()
            try:
                self._encoder.add(self._masked(self.device.screenshot().pixels), began)
            except MobileAgentError as exc:  # the phone is gone: the video ends with the run's last frame
                log.warning("frame capture stopped: %s", exc.message)
                return
            if self._stop.wait(max(0.0, self.frame_interval_s - (time.monotonic() - began))):
                return


class _FrameEncoder:
    """Frames in, H.264 MP4 out, each frame at its capture time (millisecond time base)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.frames = 0
        self._container: Any = None
        self._stream: Any = None
        self._t0: float | None = None
        self._last_pts = -1
        self._lock = threading.Lock()

    def add(self, pixels: np.ndarray, at: float) -> None:
        av = _av()
        with self._lock:
            if self._container is None:
                self._open(av, pixels)
                self._t0 = at
            assert self._t0 is not None
            pts = int(round((at - self._t0) * 1000))
            if pts <= self._last_pts:
                pts = self._last_pts + 1
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels[..., :3]), format="rgb24")
            frame = frame.reformat(width=self._stream.width, height=self._stream.height, format="yuv420p")
            frame.pts = pts
            frame.time_base = Fraction(1, 1000)
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
            self._last_pts = pts
            self.frames += 1

    def _open(self, av: Any, pixels: np.ndarray) -> None:
        height, width = pixels.shape[:2]
        scale = min(1.0, _MAX_SIDE / max(height, width))
        self._container = av.open(str(self.out), mode="w")
        stream = self._container.add_stream("libx264", rate=None)
        stream.width = max(2, int(width * scale) // 2 * 2)
        stream.height = max(2, int(height * scale) // 2 * 2)
        stream.pix_fmt = "yuv420p"
        stream.time_base = Fraction(1, 1000)
        stream.codec_context.time_base = Fraction(1, 1000)
        stream.options = {"preset": "veryfast", "crf": "28"}
        self._stream = stream

    def close(self) -> None:
        with self._lock:
            if self._container is None:
                return
            for packet in self._stream.encode(None):
                self._container.mux(packet)
            self._container.close()
            self._container = None


def join_mp4(parts: list[Path], out: Path) -> None:
    """``parts`` (MP4s of one stream each, as screenrecord writes them) one after the
    other in ``out``, remuxed: packets copied, their times shifted, nothing re-encoded."""
    av = _av()
    with av.open(str(out), mode="w") as target:
        stream_out = None
        offset = 0
        for part in parts:
            with av.open(str(part)) as source:
                stream_in = source.streams.video[0]
                if stream_out is None:
                    stream_out = target.add_stream_from_template(stream_in)
                last = offset
                for packet in source.demux(stream_in):
                    if packet.dts is None:
                        continue
                    packet.dts += offset
                    if packet.pts is not None:
                        packet.pts += offset
                    last = max(last, (packet.pts or packet.dts) + (packet.duration or 0))
                    packet.stream = stream_out
                    target.mux(packet)
                offset = last
