"""A person in the loop through REST only: a task pauses (``waiting_for_user``, an event on
its stream, a signed webhook to its ``callback_url``), the person taps on the phone and
says done through ``POST /v1/tasks/{id}/reply``, the run goes on and ends (another
webhook). Bad replies are 4xx. A secret never reaches the run folder, the database or the
log. Real uvicorn, the simulated phone over the real adb server, the scripted LLM server, a
webhook receiver on loopback that checks the HMAC signature."""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from server.webhooks import verify_signature
from tests.server_fixtures import TaggedPlanner

pytestmark = [pytest.mark.timeout(300)]
NOTES = "com.google.android.keep"
SECRET = "webhook-secret-for-tests"


class Receiver:
    """A webhook receiver on loopback: records every delivery; the first ``fail_first``
    answer 500 (so the sender must try again)."""

    def __init__(self, fail_first: int = 0) -> None:
        self.deliveries: list[tuple[dict[str, str], bytes]] = []
        self.fail_first = fail_first
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.deliveries.append(({k: v for k, v in self.headers.items()}, body))
                failing = len(receiver.deliveries) <= receiver.fail_first
                self.send_response(500 if failing else 204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[str]:
        return [json.loads(body)["event"] for _, body in self.deliveries]

    def wait_for(self, event: str, times: int = 1, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.events().count(event) < times:
            assert time.monotonic() < deadline, self.events()
            time.sleep(0.05)


@pytest.fixture
def receiver():
    r = Receiver(fail_first=1)
    yield r
    r.server.shutdown()


def _element(phone, text: str) -> dict:
    left, top, right, bottom = phone.element(text)["box"]  # the phone's ground truth, over adb
    return {"x": (left + right) // 2, "y": (top + bottom) // 2}


def test_takeover_through_rest_with_signed_webhooks(service, sim_phones, receiver) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-ask": ["Ask user (Please open the Notes app)"], "t-ok": ["Click text (Install)"]})
    live = service([phone], planner=planner, **{"server.webhook_secret": SECRET, "server.webhook_backoff_s": 0.05,
                                                   "server.webhook_allow": ["127.0.0.1"]})
    client = live.client

    # a callback_url is refused where nothing could sign it: checked by the field's own rules too
    assert client.post("/v1/tasks", json={"instruction": "x", "callback_url": "ftp://x"}).status_code == 422

    task = live.submit("[t-ask] open my notes", callback_url=receiver.url)
    task_id = task["id"]
    assert client.post(f"/v1/tasks/{task_id}/reply", json={"action": "done"}).status_code == 409  # not asking yet
    waiting = live.wait_task(task_id, statuses={"waiting_for_user"})
    assert waiting["asking"]["kind"] == "question" and "open the Notes app" in waiting["asking"]["question"]
    assert waiting["links"]["reply"] == f"/v1/tasks/{task_id}/reply"

    # the webhook: refused once (500), delivered on the retry, signed
    receiver.wait_for("waiting_for_user", times=2)
    assert receiver.events()[:2] == ["waiting_for_user", "waiting_for_user"]
    headers, body = receiver.deliveries[1]
    assert headers["X-Mobile-Agent-Attempt"] == "2"
    assert verify_signature(SECRET, headers, body)
    assert not verify_signature(SECRET, headers, body.replace(b"Notes", b"Mail!"))  # a changed body fails
    assert not verify_signature("another-secret", headers, body)
    assert json.loads(body)["request"]["question"] == "Please open the Notes app"

    # bad replies are 4xx, never 500, and change nothing
    reply = f"/v1/tasks/{task_id}/reply"
    for bad in ({}, {"action": "approve"}, {"action": "answer"}, {"action": "touch"}, {"action": "touch", "x": 5},
                {"action": "answer", "text": "a\x00b"}, {"action": "launch"}, {"action": "done", "x2": 3},
                {"action": "touch", "x": -1, "y": 3}, {"action": "answer", "text": "x" * 3000}, [1, 2]):  # fmt: skip
        response = client.post(reply, json=bad)
        assert response.status_code == 422, (bad, response.status_code, response.text)
    assert client.post(reply, content=b"{not json", headers={"Content-Type": "application/json"}).status_code == 422
    assert client.post("/v1/tasks/999999/reply", json={"action": "done"}).status_code == 404
    assert client.get(f"/v1/tasks/{task_id}").json()["status"] == "waiting_for_user"

    # the person taps the Notes icon on the phone, then says done
    touch = _element(phone, "Notes")
    assert client.post(reply, json={"action": "touch", **touch}).status_code == 202
    deadline = time.monotonic() + 20
    while phone.phone.foreground != NOTES:
        assert time.monotonic() < deadline, "the person's tap never reached the phone"
        time.sleep(0.05)
    assert client.post(reply, json={"action": "done", "text": "opened"}).status_code == 202
    done = live.wait_task(task_id)
    assert done["status"] == "completed", done
    receiver.wait_for("task_finished")
    headers, body = receiver.deliveries[-1]
    assert verify_signature(SECRET, headers, body) and json.loads(body)["status"] == "completed"

    kinds = [e.kind for e in live.state.store.events_after(task_id)]
    for kind in ("waiting_for_user", "user_reply", "user_replied"):
        assert kind in kinds
    statuses = [e.data["status"] for e in live.state.store.events_after(task_id) if e.kind == "status"]
    assert statuses == ["queued", "running", "waiting_for_user", "running", "completed"]
    trajectory = Path(live.state.store.get_task(task_id).trajectory_dir)
    lines = [json.loads(x) for x in next(trajectory.rglob("trajectory.jsonl")).read_text().splitlines()]
    person = [x for x in lines if x.get("by") == "person"]
    assert [p["operation"]["name"] for p in person] == ["tap_point", "user_reply"]
    assert person[0]["tap_point"] == [touch["x"], touch["y"]]
    assert client.post(reply, json={"action": "done"}).status_code == 409  # over

    # a confirmation, denied through REST: the model hears it, nothing is clicked
    task = live.submit("[t-ok] install it", callback_url=receiver.url)
    waiting = live.wait_task(task["id"], statuses={"waiting_for_user"})
    assert waiting["asking"]["kind"] == "confirm" and "Install" in waiting["asking"]["question"]
    reply = f"/v1/tasks/{task['id']}/reply"
    assert client.post(reply, json={"action": "done"}).status_code == 422  # a confirmation wants yes or no
    assert client.post(reply, json={"action": "deny", "text": "not on this phone"}).status_code == 202
    assert live.wait_task(task["id"])["status"] == "completed"
    lines = [json.loads(x) for x in next(Path(live.state.store.get_task(task["id"]).trajectory_dir).rglob(
        "trajectory.jsonl")).read_text().splitlines()]  # fmt: skip
    assert lines[1]["asked_user"]["reply"]["kind"] == "deny" and "not on this phone" in lines[1]["feedback"]


def test_a_secret_reaches_the_phone_but_no_file_database_or_log(service, sim_phones, tmp_path, caplog) -> None:
    (phone,) = sim_phones(1)
    value = "Quokka7731Zz"
    planner = TaggedPlanner(plans={"t-pin": [
        "Open App (Notes)", "Click icon (orange plus, bottom right)", "Type ({{secret:pin}})", "Back", "Back",
    ]})  # fmt: skip
    with caplog.at_level(logging.DEBUG):
        live = service([phone], planner=planner, **{"agent.named_secrets": {"pin": value}})
        task = live.submit("[t-pin] write a note titled {{secret:pin}}")
        done = live.wait_task(task["id"], timeout=120)
        assert done["status"] == "completed", done
        assert [n["title"] for n in phone.phone.state()["apps"][NOTES]["notes"]] == [value]  # typed
        events = live.client.get(f"/v1/tasks/{task['id']}/events").text
        unknown = live.client.post("/v1/tasks", json={"instruction": "type {{secret:other}}"})
        live.stop()
    assert value not in events
    assert unknown.status_code == 422 and "other" in unknown.text
    assert "{{secret:pin}}" in events  # the name is kept, so the person can follow
    looked = 0
    for path in tmp_path.rglob("*"):  # the run folder, the database and its WAL, everything
        if path.is_file():
            looked += 1
            assert value.encode() not in path.read_bytes(), path
    assert looked > 5 and any(p.suffix == ".sqlite3" for p in tmp_path.rglob("*"))
    assert value not in caplog.text


def test_a_waiting_task_can_be_cancelled_and_times_out_not_completed(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-a": ["Ask user (What is the code?)"], "t-b": ["Ask user (And now?)"]})
    live = service([phone], planner=planner)
    task = live.submit("[t-a] log in")
    live.wait_task(task["id"], statuses={"waiting_for_user"})
    assert live.client.post(f"/v1/tasks/{task['id']}/cancel").status_code == 202
    assert live.wait_task(task["id"], timeout=20)["status"] == "cancelled"

    task = live.submit("[t-b] log in", user_timeout_s=0.5)
    done = live.wait_task(task["id"], timeout=30)
    assert done["status"] == "not_completed" and "no reply within" in done["result"]["reason"]
    statuses = [e.data["status"] for e in live.state.store.events_after(task["id"]) if e.kind == "status"]
    assert statuses == ["queued", "running", "waiting_for_user", "running", "not_completed"]


def test_a_task_cancelled_while_queued_still_tells_its_callback_url(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-a": ["Ask user (What is the code?)"], "t-q": ["Home"]})
    live = service([phone], planner=planner, **{"server.webhook_secret": SECRET, "server.webhook_allow": ["127.0.0.1"]})
    hook = Receiver()
    try:
        first = live.submit("[t-a] log in")
        live.wait_task(first["id"], statuses={"waiting_for_user"})  # the only phone is taken
        queued = live.submit("[t-q] go home", callback_url=hook.url)
        assert live.client.get(f"/v1/tasks/{queued['id']}").json()["status"] == "queued"
        assert live.client.post(f"/v1/tasks/{queued['id']}/cancel").status_code == 202
        hook.wait_for("task_finished")
        headers, body = hook.deliveries[-1]
        assert verify_signature(SECRET, headers, body)
        data = json.loads(body)
        assert data["task_id"] == queued["id"] and data["status"] == "cancelled", data
        assert live.client.post(f"/v1/tasks/{queued['id']}/cancel").status_code == 409  # over: no second webhook
        assert live.client.post(f"/v1/tasks/{first['id']}/cancel").status_code == 202
        assert live.wait_task(first["id"], timeout=20)["status"] == "cancelled"
        assert hook.events() == ["task_finished"]  # the first task had no callback_url
    finally:
        hook.server.shutdown()
