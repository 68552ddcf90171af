"""``POST /v1/tasks``'s body (``server.schemas.TaskCreate``) and the options it stores: validated
once. A flow's validation parses it (YAML and its JSON Schema, milliseconds for a long one); the
copies the route takes of a validated body (``options()``, ``stored_options()``) do not parse it again."""

from __future__ import annotations

from typing import Any

import pytest

import mobile_agent.testing
from server.schemas import TaskCreate

FLOW = "name: t\nsteps:\n" + "".join(f"  - do: Home\n  - wait_for: {{text: 'Item {i}'}}\n" for i in range(20))


def test_a_submitted_flow_is_parsed_once_and_its_options_stored_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = mobile_agent.testing.parse_flow

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(mobile_agent.testing, "parse_flow", counting)
    body = TaskCreate.model_validate({"flow": FLOW, "requires": ["android>=13"], "cache": True, "device": "any"})
    routed = body.options().stored()
    stored = body.stored_options("alice", "lab")
    assert len(parsed) == 1, len(parsed)  # the body's validation; its copies take it as validated
    assert routed == {"flow": FLOW, "requires": ["android>=13"], "cache": True}
    assert stored == {**routed, "owner": "alice", "team": "lab"}
    assert body.stored_options("bob", None) == {**routed, "owner": "bob"}  # no team: none stored
