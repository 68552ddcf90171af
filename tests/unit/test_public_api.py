"""The public API of ``mobile_agent`` is pinned: a change here is a change for users."""

from __future__ import annotations

import json

import mobile_agent
from mobile_agent import errors

EXPECTED = [
    "Agent",
    "AgentEvent",
    "MobileAgentError",
    "RunResult",
    "RunStatus",
    "Settings",
    "StepRecord",
    "__version__",
    "load_settings",
    "run_script",
]


def test_all_is_pinned():
    assert sorted(mobile_agent.__all__) == sorted(EXPECTED)


def test_every_public_name_resolves():
    for name in mobile_agent.__all__:
        assert getattr(mobile_agent, name) is not None, name
    from mobile_agent.agent import Agent, run_script

    assert mobile_agent.Agent is Agent and mobile_agent.run_script is run_script


def test_unknown_attribute_is_an_attribute_error():
    try:
        mobile_agent.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_run_statuses_are_the_documented_five():
    assert [s.value for s in mobile_agent.RunStatus] == [
        "completed",
        "not_completed",
        "budget_exhausted",
        "error",
        "cancelled",
    ]


def test_errors_module_exports_the_tree():
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.MobileAgentError)
    json.dumps(errors.DeviceLostError("gone", serial="x").to_dict())
