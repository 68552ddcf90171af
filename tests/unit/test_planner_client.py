"""The planner against the scripted OpenAI-compatible server, through the real openai client."""

from __future__ import annotations

import io
import socket

import numpy as np
import pytest
from PIL import Image

from mobile_agent.device import Screenshot
from mobile_agent.errors import (
    OperationError,
    PlannerError,
    PlannerResponseError,
    PlannerUnreachableError,
)
from mobile_agent.operations import REGISTRY, parse_action
from mobile_agent.planner import Planner, PlanRequest, Usage, load_prompt
from perception.types import Box, Candidate, LocateStatus, Location
from tests.llm_server import Reply, ScriptedLLMServer

GOOD = "Observation: The home screen.\nThought: Settings is there.\nAction: Open App (Settings)"


def _screen(color: tuple[int, int, int] = (40, 120, 200), size: tuple[int, int] = (1080, 2400)) -> Screenshot:
    width, height = size
    pixels = np.zeros((height, width, 3), np.uint8)
    pixels[:, :] = color
    return Screenshot(pixels=pixels)


def _mean_color(jpeg: bytes) -> tuple[int, ...]:
    with Image.open(io.BytesIO(jpeg)) as img:
        return tuple(int(v) for v in np.asarray(img.convert("RGB")).reshape(-1, 3).mean(axis=0))


class _Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _planner(server: ScriptedLLMServer, sleeps: _Sleeps | None = None, **overrides: object) -> Planner:
    return Planner(server.planner_settings(**overrides), sleep=sleeps if sleeps is not None else _Sleeps())


# --- what the model sees ---------------------------------------------------------------------


def test_plan_sends_instruction_cards_history_feedback_and_one_downscaled_image(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([GOOD])
    planner = _planner(llm_server, image_long_side=1280, jpeg_quality=70)
    request = PlanRequest(
        instruction="Turn on dark mode",
        screenshot=_screen(),
        history=["Open App (Settings) -> ok", "Click text (Display) -> not found"],
        feedback=["'Display' is not on the current screen. The closest texts are: 'Display & brightness'."],
    )
    reply = planner.plan(request)

    assert reply.observation == "The home screen."
    assert reply.thought == "Settings is there."
    assert reply.action_text == "Open App (Settings)"
    assert reply.raw == GOOD
    assert parse_action(reply.action_text).name == "open_app"

    (sent,) = llm_server.chat_requests
    body = sent.json
    assert body["model"] == llm_server.model
    assert body["temperature"] == 0.0 and body["max_tokens"] == 1024
    system = sent.text("system")
    assert "Turn on dark mode" in system
    for card in REGISTRY:
        assert card.syntax in system
    assert "Observation:" in system and "Thought:" in system and "Action:" in system
    user = sent.text("user")
    assert "1. Open App (Settings) -> ok" in user
    assert "2. Click text (Display) -> not found" in user
    assert "'Display & brightness'" in user
    assert "Reflection" not in user
    assert sent.image_sizes() == [(576, 1280)]
    assert sent.image_urls()[0].startswith("data:image/jpeg;base64,")
    assert sent.authorization == "Bearer test-key"


def test_reflection_sends_previous_then_current_and_the_note(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([GOOD])
    planner = _planner(llm_server, image_long_side=640)
    planner.plan(
        PlanRequest(
            instruction="Turn on dark mode",
            screenshot=_screen((0, 0, 255)),
            previous_screenshot=_screen((255, 0, 0)),
            reflection_note="Your last operation 'Click text (Dark mode)' did not change the screen.",
            history=["Click text (Dark mode) -> screen unchanged"],
        )
    )
    (sent,) = llm_server.chat_requests
    images = sent.images()
    assert len(images) == 2
    previous, current = (_mean_color(i) for i in images)
    assert previous[0] > 200 and previous[2] < 50  # red first
    assert current[2] > 200 and current[0] < 50  # blue second
    assert sent.image_sizes() == [(288, 640), (288, 640)]
    user = sent.text("user")
    assert "did not change the screen" in user
    assert "previous screenshot" in user


def test_a_long_run_never_resends_past_screenshots(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([GOOD] * 12)
    planner = _planner(llm_server, image_long_side=256)
    history: list[str] = []
    previous = None
    for step in range(12):
        reflecting = step % 4 == 3
        planner.plan(
            PlanRequest(
                instruction="do it",
                screenshot=_screen((step * 20, 0, 0), (540, 1200)),
                history=list(history),
                previous_screenshot=previous if reflecting else None,
                reflection_note="no change" if reflecting else None,
            )
        )
        history.append(f"Click text (Item {step}) -> ok")
        previous = _screen((step * 20, 0, 0), (540, 1200))
    counts = [len(r.images()) for r in llm_server.chat_requests]
    assert counts == [2 if s % 4 == 3 else 1 for s in range(12)]
    assert "12. " not in llm_server.chat_requests[-1].text() and "11. Click text (Item 10)" in llm_server.chat_requests[-1].text()


def test_a_frame_is_encoded_once_for_its_plan_completion_check_and_reflection(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mobile_agent.planner.client as client_module

    encoded: list[object] = []
    real = client_module.encode_image

    def counting(image: object, long_side: int, quality: int) -> object:
        encoded.append(image)
        return real(image, long_side, quality)

    monkeypatch.setattr(client_module, "encode_image", counting)
    llm_server.script([GOOD, "Yes, done.", GOOD])
    planner = _planner(llm_server, image_long_side=256)
    first, second = _screen((255, 0, 0), (540, 1200)), _screen((0, 0, 255), (540, 1200))
    planner.plan(PlanRequest(instruction="do it", screenshot=first))
    planner.check_completion("do it", [], first)
    planner.plan(PlanRequest(instruction="do it", screenshot=second, previous_screenshot=first, reflection_note="no change"))
    assert encoded == [first, second]
    plan, check, reflect = (r.images() for r in llm_server.chat_requests)
    assert plan == check == reflect[:1] and reflect[1] != plan[0]


def test_history_is_capped(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([GOOD])
    planner = Planner(llm_server.planner_settings(), history_limit=5)
    planner.plan(PlanRequest("x", _screen(size=(300, 600)), history=[f"step {i}" for i in range(1, 13)]))
    text = llm_server.chat_requests[0].text("user")
    assert "(7 earlier operations omitted)" in text
    assert "8. step 8" in text and "12. step 12" in text and "7. step 7" not in text


def test_small_screenshots_are_not_upscaled(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([GOOD])
    planner = _planner(llm_server, image_long_side=1280)
    planner.plan(PlanRequest("x", np.full((800, 360, 3), 128, np.uint8)))
    assert llm_server.chat_requests[0].image_sizes() == [(360, 800)]


def test_empty_instruction_is_refused(llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(ValueError):
        _planner(llm_server).plan(PlanRequest("  ", _screen()))
    assert llm_server.requests == []


def test_prompts_are_package_files() -> None:
    system = load_prompt("system").template
    assert "$instruction" in system and "$operations" in system
    for name in ("step", "reflection", "choose", "completion"):
        assert load_prompt(name).template.strip()


# --- retries ------------------------------------------------------------------------------------


def test_429_then_success_is_retried_with_retry_after(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([Reply(status=429, text="slow down", headers={"Retry-After": "0.03"}), GOOD])
    sleeps = _Sleeps()
    planner = _planner(llm_server, sleeps, max_retries=3, backoff_max_s=1.0)
    reply = planner.plan(PlanRequest("x", _screen()))
    assert reply.action_text == "Open App (Settings)"
    assert len(llm_server.chat_requests) == 2
    assert sleeps == [pytest.approx(0.03)]
    assert planner.usage.calls == 1


def test_a_500_storm_is_bounded_then_planner_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([], default=Reply(status=500, text="overloaded"))
    sleeps = _Sleeps()
    planner = _planner(llm_server, sleeps, max_retries=3, backoff_base_s=0.1, backoff_max_s=0.3)
    with pytest.raises(PlannerError) as info:
        planner.plan(PlanRequest("x", _screen()))
    err = info.value
    assert type(err) is PlannerError
    assert err.status_code == 500 and err.attempts == 4
    assert "overloaded" in err.message and "test-key" not in err.message
    assert len(llm_server.chat_requests) == 4
    assert len(sleeps) == 3
    # exponential with equal jitter: within [ceiling/2, ceiling], ceiling = min(max, base * 2^n)
    for n, slept in enumerate(sleeps):
        ceiling = min(0.3, 0.1 * 2**n)
        assert ceiling / 2 <= slept <= ceiling
    assert planner.usage == Usage()


def test_client_errors_are_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([Reply(status=401, text="bad key")])
    with pytest.raises(PlannerError) as info:
        _planner(llm_server, max_retries=5).plan(PlanRequest("x", _screen()))
    assert info.value.status_code == 401 and info.value.attempts == 1
    assert len(llm_server.chat_requests) == 1


def test_timeouts_are_retried_then_unreachable(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([Reply(text=GOOD, delay_s=1.0), Reply(text=GOOD, delay_s=1.0)])
    planner = _planner(llm_server, timeout_s=0.2, max_retries=1)
    with pytest.raises(PlannerUnreachableError) as info:
        planner.plan(PlanRequest("x", _screen(size=(200, 400))))
    assert info.value.attempts == 2
    assert "timed out" in info.value.message


def test_timeout_then_success(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([Reply(text=GOOD, delay_s=1.0), GOOD])
    reply = _planner(llm_server, timeout_s=0.3, max_retries=2).plan(PlanRequest("x", _screen(size=(200, 400))))
    assert reply.action_text == "Open App (Settings)"


def test_connection_refused_is_unreachable_after_bounded_attempts() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    from mobile_agent.settings import PlannerSettings

    sleeps = _Sleeps()
    planner = Planner(
        PlannerSettings(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=2, backoff_base_s=0.01),
        sleep=sleeps,
    )
    with pytest.raises(PlannerUnreachableError) as info:
        planner.plan(PlanRequest("x", _screen(size=(200, 400))))
    assert info.value.attempts == 3 and len(sleeps) == 2
    assert info.value.to_dict()["type"] == "PlannerUnreachableError"
    assert f"the planner endpoint http://127.0.0.1:{port}/v1 could not be reached" in info.value.message


def test_errors_name_the_endpoint_without_its_credentials() -> None:
    from mobile_agent.planner.transport import shown_url as _shown_url

    assert _shown_url("https://user:secret@example.com:8443/v1/?key=abc#x") == "https://example.com:8443/v1"
    assert _shown_url("http://[::1]:11434/v1") == "http://[::1]:11434/v1"


# --- garbage ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "I cannot help with that.", "Observation: a phone\nThought: hmm", "Action: dance (wildly)", "Action: click text ()"],
)
def test_garbage_text_replies_become_parse_error_data(llm_server: ScriptedLLMServer, text: str) -> None:
    llm_server.script([text])
    reply = _planner(llm_server).plan(PlanRequest("x", _screen(size=(200, 400))))
    assert reply.raw == text
    with pytest.raises(OperationError) as info:
        parse_action(reply.action_text)
    assert info.value.message.startswith("Your ")


@pytest.mark.parametrize(
    "body",
    [b"<html>502 Bad Gateway</html>", b'{"choices": []}', b'{"id": "x", "object": "chat.completion"}', b"null"],
)
def test_unusable_bodies_are_response_errors(llm_server: ScriptedLLMServer, body: bytes) -> None:
    llm_server.script([Reply(body=body)])
    with pytest.raises(PlannerResponseError):
        _planner(llm_server).plan(PlanRequest("x", _screen(size=(200, 400))))


# --- usage and cost -------------------------------------------------------------------------------


def test_usage_and_cost_per_call_and_per_planner(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([Reply(text=GOOD, usage=(1000, 200)), Reply(text=GOOD, usage=(3000, 100))])
    planner = _planner(llm_server, model="gpt-4o")
    first = planner.plan(PlanRequest("x", _screen(size=(200, 400))))
    second = planner.plan(PlanRequest("x", _screen(size=(200, 400))))
    assert first.usage == Usage(1000, 200, pytest.approx((1000 * 2.5 + 200 * 10.0) / 1e6), 1)
    assert second.usage.prompt_tokens == 3000
    total = planner.usage
    assert (total.prompt_tokens, total.completion_tokens, total.calls) == (4000, 300, 2)
    assert total.cost_usd == pytest.approx((4000 * 2.5 + 300 * 10.0) / 1e6)
    assert total.to_dict()["calls"] == 2


@pytest.mark.parametrize(
    "model,expected",
    [("gpt-4o-mini-2024-07-18", (1_000_000 * 0.15 + 1_000_000 * 0.6) / 1e6), ("qwen-vl-max", 0.0)],
)
def test_cost_by_model_prefix(llm_server: ScriptedLLMServer, model: str, expected: float) -> None:
    llm_server.script([Reply(text=GOOD, usage=(1_000_000, 1_000_000))])
    reply = _planner(llm_server, model=model).plan(PlanRequest("x", _screen(size=(200, 400))))
    assert reply.usage.cost_usd == pytest.approx(expected)
    assert llm_server.chat_requests[0].json["model"] == model


# --- candidate choice and completion ---------------------------------------------------------------


def _candidates(with_crops: bool = True) -> Location:
    cands = tuple(
        Candidate(
            index=i,
            box=Box(100, 300 * i, 400, 300 * i + 80),
            text="Search",
            score=0.9,
            crop=np.full((60, 200, 3), 60 * i, np.uint8) if with_crops else None,
        )
        for i in (1, 2, 3)
    )
    return Location(status=LocateStatus.CANDIDATES, target="Search", candidates=cands)


def test_choose_candidate_sends_numbered_crops(llm_server: ScriptedLLMServer) -> None:
    llm_server.script([Reply(text="2", usage=(50, 1))])
    planner = _planner(llm_server)
    assert planner.choose_candidate("search for cats", _candidates()) == 2
    (sent,) = llm_server.chat_requests
    assert sent.image_sizes() == [(200, 60)] * 3
    text = sent.text()
    assert "Candidate 1:" in text and "Candidate 3:" in text and "search for cats" in text and '"Search"' in text
    assert planner.last_choice_usage.prompt_tokens == 50


def test_choose_candidate_asks_again_once(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(["the second one, I think", "Candidate 3"])
    planner = _planner(llm_server)
    assert planner.choose_candidate("x", _candidates()) == 3
    second = llm_server.chat_requests[1]
    assert "is not one of 1, 2, 3" in second.text()
    assert planner.last_choice_usage.calls == 2


def test_choose_candidate_gives_up_after_two_bad_answers(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(["7", "none of them"])
    assert _planner(llm_server).choose_candidate("x", _candidates()) is None
    assert len(llm_server.chat_requests) == 2


def test_choose_candidate_crops_from_the_screenshot_when_needed(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(["1"])
    assert _planner(llm_server).choose_candidate("x", _candidates(with_crops=False), _screen()) == 1
    sizes = llm_server.chat_requests[0].image_sizes()
    assert len(sizes) == 3 and all(w > 300 and h > 80 for w, h in sizes)


@pytest.mark.parametrize(
    "text,done",
    [
        ("Verdict: done\nReason: dark mode is on.", True),
        ("**Verdict:** not done\n**Reason:** the toggle is still off.", False),
        ("Yes, completed.", True),
        ("No. The note is not saved.", False),
        ("The weather is nice.", False),
    ],
)
def test_check_completion(llm_server: ScriptedLLMServer, text: str, done: bool) -> None:
    llm_server.script([text])
    verdict = _planner(llm_server).check_completion("turn on dark mode", ["Click text (Dark mode) -> ok"], _screen())
    assert verdict.done is done
    assert verdict.reason
    assert verdict.raw == text
    (sent,) = llm_server.chat_requests
    assert len(sent.images()) == 1
    assert "turn on dark mode" in sent.text() and "1. Click text (Dark mode) -> ok" in sent.text()


def test_list_models(llm_server: ScriptedLLMServer) -> None:
    assert _planner(llm_server).list_models() == [llm_server.model]


def test_list_models_of_an_endpoint_that_is_not_openai_compatible() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class WebPage(BaseHTTPRequestHandler):  # e.g. base_url pointing at a web UI
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            body = b"<html>login</html>" if "html" in self.path else b'{"models": []}'
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if "html" in self.path else "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), WebPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        from mobile_agent.settings import PlannerSettings

        for path in ("html", "json"):
            settings = PlannerSettings(base_url=f"http://127.0.0.1:{server.server_port}/{path}", timeout_s=5)
            with pytest.raises(PlannerResponseError):
                Planner(settings).list_models()
    finally:
        server.shutdown()
        server.server_close()


def test_the_endpoint_comes_from_settings_only(monkeypatch: pytest.MonkeyPatch, llm_server) -> None:
    from mobile_agent.settings import PlannerSettings

    # the openai library reads these when asked to; a planner never asks
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    llm_server.script([], default="Action: Back")
    request = PlanRequest(instruction="go back", screenshot=np.zeros((64, 64, 3), np.uint8))
    # no base_url in the settings: OpenAI's own endpoint (unreachable here, or refusing the key)
    with pytest.raises(PlannerError) as caught:
        Planner(PlannerSettings(timeout_s=5, max_retries=0)).plan(request)
    assert "https://api.openai.com/v1" in caught.value.message
    assert not llm_server.chat_requests  # the environment's endpoint was never asked
    # a base_url without a key: the request carries no key from the environment
    Planner(PlannerSettings(base_url=llm_server.base_url, max_retries=0)).plan(request)
    (sent,) = llm_server.chat_requests
    assert sent.headers["authorization"].startswith("Bearer ") and "sk-from-env" not in sent.headers["authorization"]
