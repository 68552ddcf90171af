"""A task's app policy narrows the server's and never widens it (``server.runner.narrowed_policy``,
review8 #3): before, a task's ``deny_apps`` replaced ``agent.safety.deny_apps`` (one harmless entry
emptied the operator's list), its ``allow_apps`` replaced the server's, and its ``confirmations``
replaced a server's ``deny``. The REST side: tests/service/test_task_app_policy_floor.py."""

from __future__ import annotations

from mobile_agent.settings import load_settings
from server.runner import task_settings
from server.schemas import StoredOptions


def _safety(server: dict[str, object], **task: object) -> tuple[list[str], list[str], str]:
    base = load_settings(overrides={f"agent.safety.{k}": v for k, v in server.items()})
    safety = task_settings(base, StoredOptions.model_validate({"owner": "bob", **task}), "127.0.0.1:5555").agent.safety
    return safety.deny_apps, safety.allow_apps, safety.confirmations


def test_a_tasks_lists_join_or_narrow_the_servers() -> None:
    server = {"deny_apps": ["com.android.settings"], "allow_apps": ["com.android.chrome", "com.android.settings"]}
    deny, allow, _ = _safety(server, deny_apps=["com.example.nothing"], allow_apps=["com.android.chrome", "com.x"])
    assert deny == ["com.android.settings", "com.example.nothing"]  # (before: the task's alone)
    assert allow == ["com.android.chrome"]  # (before: the task's, com.x included)
    deny, allow, _ = _safety(server)
    assert deny == ["com.android.settings"] and allow == ["com.android.chrome", "com.android.settings"]
    assert _safety({}, deny_apps=["com.a"], allow_apps=["com.b"])[:2] == (["com.a"], ["com.b"])  # no server policy


def test_a_servers_deny_of_confirmations_holds_and_ask_is_the_persons_to_choose() -> None:
    assert _safety({"confirmations": "deny"}, confirmations="approve")[2] == "deny"  # (before: approve)
    assert _safety({"confirmations": "ask"}, confirmations="approve")[2] == "approve"
    assert _safety({"confirmations": "approve"}, confirmations="deny")[2] == "deny"
    assert _safety({"confirmations": "ask"})[2] == "ask"
