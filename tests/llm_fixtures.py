"""pytest fixtures for the scripted LLM server (a plugin: ``pytest_plugins = ["tests.llm_fixtures"]``).

``llm_server``: a started ``ScriptedLLMServer`` with an empty script, stopped after the
test. Script it with ``llm_server.script([...])`` or ``llm_server.push(...)``; point a
planner at it with ``llm_server.planner_settings()``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm_server import RecordedRequest, Reply, ScriptedLLMServer

__all__ = ["RecordedRequest", "Reply", "ScriptedLLMServer", "llm_server"]


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
