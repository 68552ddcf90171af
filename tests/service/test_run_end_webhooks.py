"""A run's end is told to its ``callback_url`` as the store holds it, once: the scheduler sends
``task_finished`` after its ``finish`` stored the end (``Scheduler(told=)``, ``server.runner.tell_ends``),
so the webhook's status, result and error are the task's. A run interrupted by the service's
shutdown is ``interrupted`` in both (the runner said ``cancelled`` before); a task claimed whose
worker thread could not start ends ``error``/``WorkerStartError`` and says so (it sent nothing).
Real uvicorn on one database across a restart, the simulated phone over the real adb server, a
webhook receiver on loopback that checks the signature."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server.store import TaskStore
from tests.farm_fixtures import farm_config
from tests.server_fixtures import TaggedPlanner, free_port, serve_process
from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SECRET = "run-end-webhook-secret"
HOOKS = {"server.webhook_secret": SECRET, "server.webhook_allow": ["127.0.0.1"], "server.api_token": "run-end-admin"}


@pytest.fixture
def hook():
    receiver = WebhookReceiver(SECRET)
    yield receiver
    receiver.close()


def _submit(live, script: str, url: str) -> int:
    answer = live.client.post("/v1/tasks", json={"script": script, "callback_url": url})
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def _wait_steps(live, task_id: int) -> None:
    deadline = time.monotonic() + 120  # a guard for a broken build only
    while live.client.get(f"/v1/tasks/{task_id}").json()["steps"] < 1:
        assert time.monotonic() < deadline, "the task never made a step"
        time.sleep(0.05)


def test_each_end_of_a_run_tells_what_the_task_says_once(service, sim_phones, hook) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], **HOOKS)
    done = _submit(live, "Wait (0.1)", hook.url)
    stored = live.wait_task(done, timeout=120)
    told = hook.wait_finished(done)
    assert stored["status"] == told["status"] == "completed", (stored, told)
    assert told["result"]["run_id"] == stored["result"]["run_id"] and told["result"]["reason"], told
    assert told["error"] is None and told["links"] == {"task": f"/v1/tasks/{done}"}, told

    cancelled = _submit(live, "Wait (10)\n" * 12, hook.url)
    _wait_steps(live, cancelled)
    assert live.client.post(f"/v1/tasks/{cancelled}/cancel").status_code == 202
    assert live.wait_task(cancelled, timeout=120)["status"] == "cancelled"
    assert hook.wait_finished(cancelled)["status"] == "cancelled"

    running = _submit(live, "Wait (10)\n" * 12, hook.url)
    _wait_steps(live, running)
    live.stop()  # the shutdown interrupts the run
    store = TaskStore(live.settings.server.database_url)
    try:
        row = store.get_task(running)
        assert row is not None and row.status == "interrupted", row
    finally:
        store.close()
    told = hook.wait_finished(running)
    assert told["status"] == "interrupted" and told["error"]["type"] == "Interrupted", told

    live = service([phone], **HOOKS)  # starts again: nothing of before is told a second time
    assert live.client.get(f"/v1/tasks/{running}").json()["error"] == told["error"]
    later = _submit(live, "Home", hook.url)
    hook.wait_finished(later)  # sent after the others': a second one for any of them would be here by now
    assert [len(hook.finished(t)) for t in (done, cancelled, running)] == [1, 1, 1], hook.bodies
    assert hook.unsigned == 0


def test_a_run_s_end_reaches_its_callback_url_without_the_secrets_it_met(service, sim_phones, hook) -> None:
    """The stored row the webhook is made from carries the run's reason, which names what the
    script asked for: a secret of ``agent.secrets`` there is ``[REDACTED]`` in the signed body."""
    (phone,) = sim_phones(1)
    live = service([phone], **HOOKS, **{"agent.secrets": ["hooks6-masked-secret"]})
    task = _submit(live, "Open App (hooks6-masked-secret)", hook.url)
    assert live.wait_task(task, timeout=120)["status"] == "not_completed"
    told = hook.wait_finished(task)
    assert "[REDACTED]" in told["result"]["reason"] and "hooks6-masked-secret" not in str(hook.bodies), told
    assert hook.unsigned == 0


def test_a_task_whose_worker_cannot_start_tells_its_callback_url_once(service, sim_phones, hook,
                                                                      monkeypatch) -> None:
    """The scheduler claimed the task and its worker thread could not start (Python's
    ``RuntimeError: can't start new thread`` when the process is out of threads, made to happen
    here for the task's thread only): the task ends ``error``/``WorkerStartError``, and says so."""
    start = threading.Thread.start

    def no_task_threads(thread: threading.Thread) -> None:
        if thread.name.startswith("task-"):
            raise RuntimeError("can't start new thread")
        start(thread)

    (phone,) = sim_phones(1)
    live = service([phone], **HOOKS)
    monkeypatch.setattr(threading.Thread, "start", no_task_threads)
    failed = _submit(live, "Home", hook.url)
    stored = live.wait_task(failed, timeout=120)
    assert stored["status"] == "error" and stored["error"]["type"] == "WorkerStartError", stored
    told = hook.wait_finished(failed)
    assert told["status"] == "error" and told["error"] == stored["error"], told
    monkeypatch.undo()
    later = _submit(live, "Home", hook.url)  # the phone was given back: it runs
    assert live.wait_task(later, timeout=120)["status"] == "completed"
    hook.wait_finished(later)
    assert len(hook.finished(failed)) == 1 and hook.unsigned == 0, hook.bodies


def test_a_stopping_service_delivers_the_webhooks_of_the_runs_it_interrupts(tmp_path: Path, adb_server, sim_phones,
                                                                            llm_server) -> None:
    """``mobile-agent serve`` stopped with SIGTERM mid-run: the run is interrupted and told so, and
    the process waits for that delivery before it exits; the receiver fails the first attempt, so
    the second comes a backoff later (before, the process exited meanwhile and the end was lost)."""
    (phone,) = sim_phones(1)
    with _receiver() as hook:
        with _stopped_service(tmp_path, adb_server.port, phone.serial, llm_server.base_url) as client:
            answer = client.post("/v1/tasks", json={"script": "Wait (10)\n" * 12, "callback_url": hook.url})
            assert answer.status_code == 202, answer.text
            running = int(answer.json()["id"])
            deadline = time.monotonic() + 120  # a guard for a broken build only
            while client.get(f"/v1/tasks/{running}").json()["steps"] < 1:
                assert time.monotonic() < deadline, "the task never made a step"
                time.sleep(0.05)
        assert hook.failed == 1 and [b["status"] for b in hook.finished(running)] == ["interrupted"], (
            hook.failed, hook.bodies, _log(tmp_path))


def test_a_service_stopped_as_it_starts_delivers_the_ends_its_start_told(tmp_path: Path, adb_server, sim_phones,
                                                                         llm_server) -> None:
    """The task a dead service left running is stored ``interrupted`` at the next start and told
    (e101558); that service is stopped at once: the stop waits for the delivery (its first
    attempt fails, the second comes a backoff later) instead of ending its thread."""
    (phone,) = sim_phones(1)
    with _receiver() as hook:
        store = TaskStore(f"sqlite:///{tmp_path / 'service.sqlite3'}", instance="run-end-service")
        try:
            task = store.create_task("Home", "any", {"owner": "admin", "script": "Home", "callback_url": hook.url})
            assert store.claim(task.id, "emulator-5554", tmp_path / "runs" / "dead")
        finally:
            store.close()
        with _stopped_service(tmp_path, adb_server.port, phone.serial, llm_server.base_url):
            pass
        assert hook.failed == 1 and [b["status"] for b in hook.finished(task.id)] == ["interrupted"], (
            hook.failed, hook.bodies, _log(tmp_path))


def test_a_service_stopped_after_a_cancel_delivers_that_end(tmp_path: Path, adb_server, sim_phones,
                                                            llm_server) -> None:
    """A task cancelled while queued is told by the cancel route; the service stopped right after
    waits for that delivery (its first attempt fails, the second comes a backoff later)."""
    (phone,) = sim_phones(1)
    with _receiver() as hook:
        with _stopped_service(tmp_path, adb_server.port, phone.serial, llm_server.base_url) as client:
            ids = [client.post("/v1/tasks", json={"script": "Wait (10)\n" * 12, "device": phone.serial,
                                                  **({"callback_url": hook.url} if n else {})}).json()["id"]
                   for n in range(2)]  # the first keeps the phone: the second stays queued
            answer = client.post(f"/v1/tasks/{ids[1]}/cancel")
            assert answer.status_code == 202 and answer.json()["status"] == "cancelled", answer.text
        assert hook.failed == 1 and [b["status"] for b in hook.finished(ids[1])] == ["cancelled"], (
            hook.failed, hook.bodies, _log(tmp_path))


def test_a_service_stopped_while_a_run_asks_its_person_delivers_both_webhooks(tmp_path: Path, adb_server,
                                                                              sim_phones, llm_server) -> None:
    """A run waits for its person (``waiting_for_user``, told by the run through the service's
    sender) when the service is stopped: that webhook's retry (its first attempt fails) and the
    ``interrupted`` end both arrive before the process exits."""
    llm_server.script([], default=TaggedPlanner(plans={"t-ask": ["Ask user (Please open the Notes app)"]}))
    (phone,) = sim_phones(1)
    with _receiver() as hook:
        with _stopped_service(tmp_path, adb_server.port, phone.serial, llm_server.base_url) as client:
            answer = client.post("/v1/tasks", json={"instruction": "[t-ask] open my notes", "callback_url": hook.url})
            assert answer.status_code == 202, answer.text
            task = int(answer.json()["id"])
            deadline = time.monotonic() + 120  # a guard for a broken build only
            while client.get(f"/v1/tasks/{task}").json()["status"] != "waiting_for_user":
                assert time.monotonic() < deadline, "the task never asked"
                time.sleep(0.05)
        events = [(b["event"], b.get("status")) for b in hook.bodies if b["task_id"] == task]
        assert hook.failed == 1 and sorted(events) == [("task_finished", "interrupted"),
                                                       ("waiting_for_user", "waiting_for_user")], (
            hook.failed, hook.bodies, _log(tmp_path))


@contextmanager
def _receiver() -> Iterator[WebhookReceiver]:
    """A signed receiver that fails each first attempt (the retry comes a backoff later)."""
    hook = WebhookReceiver(SECRET, fail_first=1)
    try:
        yield hook
    finally:
        hook.close()


@contextmanager
def _stopped_service(tmp_path: Path, adb_port: int, serial: str, planner_url: str) -> Iterator[httpx.Client]:
    """``_serve`` and an admin client; when the block ends, the service is stopped with SIGTERM
    (``_stop``: it must exit cleanly), or killed if the block failed."""
    port = free_port()
    process = _serve(tmp_path, port, adb_port, serial, planner_url)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": "Bearer run-end-admin"},
                          timeout=30)
    try:
        yield client
        client.close()
        _stop(process)
    finally:
        client.close()
        if process.poll() is None:
            process.kill()
            process.wait(10)


def _log(tmp_path: Path) -> str:
    return (tmp_path / "serve.log").read_text()[-3000:]


def _serve(tmp_path: Path, port: int, adb_port: int, serial: str, planner_url: str) -> subprocess.Popen[bytes]:
    """``mobile-agent serve`` (instance ``run-end-service``) with a webhook retried 1 s after a failure."""
    config = farm_config(tmp_path / "service.toml", {
        "adb": {"server_port": adb_port},
        "server": {"database_url": f"sqlite:///{tmp_path / 'service.sqlite3'}", "devices": [serial],
                   "webhook_secret": SECRET, "webhook_allow": ["127.0.0.1"], "webhook_backoff_s": 1.0,
                   "api_token": "run-end-admin", "instance_id": "run-end-service"},
        "agent": {"output_dir": str(tmp_path / "runs"), "settle_timeout_s": 0.6, "settle_interval_s": 0.1},
        "planner": {"base_url": planner_url, "api_key": "test-key"},
    })
    return serve_process(config, port, tmp_path / "serve.log")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) in (0, -signal.SIGTERM)  # uvicorn raises the signal again once it has shut down
