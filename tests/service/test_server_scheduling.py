"""Scheduling with device leases, and cancel, with the real agent on simulated phones."""

from __future__ import annotations

import time

from tests.server_fixtures import TaggedPlanner, waits


def _wait_status(live, task_id: int, status: str, timeout: float = 30.0) -> dict:
    return live.wait_task(task_id, statuses={status}, timeout=timeout)


def test_tasks_for_a_busy_phone_wait_and_any_takes_a_free_one(service, sim_phones) -> None:
    phones = sorted(sim_phones(2, width=540, height=1200), key=lambda p: p.serial)
    planner = TaggedPlanner(
        plans={"t-slow": waits(3)},
        delay_s={"t-slow": 0.4},
    )
    live = service(phones, planner=planner)
    first = live.submit("[t-slow] hold the first phone", device=phones[0].serial, max_steps=6)
    _wait_status(live, first["id"], "running")
    second = live.submit("[t-after] same phone, later", device=phones[0].serial, max_steps=3)
    anyone = live.submit("[t-any] any phone", max_steps=3)

    done_any = live.wait_task(anyone["id"])
    assert done_any["status"] == "completed" and done_any["device"] == phones[1].serial
    assert live.client.get(f"/v1/tasks/{second['id']}").json()["status"] == "queued"
    busy = {d["serial"]: d for d in live.client.get("/v1/devices").json()["data"]}
    assert busy[phones[0].serial]["busy"] and busy[phones[0].serial]["current_task"] == first["id"]

    done_first = live.wait_task(first["id"])
    done_second = live.wait_task(second["id"])
    assert done_first["status"] == done_second["status"] == "completed"
    assert done_second["device"] == phones[0].serial
    assert done_second["started_at"] >= done_first["finished_at"]


def test_cancel_a_queued_task_and_a_running_one(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-long": waits(20)}, delay_s={"t-long": 0.3})
    live = service([phone], planner=planner)
    running = live.submit("[t-long] a long task", max_steps=20)
    _wait_status(live, running["id"], "running")
    queued = live.submit("[t-never] never runs", max_steps=2)

    cancelled = live.client.post(f"/v1/tasks/{queued['id']}/cancel")
    assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["device"] is None and cancelled.json()["started_at"] is None
    metrics = live.client.get("/metrics").text
    assert 'mobile_agent_tasks_finished_total{status="cancelled"} 1' in metrics
    assert "mobile_agent_task_run_seconds_count 0" in metrics  # it never ran: no 0 s run counted

    deadline = time.monotonic() + 20
    while live.client.get(f"/v1/tasks/{running['id']}").json()["steps"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert live.client.post(f"/v1/tasks/{running['id']}/cancel").status_code == 202
    stopped = live.wait_task(running["id"])
    assert stopped["status"] == "cancelled"
    assert 1 <= stopped["steps"] < 20
    # the trajectory stays: its steps are downloadable
    assert live.client.get(f"/v1/tasks/{running['id']}/trajectory.zip").status_code == 200
    assert live.client.get(f"/v1/tasks/{running['id']}/steps/1/screenshot").status_code == 200

    again = live.client.post(f"/v1/tasks/{running['id']}/cancel")
    assert again.status_code == 409
    assert "t-never" not in planner.calls
    # the phone is free again and takes the next task
    after = live.wait_task(live.submit("[t-next] next", max_steps=2)["id"])
    assert after["status"] == "completed" and after["device"] == phone.serial


def test_model_overrides_reach_the_planner(service, sim_phones, llm_server) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    task = live.wait_task(
        live.submit("[t-model] with overrides", max_steps=2, model="gpt-4o-mini", temperature=0.7)["id"]
    )
    assert task["status"] == "completed"
    assert task["options"] == {"model": "gpt-4o-mini", "temperature": 0.7, "max_steps": 2, "owner": "anonymous"}
    sent = [r.json for r in llm_server.chat_requests]
    assert sent and all(body["model"] == "gpt-4o-mini" and body["temperature"] == 0.7 for body in sent)
    assert task["cost_usd"] < 0.001  # priced as gpt-4o-mini


def test_two_instances_share_one_database(service, sim_phones) -> None:
    phone_a, phone_b = sim_phones(2, width=540, height=1200)
    planner = TaggedPlanner(
        plans={"t-long0": waits(30), "t-long1": waits(30)},
        delay_s={"t-long0": 0.3, "t-long1": 0.3},
    )
    a = service([phone_a], planner=planner, **{"server.instance_id": "a"})
    b = service([phone_b], planner=planner, **{"server.instance_id": "b"})
    assert a.settings.server.database_url == b.settings.server.database_url
    longs = [a.submit(f"[t-long{i}] long, through instance a", max_steps=30) for i in range(2)]
    for task in longs:
        _wait_status(a, task["id"], "running")
    on_b = next(t for t in longs if a.client.get(f"/v1/tasks/{t['id']}").json()["device"] == phone_b.serial)
    on_a = next(t for t in longs if t is not on_b)
    # a cancel through instance a reaches the run on instance b
    assert a.client.post(f"/v1/tasks/{on_b['id']}/cancel").status_code == 202
    assert a.client.post(f"/v1/tasks/{on_a['id']}/cancel").status_code == 202
    stopped = [a.wait_task(t["id"], timeout=30) for t in (on_b, on_a)]
    assert [t["status"] for t in stopped] == ["cancelled", "cancelled"]
    assert stopped[0]["device"] == phone_b.serial and stopped[1]["device"] == phone_a.serial
    # short tasks through one instance run on both instances' phones, each exactly once
    shorts = [a.submit(f"[t-s{i}] short", max_steps=3) for i in range(6)]
    done = [a.wait_task(t["id"]) for t in shorts]
    assert all(t["status"] == "completed" for t in done)
    assert {t["device"] for t in done} == {phone_a.serial, phone_b.serial}
    # instance a streams the events of a run made by instance b, all of them
    events = a.client.get(f"/v1/tasks/{on_b['id']}/events", timeout=30).text
    assert events.count("event: step_finished") == stopped[0]["steps"]
    assert '"status":"cancelled"' in events and events.rstrip().endswith('"status": "cancelled"}')
