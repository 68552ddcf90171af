"""A task with a ``callback_url`` hears ``task_finished`` once whichever way it ends, also when
it ends without ever running: cancelled while queued, or refused at the server's start because
its owner's token was taken away (``server.app._refuse_revoked_queued``, 9662e87). Real uvicorn
on one database across a restart, the simulated phone over the real adb server, a webhook
receiver on loopback that checks the signature."""

from __future__ import annotations

import time

import pytest

from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SECRET = "unrun-webhook-secret"
ADMIN = {"Authorization": "Bearer unrun-admin-1"}
ALICE = {"Authorization": "Bearer unrun-alice-1"}
HOOKS = {"server.webhook_secret": SECRET, "server.webhook_allow": ["127.0.0.1"], "server.api_token": "unrun-admin-1"}
WITH_ALICE = {**HOOKS, "server.tokens": {"alice": {"token": "unrun-alice-1", "role": "user"}}}


@pytest.fixture
def hook():
    receiver = WebhookReceiver(SECRET)
    yield receiver
    receiver.close()


def _submit(live, headers: dict[str, str], script: str, url: str | None) -> int:
    body = {"script": script, **({"callback_url": url} if url else {})}
    answer = live.client.post("/v1/tasks", headers=headers, json=body)
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def _wait_running(live, task_id: int) -> None:
    deadline = time.monotonic() + 120  # a guard for a broken build only
    while live.client.get(f"/v1/tasks/{task_id}", headers=ADMIN).json()["status"] != "running":
        assert time.monotonic() < deadline, "the first task never started"
        time.sleep(0.05)


def test_a_queued_task_refused_at_start_tells_its_callback_url_once(service, sim_phones, hook) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **WITH_ALICE)
    holding = _submit(live, ALICE, "Wait (10)\n" * 12, None)  # keeps the only phone: the next two stay queued
    _wait_running(live, holding)
    queued = _submit(live, ALICE, "Home", hook.url)
    admins = _submit(live, ADMIN, "Home", hook.url)
    live.stop()

    live = service([phone], **{**WITH_ALICE, "server.tokens": {}})  # alice's token taken away
    assert live.wait_task(queued, timeout=120)["status"] == "error"
    assert live.wait_task(admins, timeout=120)["status"] == "completed"
    told = hook.wait_finished(queued)
    assert told["status"] == "error" and told["error"]["type"] == "OwnerRefused", told
    assert "alice" in told["error"]["message"] and told["links"] == {"task": f"/v1/tasks/{queued}"}, told
    hook.wait_finished(admins)  # sent after the refusal's: by now a second one for the refused task would be here
    assert len(hook.finished(queued)) == 1 and hook.unsigned == 0, hook.bodies


def test_a_task_cancelled_while_queued_tells_its_callback_url_once(service, sim_phones, hook) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **HOOKS)
    holding = _submit(live, ADMIN, "Wait (10)\n" * 12, None)
    _wait_running(live, holding)
    queued = _submit(live, ADMIN, "Home", hook.url)
    answer = live.client.post(f"/v1/tasks/{queued}/cancel", headers=ADMIN)
    assert answer.status_code == 202, answer.text
    told = hook.wait_finished(queued)
    assert told["status"] == "cancelled" and told["result"] == {"reason": "cancelled while queued"}, told
    stored = live.client.get(f"/v1/tasks/{queued}", headers=ADMIN).json()  # what was told is what is stored
    assert (stored["status"], stored["result"]) == ("cancelled", told["result"]), stored
    assert answer.json()["result"] == told["result"], answer.json()
    assert live.client.post(f"/v1/tasks/{queued}/cancel", headers=ADMIN).status_code == 409
    later = _submit(live, ADMIN, "Home", hook.url)  # runs once the holding task is cancelled
    assert live.client.post(f"/v1/tasks/{holding}/cancel", headers=ADMIN).status_code == 202
    assert live.wait_task(later, timeout=120)["status"] == "completed"
    hook.wait_finished(later)
    assert len(hook.finished(queued)) == 1 and hook.unsigned == 0, hook.bodies


def test_a_task_left_running_by_a_dead_service_tells_its_callback_url_when_it_starts_again(
        service, sim_phones, hook, tmp_path) -> None:
    """A service killed mid-run (no shutdown: no run told anything) finds the task still running
    when it starts again and stores it ``interrupted`` (``TaskStore.interrupt_running``); its
    callback_url hears that end, once. The dead process is a store row claimed by this instance."""
    from server.store import TaskStore

    store = TaskStore(f"sqlite:///{tmp_path / 'service.sqlite3'}", instance="dead-service")
    try:
        task = store.create_task("Home", "any", {"owner": "admin", "script": "Home", "callback_url": hook.url})
        assert store.claim(task.id, "emulator-5554", tmp_path / "runs" / "dead")
    finally:
        store.close()
    (phone,) = sim_phones(1)
    live = service([phone], **HOOKS, **{"server.instance_id": "dead-service"})
    assert live.client.get(f"/v1/tasks/{task.id}", headers=ADMIN).json()["status"] == "interrupted"
    told = hook.wait_finished(task.id)
    assert told["status"] == "interrupted" and told["error"]["type"] == "Interrupted", told
    later = _submit(live, ADMIN, "Home", hook.url)
    hook.wait_finished(later)  # sent after the interrupted one's: a second for it would be here by now
    assert len(hook.finished(task.id)) == 1 and hook.unsigned == 0, hook.bodies
