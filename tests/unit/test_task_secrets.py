"""A run's settings hold only its owner's named secrets (``server.runner.task_settings``,
``ServerSettings.may_type``); the others' values stay among those it hides. The service test:
tests/service/test_secret_owners.py."""

from __future__ import annotations

SETTINGS = {
    "server.api_token": "owners-admin-1",
    "server.tokens": {"bob": {"token": "owners-bob-1", "role": "user", "team": "lab"},
                      "carol": {"token": "owners-carol-1", "role": "user", "team": "lab", "secrets": ["pin"]},
                      "ada": {"token": "owners-ada-1", "role": "admin"}},
    "agent.named_secrets": {"pin": "Quokka7731Zz", "card": "4111"},
}


def test_a_runs_settings_hold_only_its_owners_secrets() -> None:
    from mobile_agent.settings import load_settings
    from server.runner import task_settings
    from server.schemas import StoredOptions

    base = load_settings(overrides=SETTINGS)
    for owner, typed in (("bob", set()), ("carol", {"pin"}), ("default", {"pin", "card"}), ("ada", {"pin", "card"}),
                        (None, {"pin", "card"}), ("gone", set())):
        run = task_settings(base, StoredOptions(owner=owner), "127.0.0.1:5555").agent
        assert set(run.named_secrets) == typed, owner
        hidden = {s.get_secret_value() for s in run.secrets} | {s.get_secret_value() for s in run.named_secrets.values()}
        assert hidden == {"Quokka7731Zz", "4111"}, owner  # every value is still hidden from what leaves


def test_a_farm_workers_run_types_what_the_api_server_stored() -> None:
    """A farm's workers hold no ``server.tokens`` (docs/security.md): the API server stores the
    names its owner may type with the task (``StoredOptions.secrets``) and the worker's run keeps
    exactly those (before: a worker decided from its own, empty, tokens: a granted secret failed)."""
    from mobile_agent.settings import load_settings
    from server.runner import task_settings
    from server.schemas import StoredOptions

    worker = load_settings(overrides={"agent.named_secrets": SETTINGS["agent.named_secrets"]})
    for owner, stored in (("carol", ["pin"]), ("bob", []), ("default", ["card", "pin"])):
        run = task_settings(worker, StoredOptions(owner=owner, secrets=stored), "127.0.0.1:5555").agent
        assert sorted(run.named_secrets) == stored, owner
        assert {s.get_secret_value() for s in run.secrets} >= {
            v for k, v in SETTINGS["agent.named_secrets"].items() if k not in stored}, owner


def test_the_api_server_stores_what_the_owner_may_type() -> None:
    from mobile_agent.settings import load_settings
    from server.schemas import TaskCreate

    server = load_settings(overrides=SETTINGS).server
    named = SETTINGS["agent.named_secrets"]
    for owner, typed in (("bob", []), ("carol", ["pin"]), ("ada", ["card", "pin"])):
        given = sorted(n for n in named if server.may_type(owner, n))
        assert given == typed, owner
        assert TaskCreate(script="Home").stored_options(owner, None, given)["secrets"] == typed
