"""Video evidence: the simulated phone's `screenrecord` (AOSP's options and exit codes, a
real MP4) over the real adb server, the recorder that chains its time limit and joins the
segments, and the fallback that encodes captured frames. Durations are read with PyAV,
the libavformat that ffprobe reports from."""

from __future__ import annotations

import threading
import time

import av
import pytest

from mobile_agent.device import open_device
from mobile_agent.settings import AdbSettings
from mobile_agent.testing import video
from mobile_agent.testing.video import ScreenRecorder
from tests.video_probe import probe


def video_duration(path) -> float:
    return probe(path)[0]

pytestmark = [pytest.mark.timeout(300)]


def _device(adb_server, sim_phone):
    return open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)


def _frames(path) -> int:
    return probe(path)[1]


def test_screenrecord_answers_as_aosps_does(adb_server, sim_phone):
    device = _device(adb_server, sim_phone)
    usage = device.run(["screenrecord", "--help"])
    assert usage.exit_code == 0 and b"Usage: screenrecord [options] <filename>" in usage.stderr
    for args, code, message in [
        (["--time-limit", "181", "/sdcard/a.mp4"], 2, b"Time limit 181s outside acceptable range [1,180]"),
        (["--time-limit", "0", "/sdcard/a.mp4"], 2, b"Time limit 0s outside acceptable range [1,180]"),
        (["--size", "720", "/sdcard/a.mp4"], 2, b"Invalid size '720', must be width x height"),
        (["--bit-rate", "50", "/sdcard/a.mp4"], 2, b"Bit rate 50bps outside acceptable range [100000,200000000]"),
        ([], 2, b"Must specify output file (see --help)."),
        (["/sdcard/a.mp4", "/sdcard/b.mp4"], 2, b"Must specify output file (see --help)."),
        (["/no/such/dir/a.mp4"], 1, b"Unable to open '/no/such/dir/a.mp4': No such file or directory"),
    ]:
        result = device.run(["screenrecord", *args])
        assert (result.exit_code, message in result.stderr) == (code, True), (args, result)
    assert device.run(["pkill", "-INT", "screenrecord"]).exit_code == 1  # nothing to stop
    removed = device.run(["rm", "/sdcard/nothing.mp4"])  # toybox rm, which the recorder cleans up with
    assert (removed.exit_code, removed.stderr) == (1, b"rm: /sdcard/nothing.mp4: No such file or directory\n")
    assert device.run(["rm", "-f", "/sdcard/nothing.mp4"]).exit_code == 0


def test_screenrecord_records_until_sigint_and_writes_a_real_mp4(adb_server, sim_phone, tmp_path):
    device = _device(adb_server, sim_phone)
    finished: dict = {}

    def record() -> None:
        started = time.monotonic()
        finished["result"] = device.adbutils_device.shell2(["screenrecord", "--size", "540x1200", "/sdcard/clip.mp4"],
                                                           timeout=60)  # fmt: skip
        finished["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=record)
    thread.start()
    time.sleep(1.0)
    sim_phone.tap_element("Settings app icon")  # the phone serves other connections meanwhile
    time.sleep(1.0)
    assert device.run(["pkill", "-INT", "screenrecord"]).exit_code == 0
    thread.join(30)
    assert not thread.is_alive(), "screenrecord did not end on SIGINT"  # (its own limit is 180 s, the shell's 60 s)
    assert finished["result"].returncode == 0
    local = tmp_path / "clip.mp4"
    device.adbutils_device.sync.pull("/sdcard/clip.mp4", str(local))
    with av.open(str(local)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.name, stream.width, stream.height) == ("h264", 540, 1200)
    assert abs(video_duration(local) - finished["seconds"]) <= 0.2 * finished["seconds"]
    assert _frames(local) >= 2  # the home screen, then Settings


@pytest.mark.slow
def test_the_recorder_chains_segments_past_the_time_limit(adb_server, sim_phone, tmp_path, monkeypatch):
    monkeypatch.setattr(video, "SEGMENT_LIMIT_S", 2)  # AOSP's 180 s, shortened: three segments in 5 s
    recorder = ScreenRecorder(_device(adb_server, sim_phone), tmp_path / "video.mp4")
    started = time.monotonic()
    recorder.start()
    assert recorder.method == "screenrecord"
    time.sleep(5.0)
    out = recorder.stop()
    seconds = time.monotonic() - started
    assert out == tmp_path / "video.mp4" and len(recorder.segments) >= 3
    assert abs(video_duration(out) - seconds) <= 0.2 * seconds, (video_duration(out), seconds)
    assert _frames(out) >= 5
    names = [entry.path for entry in _device(adb_server, sim_phone).adbutils_device.sync.list("/sdcard")]
    assert names and not [n for n in names if n.startswith("mobile-agent-")]  # the segments were removed


def test_without_screenrecord_the_captured_frames_are_encoded(adb_server, sim_phone, tmp_path):
    recorder = ScreenRecorder(_device(adb_server, sim_phone), tmp_path / "video.mp4", use_screenrecord=False,
                              frame_interval_s=0.3)  # fmt: skip
    started = time.monotonic()
    recorder.start()
    assert recorder.method == "frames"
    time.sleep(2.0)
    out = recorder.stop()
    seconds = time.monotonic() - started
    assert out is not None and abs(video_duration(out) - seconds) <= 0.2 * seconds
    assert recorder.frames >= 4 and _frames(out) == recorder.frames


def test_the_frames_a_run_captured_are_in_the_fallback_video(adb_server, sim_phone, tmp_path):
    device = _device(adb_server, sim_phone)
    recorder = ScreenRecorder(device, tmp_path / "video.mp4", use_screenrecord=False, frame_interval_s=30.0)
    recorder.start()
    assert recorder.method == "frames"
    for _ in range(6):  # six quick steps, each with its screenshot, between two timed captures
        recorder.add_frame(device.screenshot().pixels)
        time.sleep(0.05)
    out = recorder.stop()
    assert out is not None and recorder.frames >= 1 + 6 + 1  # the first capture, the steps', the end
    assert _frames(out) == recorder.frames


def test_a_recorded_flow_never_shows_a_typed_secret(adb_server, sim_phone, tmp_path):
    """``--record`` with a ``{{secret:…}}``: the video is an image that leaves the run (the
    trajectory folder, the REST task's files, the JUnit attachment), so every frame of it is
    masked as the run's frames are (``agent.mask.SecretMask``). Every frame of the MP4 is read
    with the agent's own OCR: none shows the value or four characters of it in a row."""
    import json as _json

    import numpy as np
    from pydantic import SecretStr

    from mobile_agent.locate import build_locator
    from mobile_agent.testing import FlowRunner
    from mobile_agent.testing.flows import parse_flow
    from perception.text_match import fold
    from tests.agent_helpers import agent_settings

    secret = "Zanzibar7"
    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path / "runs")
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(
        update={"named_secrets": {"title": SecretStr(secret)}})})  # fmt: skip
    flow = parse_flow(
        "name: a secret on camera\nsteps:\n"
        "  - do: |\n      Open App (Notes)\n      Click icon (orange plus button, bottom right)\n"
        "      Type ({{secret:title}})\n"
        "  - assert_visible: New note\n"
    )
    result = FlowRunner(settings, _device(adb_server, sim_phone), output_dir=tmp_path / "runs", record=True).run(flow)
    assert result.passed, result.message
    assert secret in _json.dumps(sim_phone.phone.state())  # typed on the phone: there was something to hide
    assert result.video is not None
    locator = build_locator(settings.perception)
    fragments = {fold(secret)[i : i + 4] for i in range(len(secret) - 3)}
    frames = 0
    with av.open(str(result.video)) as container:
        for frame in container.decode(video=0):
            pixels = np.asarray(frame.to_image().convert("RGB").resize((1080, 2400)))
            texts = [line.text for line in locator.ocr(np.ascontiguousarray(pixels))]
            assert not [t for t in texts if any(f in fold(t).replace(" ", "") for f in fragments)], frames
            frames += 1
    assert frames >= len(result.steps)
