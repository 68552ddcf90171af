"""Load and faults: 4 phones, 20 tasks at once, 50 clients polling and streaming; a phone
killed mid-task. Real agent, real adb server, scripted LLM over HTTP, real uvicorn."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import defaultdict

import httpx
import pytest

from tests.server_fixtures import TaggedPlanner, waits

pytestmark = pytest.mark.slow

FINAL = {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}


def read_stream(url: str, task_id: int, deadline: float) -> list[tuple[int, str, dict]]:
    """(id, kind, data) of every event of the task, from the first to ``end``."""
    events: list[tuple[int, str, dict]] = []
    block: dict[str, str] = {}
    timeout = httpx.Timeout(10.0, read=max(1.0, deadline - time.monotonic()))
    with httpx.Client(base_url=url, timeout=timeout) as client:
        with client.stream("GET", f"/v1/tasks/{task_id}/events") as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line == "":
                    if block.get("event") == "end":
                        return events
                    if "id" in block:
                        events.append((int(block["id"]), block["event"], json.loads(block["data"])["data"]))
                    block = {}
                elif not line.startswith(":"):
                    key, _, value = line.partition(": ")
                    block[key] = value
    raise AssertionError(f"stream of task {task_id} ended without an end event")


def test_twenty_tasks_on_four_phones_with_fifty_clients(service, sim_phones) -> None:
    phones = sim_phones(4, width=540, height=1200)
    planner = TaggedPlanner(default_plan=waits(2))
    live = service(phones, planner=planner)
    deadline = time.monotonic() + 150

    # 20 submissions at once, from 20 threads
    created: list[int] = []
    lock = threading.Lock()

    def submit(i: int) -> None:
        with httpx.Client(base_url=live.url, timeout=30) as client:
            answer = client.post("/v1/tasks", json={"instruction": f"[t-load{i}] load task {i}", "max_steps": 4})
            assert answer.status_code == 202
            with lock:
                created.append(answer.json()["id"])

    submitters = [threading.Thread(target=submit, args=(i,)) for i in range(20)]
    for thread in submitters:
        thread.start()
    for thread in submitters:
        thread.join(60)
    assert len(created) == 20

    # 25 streaming clients (each follows one task from its first event) and 25 pollers
    streams: dict[int, list[list[tuple[int, str, dict]]]] = defaultdict(list)
    failures: list[BaseException] = []
    polls = [0]

    def streamer(task_id: int) -> None:
        try:
            got = read_stream(live.url, task_id, deadline)
            with lock:
                streams[task_id].append(got)
        except BaseException as exc:  # reported below
            failures.append(exc)

    def poller(seed: int) -> None:
        rng = random.Random(seed)
        try:
            with httpx.Client(base_url=live.url, timeout=30) as client:
                while time.monotonic() < deadline:
                    ids = created if rng.random() < 0.8 else [created[0]]
                    task = client.get(f"/v1/tasks/{rng.choice(ids)}")
                    assert task.status_code == 200
                    with lock:
                        polls[0] += 1
                    listing = client.get("/v1/tasks", params={"status": "queued", "limit": 5})
                    assert listing.status_code == 200
                    if client.get("/v1/tasks", params={"limit": 1, "status": "running"}).json()["count"] == 0 and all(
                        client.get(f"/v1/tasks/{t}").json()["status"] in FINAL for t in created
                    ):
                        return
                    time.sleep(0.05)
        except BaseException as exc:
            failures.append(exc)

    clients = [threading.Thread(target=streamer, args=(created[i % 20],)) for i in range(25)]
    clients += [threading.Thread(target=poller, args=(i,)) for i in range(25)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(max(1.0, deadline - time.monotonic() + 10))
    assert not failures, failures[:3]
    assert all(not t.is_alive() for t in clients)

    tasks = [live.client.get(f"/v1/tasks/{t}").json() for t in created]
    assert all(t["status"] == "completed" for t in tasks), [(t["id"], t["status"], t["error"]) for t in tasks]
    assert {t["device"] for t in tasks} <= {p.serial for p in phones}
    assert len({t["device"] for t in tasks}) == 4  # the queue used every phone

    # No phone ran two tasks at once.
    by_device: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for t in tasks:
        by_device[t["device"]].append((t["started_at"], t["finished_at"]))
    for spans in by_device.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert start >= end

    # No event lost: every live stream saw exactly what the store holds, in order.
    for task_id in created:
        replay = read_stream(live.url, task_id, time.monotonic() + 30)
        ids = [e[0] for e in replay]
        assert ids == sorted(ids)
        kinds = [e[1] for e in replay]
        assert kinds.count("step_finished") == 3 and kinds.count("run_finished") == 1
        assert [e[2]["status"] for e in replay if e[1] == "status"] == ["queued", "running", "completed"]
        for seen in streams.get(task_id, []):
            assert seen == replay
    assert sum(len(v) for v in streams.values()) == 25
    assert polls[0] > 50
    # every phone is free again
    devices = live.client.get("/v1/devices").json()["data"]
    assert all(not d["busy"] and d["state"] == "device" for d in devices)


def test_a_phone_killed_mid_task_ends_that_task_device_lost(service, sim_phones) -> None:
    phones = sorted(sim_phones(3, width=540, height=1200), key=lambda p: p.serial)
    doomed, *others = phones
    planner = TaggedPlanner(
        plans={"t-doomed": waits(10), "t-other0": waits(4), "t-other1": waits(4)},
        delay_s={"t-doomed": 0.5, "t-other0": 0.3, "t-other1": 0.3},
    )
    live = service(phones, planner=planner)
    victim = live.submit("[t-doomed] runs on the phone that dies", device=doomed.serial, max_steps=10)
    rest = [live.submit(f"[t-other{i}] carries on", device=p.serial, max_steps=6) for i, p in enumerate(others)]
    deadline = time.monotonic() + 30
    while live.client.get(f"/v1/tasks/{victim['id']}").json()["steps"] < 1:
        assert time.monotonic() < deadline, "the doomed task never made a step"
        time.sleep(0.05)
    doomed.kill()

    lost = live.wait_task(victim["id"], timeout=60)
    assert lost["status"] == "error"
    assert lost["error"]["reason"] == "device lost"
    assert lost["error"]["type"] in {"DeviceLostError", "DeviceOfflineError", "DeviceNotFoundError", "ScreenshotError"}
    assert lost["steps"] >= 1
    for task in rest:
        assert live.wait_task(task["id"], timeout=60)["status"] == "completed"

    # the dead phone is out of rotation; new work goes to the live ones
    states = {d["serial"]: d for d in live.client.get("/v1/devices", params={"refresh": True}).json()["data"]}
    assert states[doomed.serial]["state"] in {"lost", "offline", "gone"}
    later = [live.submit(f"[t-later{i}] after the loss", max_steps=3) for i in range(3)]
    for task in later:
        done = live.wait_task(task["id"], timeout=60)
        assert done["status"] == "completed" and done["device"] != doomed.serial
