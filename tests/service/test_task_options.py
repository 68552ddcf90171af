"""Typed task options end to end (#28): the REST body, the stored row, the farm's job and the
runner share one model, ``server.schemas.TaskOptions``. A new option declared there fails these
tests until the runner uses it (``OPTION_SETTINGS`` or ``OPTIONS_USED_ELSEWHERE``) and a sample
value shows it reaching the run's settings."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from server.runner import OPTION_SETTINGS, OPTIONS_USED_ELSEWHERE, TaskOutcome, TaskSpec, task_settings
from server.schemas import StoredOptions, TaskCreate, TaskOptions
from tests.server_fixtures import service_settings, start_service

SAMPLES: dict[str, Any] = {
    "script": "Home", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1", "temperature": 0.3,
    "max_steps": 7, "reflection": False, "cache": True, "host": "lab-1", "requires": ["android>=13"],
    "labels": {"lab": "berlin"}, "retries": 2, "confirmations": "deny", "deny_apps": ["com.android.vending"],
    "allow_apps": ["com.android.settings"], "user_timeout_s": 42.0, "callback_url": "https://hooks.example.com/x",
    "flow": "name: t\nsteps:\n  - do: Home\n", "record": True, "platform": "android",
}
# a body has a script or a flow, not both (TaskCreate refuses the pair)
BODY = {k: v for k, v in SAMPLES.items() if k != "flow"}


def _setting(settings: Any, dotted: str) -> Any:
    value = settings
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def test_every_option_is_used_by_the_runner_and_reaches_the_run_settings() -> None:
    from mobile_agent.settings import load_settings

    fields = set(TaskOptions.model_fields)
    assert fields == set(OPTION_SETTINGS) | set(OPTIONS_USED_ELSEWHERE), "an option the runner does not use"
    assert not set(OPTION_SETTINGS) & set(OPTIONS_USED_ELSEWHERE)
    assert set(SAMPLES) == fields, "give the new option a sample value here"
    options = StoredOptions.model_validate({**SAMPLES, "owner": "alice", "team": "lab"})
    settings = task_settings(load_settings(), options, "emulator-5554")
    for name, dotted in OPTION_SETTINGS.items():
        assert _setting(settings, dotted) == SAMPLES[name], (name, dotted)
    assert settings.adb.serial == "emulator-5554" and settings.cache.namespace == "team:lab"
    # the body is the options plus the instruction and the phone; the stored row adds the owner
    body = TaskCreate.model_validate({**BODY, "instruction": "x", "device": "any"})
    assert body.options() == TaskOptions.model_validate(BODY)
    assert body.stored_options("bob", None) == {**BODY, "owner": "bob"}
    # a row written by another version: keys it does not know are left behind, not a failure
    assert StoredOptions.model_validate({"max_steps": 3, "from_the_future": 1}).max_steps == 3


class Capture:
    """A runner that keeps the spec it was handed."""

    def __init__(self) -> None:
        self.specs: list[TaskSpec] = []
        self.ran = threading.Event()

    def __call__(self, spec: TaskSpec, *, cancel: threading.Event, emit: Any) -> TaskOutcome:
        self.specs.append(spec)
        self.ran.set()
        return TaskOutcome(status="completed")

    def prepare(self) -> None:
        pass

    def describe(self) -> dict[str, str]:
        return {}


def test_the_rest_body_reaches_the_runner_as_the_same_typed_options(adb_server, sim_phones, llm_server,
                                                                    tmp_path: Path) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    settings = service_settings(tmp_path, adb_server.port, llm_server, [phone.serial],
                                **{"server.api_token": "opt-token", "server.webhook_secret": "s"})
    runner = Capture()
    live = start_service(settings, runner=runner)
    try:
        given = {k: v for k, v in BODY.items() if k not in ("host", "requires", "labels", "base_url")}
        task = live.submit("typed", **given)
        live.wait_task(task["id"])
        assert runner.ran.wait(10)
        (spec,) = runner.specs
        assert isinstance(spec.options, StoredOptions)
        assert spec.options == StoredOptions.model_validate({**given, "owner": "default"})
        assert live.client.get(f"/v1/tasks/{task['id']}").json()["options"] == {**given, "owner": "default"}
    finally:
        live.stop()


def test_a_stored_row_this_version_cannot_read_ends_its_task_and_frees_the_phone(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone])
    unreadable = live.state.store.create_task("written by another version", "any", {"max_steps": 0})
    live.state.scheduler.wake()
    ended = live.wait_task(unreadable.id)
    assert ended["status"] == "error" and ended["error"]["type"] == "ValidationError", ended
    after = live.wait_task(live.submit("next", script="Home")["id"])  # the phone was given back
    assert after["status"] == "completed", after


def test_a_stored_row_this_version_cannot_read_can_still_be_cancelled(service) -> None:
    """Cancelling a queued task reads its callback_url from its typed options: a row this
    version cannot read is cancelled all the same (202), never a 500."""
    live = service([])  # no phone: the task stays queued
    unreadable = live.state.store.create_task("written by another version", "any", {"max_steps": 0})
    answer = live.client.post(f"/v1/tasks/{unreadable.id}/cancel")
    assert answer.status_code == 202, answer.text
    assert answer.json()["status"] == "cancelled"
