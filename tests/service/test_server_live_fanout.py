"""The live view's fan-out (``server.live``), through real uvicorn, the adb server and a simulated
phone: many viewers of one phone share one capture loop (the phone is captured at
``server.live_fps`` whatever their number), each gets the frames; the viewers are capped per
phone and per token with a 429 naming the limit; the loop ends with its last viewer."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tests.server_fixtures import live_frames

LONG = "\n".join(["Home", "Wait (0.5)"] * 30)  # ~15 s on the phone


def _frames(url: str, task_id: int, headers: dict[str, str], n: int, got: list[int], fps: float = 10) -> None:
    """Read ``n`` JPEG frames of the task's live view; append how many came."""
    _, frames = live_frames(url, task_id, headers, n, fps)
    assert all(frame[:2] == b"\xff\xd8" for frame in frames)  # JPEGs
    got.append(len(frames))


def _running(live: Any, script: str, headers: dict[str, str] | None = None) -> int:
    created = live.client.post("/v1/tasks", json={"script": script}, headers=headers or {})
    assert created.status_code == 202, created.text
    task_id: int = created.json()["id"]
    live.wait_task(task_id, statuses={"running"}, timeout=30)
    return task_id


def test_ten_viewers_share_one_capture_loop(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.live_fps": 4.0})
    task_id = _running(live, LONG)
    hub = live.state.live
    got: list[int] = []
    threads = [threading.Thread(target=_frames, args=(live.url, task_id, {}, 8, got)) for _ in range(10)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    assert hub.stats()["loops"] == 1 and hub.stats()["viewers"] == 10, hub.stats()
    metrics = live.client.get("/metrics").text.splitlines()
    assert "mobile_agent_live_viewers 10" in metrics and "mobile_agent_live_capture_loops 1" in metrics, [
        m for m in metrics if "live" in m]
    for thread in threads:
        thread.join(60)
    elapsed = time.monotonic() - started
    assert got == [8] * 10
    captures = hub.stats()["captures"]
    # 8 frames each at 4 a second: ~2 s of captures for all ten, not ten times as many
    assert captures <= elapsed * 4 + 3, (captures, elapsed)
    deadline = time.monotonic() + 5
    while hub.stats()["loops"]:  # the last viewer gone, the loop ends
        assert time.monotonic() < deadline, hub.stats()
        time.sleep(0.1)
    live.client.post(f"/v1/tasks/{task_id}/cancel")


def test_viewers_are_capped_per_phone_and_per_token(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"server.live_viewers_per_phone": 3, "server.live_viewers_per_token": 2,
                                "server.api_token": "main-token", "server.tokens": {"alice": "alice-token"}})
    alice = {"Authorization": "Bearer alice-token"}
    main = {"Authorization": "Bearer main-token"}
    task_id = _running(live, LONG)
    opened: list[httpx.Response] = []
    clients = [httpx.Client(base_url=live.url, timeout=30) for _ in range(4)]
    try:
        def watch(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
            return client.send(client.build_request("GET", f"/v1/tasks/{task_id}/live", headers=headers), stream=True)

        for client in clients[:2]:
            opened.append(watch(client, alice))
            assert opened[-1].status_code == 200
        third = live.client.get(f"/v1/tasks/{task_id}/live", headers=alice)
        assert third.status_code == 429 and "server.live_viewers_per_token" in third.text, third.text
        assert "'alice' has 2 live views" in third.text
        opened.append(watch(clients[2], main))
        assert opened[-1].status_code == 200  # another token's viewer: the phone's third
        fourth = live.client.get(f"/v1/tasks/{task_id}/live", headers=main)
        assert fourth.status_code == 429 and "server.live_viewers_per_phone" in fourth.text, fourth.text
        opened.pop(0).close()  # one of alice's ends: she may watch again
        deadline = time.monotonic() + 10
        while True:
            again = watch(clients[3], alice)
            if again.status_code == 200:
                opened.append(again)
                break
            again.close()
            assert time.monotonic() < deadline, again.status_code
            time.sleep(0.2)
    finally:
        for response in opened:
            response.close()
        for client in clients:
            client.close()
    live.client.post(f"/v1/tasks/{task_id}/cancel")
