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
