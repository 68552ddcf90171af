"""The live view's capture loop (``server.live.LiveHub``) on its own: the work it does per frame.

Through the service, tests/service/test_server_live_fanout.py (one loop for many viewers) and
tests/service/test_server_tenancy.py (a frame taken as its task ended never goes out)."""

from __future__ import annotations

import asyncio

from server.live import LiveHub


def test_the_loop_reads_the_tasks_status_once_per_frame_and_stops_when_it_ends() -> None:
    """Every tick of every watched phone reads its task from the store: once, after the capture
    (a frame counts only if its task still ran once it was taken), not also before it."""
    reads: list[int] = []
    shots: list[int] = []

    def capture() -> bytes:
        shots.append(len(shots) + 1)
        return f"frame {len(shots)}".encode()

    def still_live() -> bool:
        reads.append(len(shots))
        return len(shots) < 5  # the task ends while the fifth frame is taken

    async def watch() -> list[bytes]:
        hub = LiveHub(fps=200)
        viewer = hub.join("phone-1", 1, "alice", capture, still_live)
        return [frame async for frame in viewer.frames(200, 5.0)]

    got = asyncio.run(watch())
    assert len(shots) == 5
    assert reads == [1, 2, 3, 4, 5], reads  # one read per capture, each after it
    assert b"frame 5" not in got and got and set(got) <= {b"frame 1", b"frame 2", b"frame 3", b"frame 4"}


def test_a_phone_that_stops_giving_frames_is_said_once_at_the_default_level(caplog) -> None:
    """A view whose phone stops answering streamed nothing with no log line at the default
    level: now the first failure is a warning naming the task and phone, the repeats are
    quiet, and frames coming back are said too."""
    import logging

    shots: list[int] = []

    def capture() -> bytes:
        shots.append(len(shots) + 1)
        if 2 <= len(shots) <= 6:
            raise OSError("device phone-1 went away")
        return f"frame {len(shots)}".encode()

    async def watch() -> list[bytes]:
        hub = LiveHub(fps=200)
        viewer = hub.join("phone-1", 7, "alice", capture, lambda: len(shots) < 9)
        return [frame async for frame in viewer.frames(200, 5.0)]

    with caplog.at_level(logging.INFO, logger="server.live"):
        got = asyncio.run(watch())
    assert got and b"frame 1" in got
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "task 7" in warnings[0] and "phone-1 went away" in warnings[0], warnings
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO] == [
        "live view of task 7: frames from phone-1 again"]
