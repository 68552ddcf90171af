"""The scripted LLM server itself, through the real openai client (it is what every planner test trusts)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import openai
import pytest

from tests.llm_server import Reply, ScriptedLLMServer


def _client(server: ScriptedLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=5)


def _ask(client: openai.OpenAI, text: str = "hi") -> str | None:
    response = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return response.choices[0].message.content


def test_script_order_callables_default_and_exhaustion(llm_server: ScriptedLLMServer) -> None:
    client = _client(llm_server)
    llm_server.script(["one", lambda req: f"echo {req['messages'][0]['content']}", Reply(text="three")])
    assert [_ask(client), _ask(client, "ping"), _ask(client)] == ["one", "echo ping", "three"]
    with pytest.raises(openai.BadRequestError, match="script exhausted"):
        _ask(client)
    llm_server.script([], default="again")
    assert _ask(client) == _ask(client) == "again"
    assert llm_server.remaining == 0
    assert len(llm_server.chat_requests) == 2  # script() clears the record


def test_errors_usage_and_records(llm_server: ScriptedLLMServer) -> None:
    client = _client(llm_server)
    llm_server.script([Reply(status=503, text="busy"), Reply(text="ok", usage=(11, 7))])
    with pytest.raises(openai.InternalServerError) as info:
        _ask(client)
    assert info.value.status_code == 503
    response = client.chat.completions.create(
        model="vl-model",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ],
            }
        ],
    )
    assert response.model == "vl-model"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (11, 7)
    last = llm_server.chat_requests[-1]
    assert last.text() == "look" and last.images() == [b"\x89PNG\r\n\x1a\n"]
    assert last.authorization == "Bearer sk-test"


def test_models_streaming_and_unknown_routes(llm_server: ScriptedLLMServer) -> None:
    client = _client(llm_server)
    assert [m.id for m in client.models.list().data] == [llm_server.model]
    with pytest.raises(openai.BadRequestError, match="streaming"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(llm_server.base_url + "/embeddings", data=b"{}", timeout=5)
    assert info.value.code == 404
    request = urllib.request.Request(llm_server.base_url + "/chat/completions", data=b"not json", method="POST")
    with pytest.raises(urllib.error.HTTPError) as info2:
        urllib.request.urlopen(request, timeout=5)
    assert info2.value.code == 400 and "not JSON" in json.loads(info2.value.read())["error"]["message"]
