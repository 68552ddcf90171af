"""An endpoint that answers 10 MB per reply must not make storage grow with it: the planner
keeps ``planner.max_reply_bytes`` of a reply (the rest marked truncated), and the store
caps every text it keeps, so events, the database, the event stream, ``trajectory.jsonl``
and ``report.html`` stay small. The service is the real one (uvicorn, the agent, a
simulated phone over the real adb server), the model the scripted HTTP server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.llm_server import Reply

TEN_MB = 10 * 1024 * 1024


def _huge_reply(request_json: dict) -> Reply:
    return Reply(text="Action: Wait (0.05)\nObservation: " + "lorem ipsum " * (TEN_MB // 12), usage=(1000, 50))


def test_ten_megabyte_replies_leave_storage_bounded(service, sim_phones, llm_server, tmp_path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **{"planner.max_reply_bytes": 16384})
    llm_server.script([], default=_huge_reply)
    task = live.wait_task(live.submit("wait a little", max_steps=3)["id"], timeout=120)
    assert task["steps"] >= 2, task
    assert len(llm_server.chat_requests[0].body) < 1_000_000  # requests carry max_tokens …
    assert llm_server.chat_requests[0].json["max_tokens"] == live.settings.planner.max_tokens

    with live.client.stream("GET", f"/v1/tasks/{task['id']}/events", timeout=60) as response:
        streamed = b"".join(response.iter_bytes())
    assert b"reply truncated by mobile-agent" in streamed
    assert len(streamed) < 400_000, len(streamed)

    (trajectory,) = Path(live.state.store.get_task(task["id"]).trajectory_dir).rglob("trajectory.jsonl")
    folder = trajectory.parent
    assert trajectory.stat().st_size < 200_000, trajectory.stat().st_size
    steps = [json.loads(line) for line in trajectory.read_text().splitlines()]
    assert any("reply truncated by mobile-agent" in json.dumps(s) for s in steps)
    report = folder / "report.html"
    assert report.stat().st_size < 3_000_000, report.stat().st_size  # screenshots, not 10 MB per step
    database = sum(p.stat().st_size for p in (tmp_path).glob("service.sqlite3*"))
    assert database < 2_000_000, database


def test_the_store_caps_every_text_an_event_keeps(tmp_path) -> None:
    from server.store import MAX_EVENT_TEXT, TaskStore

    store = TaskStore(f"sqlite:///{tmp_path / 'cap.sqlite3'}")
    task = store.create_task("x", "any", {})
    store.add_event(task.id, "step_finished", {"raw_reply": "y" * 5_000_000, "nested": [{"thought": "z" * 100_000}],
                                               "short": "kept"})
    (_, event) = store.events_after(task.id)
    assert event.data["short"] == "kept"
    assert len(event.data["raw_reply"]) < MAX_EVENT_TEXT + 100 and event.data["raw_reply"].endswith("more characters]")
    assert "4967232 more characters" in event.data["raw_reply"]
    assert len(event.data["nested"][0]["thought"]) < MAX_EVENT_TEXT + 100
    store.close()
