"""``cap_reply``: a reply over ``planner.max_reply_bytes`` is cut on a character boundary and says so."""

from __future__ import annotations

import openai

from mobile_agent.planner.client import Planner, cap_reply


def test_short_replies_are_untouched_and_long_ones_cut_and_marked() -> None:
    assert cap_reply("Action: Stop", 1024) == "Action: Stop"
    long = "Action: Wait (1)\n" + "é" * 10_000  # two bytes a character: the cut may fall inside one
    capped = cap_reply(long, 1024)
    assert capped.startswith("Action: Wait (1)\n")
    assert len(capped.encode()) <= 1024 + 8
    kept = capped.rsplit("\n", 1)[0]
    assert capped.endswith(f"[reply truncated by mobile-agent: {len(long.encode()) - len(kept.encode())} more bytes]")


def test_the_planner_keeps_at_most_max_reply_bytes(llm_server) -> None:
    llm_server.script(["Observation: " + "x" * 200_000 + "\nThought: t\nAction: Stop"])
    settings = llm_server.planner_settings(max_reply_bytes=4096)
    planner = Planner(settings, client=openai.OpenAI(base_url=llm_server.base_url, api_key="k", max_retries=0))
    verdict = planner.check_completion("do it", [], _blank())
    assert len(verdict.raw.encode()) <= 4096 + 8 and "reply truncated by mobile-agent" in verdict.raw
    assert llm_server.chat_requests[0].json["max_tokens"] == settings.max_tokens


def _blank():
    import numpy as np

    return np.full((64, 32, 3), 255, dtype=np.uint8)


def test_an_answer_over_the_body_cap_is_not_read_on_nor_retried(llm_server, monkeypatch) -> None:
    import pytest

    from mobile_agent.errors import PlannerResponseError
    from mobile_agent.planner import transport

    monkeypatch.setattr(transport, "max_body_bytes", lambda settings: 1 << 20)  # 1 MiB, for a quick test
    llm_server.script([], default="Observation: " + "x" * (3 << 20) + "\nAction: Stop")
    planner = Planner(llm_server.planner_settings(max_retries=3, backoff_base_s=0.0, backoff_max_s=0.0))
    with pytest.raises(PlannerResponseError) as info:
        planner.check_completion("do it", [], _blank())
    assert "answered over 1048576 bytes" in info.value.message
    assert len(llm_server.chat_requests) == 1  # the same question would get the same answer


def test_runs_of_one_endpoint_share_one_client_and_its_connections(llm_server) -> None:
    """Planners of the same endpoint (a service's runs) use one openai client, so its
    keep-alive connection carries the second run's requests: the server sees one client
    port for both. Another key is another client."""
    from mobile_agent.planner.transport import shared_client

    llm_server.script([], default="Observation: x\nThought: y\nAction: Stop")
    settings = llm_server.planner_settings()
    first, second = Planner(settings), Planner(settings)
    assert first._client is second._client is shared_client(settings)
    first.check_completion("do it", [], _blank())
    second.check_completion("do it", [], _blank())
    ports = {request.client_port for request in llm_server.chat_requests}
    assert len(llm_server.chat_requests) == 2 and len(ports) == 1
    other = settings.model_copy(update={"api_key": type(settings.api_key)("another-key")})
    assert shared_client(other) is not first._client


def test_a_service_builds_its_planner_client_before_the_first_task(llm_server) -> None:
    """``AgentTaskRunner.prepare`` (a worker's or the server's start) leaves the endpoint's
    shared client built: the first runs, which start together on every phone, find it."""
    from mobile_agent.planner import transport
    from mobile_agent.settings import Settings
    from server.runner import AgentTaskRunner

    planner = llm_server.planner_settings().model_copy(update={"timeout_s": 17.5})  # a key of its own
    settings = Settings(planner=planner)
    key = (planner.base_url, planner.api_key.get_secret_value(), 17.5, transport.max_body_bytes(planner))
    assert key not in transport._CLIENTS
    AgentTaskRunner(settings).prepare()
    assert transport._CLIENTS[key] is Planner(planner)._client
