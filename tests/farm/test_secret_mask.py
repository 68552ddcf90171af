"""A typed secret never leaves the run (``mobile_agent.agent.mask``): end to end over adb with
the scripted model, a ``{{secret:pin}}`` is typed into a note's title field (a plain text field,
not a password field) on the simulated phone and the run goes on for several steps; every image
the model server received is read with the agent's own OCR in the test, and no line of any of
them shows the value or four characters of it in a row; no request body holds it; the plan
cache the run wrote holds none of it. The same for a value too long for its field (the field
scrolls: it shows only a part)."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from mobile_agent.agent.mask import SecretText
from mobile_agent.locate import build_locator
from mobile_agent.replay import PlanStore
from mobile_agent.settings import PerceptionSettings
from perception.text_match import fold
from tests.agent_helpers import DONE, cli_env, plan_reply, run_cli

pytestmark = pytest.mark.slow

SECRET = "Quokka7731Zz"
LONG_SECRET = "Quokka7731ZzPangolin4896Wombat52Kestrel"  # wider than the title field: it scrolls


def _fragments(secret: str) -> set[str]:
    folded = fold(secret).replace(" ", "")
    return {folded[i : i + 4] for i in range(len(folded) - 3)}


def _showing(texts: list[str], secret: str) -> list[str]:
    """The texts that hold the secret or four of its characters in a row."""
    fragments = _fragments(secret)
    return [t for t in texts if any(f in fold(t).replace(" ", "") for f in fragments)]


def _texts_of(value: Any) -> list[str]:
    """Every string of a JSON value (keys and values), each whole."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (key, *_texts_of(item))]
    if isinstance(value, list):
        return [text for item in value for text in _texts_of(item)]
    return []


def _ocr_texts(image: bytes | np.ndarray) -> list[str]:
    """Every OCR line of an image, read by the agent's own OCR (upscaled to the phone's
    width first: the model's copy is downscaled)."""
    if isinstance(image, bytes):
        pil = Image.open(io.BytesIO(image)).convert("RGB")
        if pil.width < 1080:
            pil = pil.resize((1080, round(pil.height * 1080 / pil.width)), Image.Resampling.BICUBIC)
        pixels = np.asarray(pil)
    else:
        pixels = np.ascontiguousarray(image[:, :, :3])
    locator = build_locator(PerceptionSettings(detector="proposals", ranker="heuristic"))
    return [line.text for line in locator.ocr(pixels)]


def _run_cli(adb_port: int, serial: str, llm: Any, out: Path, instruction: str, secret: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(adb_port, MOBILE_AGENT_PLANNER__BASE_URL=llm.base_url, MOBILE_AGENT_PLANNER__API_KEY="sk-test-5531",
                  MOBILE_AGENT_AGENT__NAMED_SECRETS=json.dumps({"pin": secret}),
                  MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5", MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1",
                  MOBILE_AGENT_PERCEPTION__DETECTOR="proposals", MOBILE_AGENT_PERCEPTION__RANKER="heuristic")
    return run_cli("-s", serial, "-o", str(out), "--cache", "-i", instruction, env=env, timeout=240)


_TYPED_THEN_ON = [
    "Open App (Notes)",
    "Click icon (orange plus, bottom right)",
    "Type ({{secret:pin}})",
    "Wait (0.2)",  # the field shows it, focused
    "Back",  # the keyboard goes
    "Back",  # the note is saved: its title shows in the list
    "Wait (0.3)",
]


def _check_what_left(llm: Any, out: Path, secret: str) -> None:
    requests = llm.chat_requests
    images = [image for request in requests for image in request.images()]
    assert len(images) >= 7, len(images)
    for number, image in enumerate(images):
        shown = _showing(_ocr_texts(image), secret)
        assert not shown, f"image {number} sent to the model shows the secret: {shown}"
    for request in requests:
        body = request.body.decode("utf-8")
        assert secret not in body and not _showing([request.text()], secret)
    # the model was told what the black boxes are
    assert any("hide a secret you typed" in request.text() for request in requests)
    cache = out / "plan-cache.sqlite3"
    plans = PlanStore(f"sqlite:///{cache}").list()
    assert plans, "the run taught the cache nothing"
    stored = [text for plan in plans for text in [
        plan.instruction, *plan.final.texts, *(s.action for s in plan.steps),
        *(t for s in plan.steps for t in s.fingerprint.texts)]]
    assert not _showing(stored, secret), f"the plan cache holds the secret: {_showing(stored, secret)}"
    assert secret.lower() not in cache.read_bytes().decode("utf-8", "replace").lower()
    for trajectory in out.glob("*/trajectory.jsonl"):  # the run's records: no part of it in any text of them
        # (their texts, each whole: fold() drops punctuation, so a record's numbers read as one line
        # joined "started_at": 1795693448.96 into "...344896", four characters of the long secret)
        texts = [text for line in trajectory.read_text(encoding="utf-8").splitlines() for text in _texts_of(json.loads(line))]
        assert texts and not _showing(texts, secret), (trajectory, _showing(texts, secret))
        assert secret.lower() not in trajectory.read_text(encoding="utf-8").lower()
    saved = sorted(out.glob("*/*.png")) + sorted(out.glob("*/*.jpg"))  # the saved and annotated frames
    assert len(saved) >= 7
    for image in saved:
        assert not _showing(_ocr_texts(image.read_bytes()), secret), image.name


@pytest.mark.timeout(400)
@pytest.mark.parametrize("secret", [SECRET, LONG_SECRET], ids=["fits", "scrolls"])
def test_a_typed_secret_reaches_neither_the_model_nor_the_plan_cache(adb_server, sim_phone, llm_server, tmp_path,
                                                                     secret):
    llm_server.script([*(plan_reply(a) for a in _TYPED_THEN_ON), plan_reply("Stop"), DONE])
    run = _run_cli(adb_server.port, sim_phone.serial, llm_server, tmp_path, "Write a note titled {{secret:pin}}", secret)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    notes = sim_phone.phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert [n["title"] for n in notes][-1] == secret  # typed whole on the phone
    _check_what_left(llm_server, tmp_path, secret)
    # the phone itself shows it (or, for the long one, a part of it): the test can see a leak
    direct = _ocr_texts(np.asarray(sim_phone.device.screenshot(), dtype=np.uint8))
    assert _showing(direct, secret), direct


def test_secret_text_finds_the_value_its_parts_and_near_misreads() -> None:
    text = SecretText([SECRET, "ab"])
    assert text.shows("Title: Quokka7731Zz") and text.shows("quokka 7731 zz")
    assert text.shows("…7731Zz") and text.shows("Quok…")  # a field that shows a part
    assert text.shows("Qu0kka7731Zz")  # an OCR misread
    assert not text.shows("Quo…") and not text.shows("Notes") and not text.shows("ab")  # too short to be one
    assert text.redact("Text 'Quokka77' not found; closest: 'Quokka7731Zz', 'Notes'") == (
        "Text [REDACTED] not found; closest: [REDACTED] 'Notes'")


def _mcp_image_texts(result: Any) -> list[str]:
    import base64

    (image,) = [c for c in result.content if c.type == "image"]
    return _ocr_texts(base64.b64decode(image.data))


@pytest.mark.timeout(400)
def test_mcp_screenshots_and_find_text_never_show_a_typed_secret(adb_server, sim_phone, tmp_path):
    """Over MCP (``mobile-agent mcp`` on stdio, as a desktop client starts it): a secret typed with
    the ``type`` tool shows in no screenshot, no screenshot resource, and ``find_text`` answers
    for the value and its parts just as for a text the screen does not show."""
    import base64

    import anyio

    from tests.mcp_helpers import mcp_env, stdio_session, tool_json

    env = mcp_env(adb_server.port, MCP_TEST_LOG=str(tmp_path / "server.log"),
                  MOBILE_AGENT_AGENT__NAMED_SECRETS=json.dumps({"pin": SECRET}),
                  MOBILE_AGENT_PERCEPTION__DETECTOR="proposals", MOBILE_AGENT_PERCEPTION__RANKER="heuristic")
    answers: list[Any] = []

    async def main() -> None:
        async with stdio_session(env, "--serial", sim_phone.serial, "--runs-dir", str(tmp_path / "runs")) as session:
            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await session.call_tool(name, args)
                if name != "find_text":  # a find_text answer echoes the client's own guess
                    answers.append(result)
                return result

            assert tool_json(await call("open_app", {"app": "Notes"}))["ok"]
            assert tool_json(await call("click_icon", {"icon": "orange plus", "position": "bottom right"}))["ok"]
            assert tool_json(await call("type", {"text": "{{secret:pin}}"}))["ok"]
            for moment in ("typed", "saved"):
                shot = await call("screenshot", {"max_side": 1080})
                assert not _showing(_mcp_image_texts(shot), SECRET), moment
                resource = await session.read_resource(f"phone://devices/{sim_phone.serial}/screenshot")
                assert not _showing(_ocr_texts(base64.b64decode(resource.contents[0].blob)), SECRET), moment
                absent = tool_json(await call("find_text", {"text": "Zzyzx nowhere"}))
                for guess in (SECRET, "Quokka", "7731", SECRET.lower()):
                    found = tool_json(await call("find_text", {"text": guess}))
                    assert found["status"] == absent["status"] == "not_found", (moment, guess, found)
                    assert set(found) == set(absent) and found["candidates"] == [], found
                    assert "secret" not in json.dumps(found).lower() and "redact" not in json.dumps(found).lower()
                if moment == "typed":  # the cards that locate by text answer a guess as an absent text, and act not
                    missed = tool_json(await session.call_tool("long_press", {"text": "Zzyzx nowhere"}))
                    for guess in (SECRET, "7731"):
                        for card in ("long_press", "click_text"):
                            pressed = tool_json(await session.call_tool(card, {"text": guess}))
                            assert pressed["ok"] is False and pressed["tap_point"] is None, (card, guess, pressed)
                            assert pressed["status"] == missed["status"] and set(pressed) == set(missed), pressed
                            assert "redact" not in json.dumps(pressed).lower() and guess in pressed["action"], pressed
                if moment == "typed":
                    assert tool_json(await call("back", {}))["ok"]  # the keyboard goes
                    assert tool_json(await call("back", {}))["ok"]  # the note is saved: its title is in the list
                    notes = sim_phone.phone.state()["apps"]["com.google.android.keep"]["notes"]
                    assert [n["title"] for n in notes][-1] == SECRET

    anyio.run(main)
    for result in answers:
        texts = [c.text for c in result.content if c.type == "text"]
        assert not _showing(texts, SECRET), texts
    # the phone itself shows it: the checks above could see a leak
    assert _showing(_ocr_texts(np.asarray(sim_phone.device.screenshot(), dtype=np.uint8)), SECRET)


_LIVE_PLAN = [
    "Open App (Notes)", "Click icon (orange plus, bottom right)", "Type ({{secret:pin}})",
    "Wait (0.31)", "Back", "Back", "Wait (0.32)", "Wait (0.33)", "Wait (0.34)", "Wait (0.35)",
]  # fmt: skip


def _watch(url: str, client: Any, task_id: int, calls: Callable[[], int], *, device_screenshot: str | None) -> list[bytes]:
    """Live frames (and the device screenshot, when given) taken from the step after the typing
    to the end of the run."""
    import time

    from tests.server_fixtures import first_live_frame

    deadline = time.monotonic() + 180
    while calls() < 4:  # the model has been asked about the screen after the typing
        assert time.monotonic() < deadline, "the run did not get past the typing"
        assert client.get(f"/v1/tasks/{task_id}").json()["status"] in ("queued", "running")
        time.sleep(0.1)
    frames: list[bytes] = []
    while client.get(f"/v1/tasks/{task_id}").json()["status"] == "running" and time.monotonic() < deadline:
        try:
            taken = [first_live_frame(url, task_id, dict(client.headers))[1]]
        except AssertionError:  # the run ended while the stream started
            break
        if device_screenshot is not None:
            shot = client.get(device_screenshot)
            assert shot.status_code == 200, shot.text
            taken.append(shot.content)
        # kept when the run still went on after them (after the run the phone shows what it shows)
        if client.get(f"/v1/tasks/{task_id}").json()["status"] != "running":
            break
        frames += taken
        time.sleep(0.3)
    return frames


def _check_frames(frames: list[bytes], secret: str) -> None:
    assert len(frames) >= 4, f"only {len(frames)} frames seen during the run"
    for number, frame in enumerate(frames):
        shown = _showing(_ocr_texts(frame), secret)
        assert not shown, f"frame {number} of {len(frames)} shows the secret: {shown}"


def _check_model_requests(llm: Any, secret: str) -> None:
    requests = [r for r in llm.chat_requests if "[t-sec]" in r.text()]
    assert len(requests) >= 7
    for number, image in enumerate(i for r in requests for i in r.images()):
        assert not _showing(_ocr_texts(image), secret), f"image {number} sent to the model shows the secret"
    for request in requests:
        assert secret not in request.body.decode("utf-8") and not _showing([request.text()], secret)


@pytest.mark.timeout(400)
def test_the_live_view_and_the_device_screenshot_never_show_a_typed_secret(service, sim_phones, llm_server):
    """A REST task on the embedded service (real uvicorn, the phone over adb): every live frame
    of ``GET /v1/tasks/{id}/live`` and every ``GET /v1/devices/{serial}/screenshot`` taken while the
    run goes on after the typing, OCR'd; and every image the model server received."""
    from tests.server_fixtures import TaggedPlanner

    (phone,) = sim_phones(1)
    planner = TaggedPlanner(plans={"t-sec": _LIVE_PLAN}, delay_s={"t-sec": 0.6})
    live = service([phone], planner=planner, **{"agent.named_secrets": {"pin": SECRET},
                                                 "perception.detector": "proposals", "perception.ranker": "heuristic"})
    task = live.submit("[t-sec] write a note titled {{secret:pin}}")
    frames = _watch(live.url, live.client, task["id"], lambda: planner.calls.get("t-sec", 0),
                    device_screenshot=f"/v1/devices/{phone.serial}/screenshot")
    done = live.wait_task(task["id"], timeout=120)
    assert done["status"] == "completed", done
    notes = phone.phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert [n["title"] for n in notes][-1] == SECRET
    _check_frames(frames, SECRET)
    _check_model_requests(llm_server, SECRET)
    assert _showing(_ocr_texts(np.asarray(phone.device.screenshot(), dtype=np.uint8)), SECRET)  # a leak would show


@pytest.mark.postgres
@pytest.mark.timeout(400)
def test_a_farm_worker_s_run_keeps_the_secret_on_the_phone(pg_database, tmp_path, adb_server, sim_phones,
                                                          llm_server):
    """The same run under the farm: a ``mobile-agent worker`` process runs it, the API server holds
    no phone; the live frames relayed through the shared folder and the model's images hide it."""
    from tests.farm_fixtures import start_farm_api, start_worker, wait_free
    from tests.server_fixtures import TaggedPlanner

    (phone,) = sim_phones(1)
    planner = TaggedPlanner(plans={"t-sec": _LIVE_PLAN}, delay_s={"t-sec": 0.6})
    llm_server.script([], default=planner)
    secrets = {"named_secrets": {"pin": SECRET}}
    worker = start_worker(tmp_path, "h1", database=pg_database, adb_port=adb_server.port, serials=[phone.serial],
                          planner_url=llm_server.base_url, agent=secrets)
    api = start_farm_api(tmp_path, pg_database, planner_url=llm_server.base_url,
                         **{"agent.named_secrets": {"pin": SECRET}})
    try:
        wait_free(api, [phone.serial], workers=[worker])
        task = api.submit("[t-sec] write a note titled {{secret:pin}}")
        frames = _watch(api.url, api.client, task["id"], lambda: planner.calls.get("t-sec", 0), device_screenshot=None)
        done = api.wait_task(task["id"], timeout=120)
        assert done["status"] == "completed", (done, worker.text()[-3000:])
    finally:
        api.stop()
        worker.stop()
    notes = phone.phone.state()["apps"]["com.google.android.keep"]["notes"]
    assert [n["title"] for n in notes][-1] == SECRET
    _check_frames(frames, SECRET)
    _check_model_requests(llm_server, SECRET)


def _has_black_box(image: np.ndarray, side: int = 16) -> bool:
    """Whether ``image`` holds a ``side`` x ``side`` square of pure black (what masking fills;
    the simulated phone's light screens draw none)."""
    zero = (np.asarray(image)[:, :, :3] == 0).all(axis=2).astype(np.int32)
    sums = np.pad(zero.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    windows = sums[side:, side:] - sums[:-side, side:] - sums[side:, :-side] + sums[:-side, :-side]
    return bool((windows == side * side).any())


class _CountingReader:
    """Perception's full-frame reader, counting the frames it reads (by content)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "counted")
        self.reads: dict[str, int] = {}
        self.masked = 0  # reads of a masked copy


    def read(self, image: np.ndarray) -> Any:
        from perception.cache import frame_key

        key = frame_key(image)
        self.reads[key] = self.reads.get(key, 0) + 1
        if _has_black_box(image):
            self.masked += 1
        return self.inner.read(image)

    def describe(self) -> str:
        return str(self.inner.describe())


@pytest.mark.timeout(300)
@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_masking_reads_each_frame_once_and_the_step_reuses_it(adb_server, sim_phone, llm_server, tmp_path,
                                                              cache):
    """No second OCR per frame: once the secret is typed every planner frame is read by the masking
    step, and that read is the frame's one: the step's operations (Click icon, the guard) and the
    plan cache's fingerprints find it in perception's cache, and no masked copy is ever read."""
    from mobile_agent.agent import Agent, RunStatus
    from mobile_agent.locate import PerceptionLocator, perception_config
    from perception import Perception
    from tests.agent_helpers import agent_settings

    settings = agent_settings(adb_server.port, sim_phone.serial, tmp_path, llm_server,
                              named_secrets={"pin": SECRET}).with_overrides(
        {"perception.detector": "proposals", "perception.ranker": "heuristic", "cache.enabled": cache})
    perception = Perception(perception_config(settings.perception))
    counter = _CountingReader(perception._reader)
    perception._reader = counter  # a probe on the one full-frame reader (the test's only reach inside)
    llm_server.script([*(plan_reply(a) for a in _TYPED_THEN_ON), plan_reply("Stop"), DONE])
    result = Agent(settings, locator=PerceptionLocator(perception)).run("Write a note titled {{secret:pin}}")
    assert result.status is RunStatus.COMPLETED, result.reason
    assert counter.reads, "nothing was read"
    assert max(counter.reads.values()) == 1, counter.reads  # no frame read twice
    sent = [image for request in llm_server.chat_requests for image in request.images()]
    assert len(sent) >= len(_TYPED_THEN_ON)
    after_typing = len(result.steps) - 3  # the frames planned on after the Type step
    assert len(counter.reads) >= after_typing  # each of them was read (to be masked)
    # and nothing else: no masked copy (the saved frame's, the planner's) is read again
    assert counter.masked == 0, f"{counter.masked} masked copies were read"
    assert len(counter.reads) <= len(result.steps) + 1, (len(counter.reads), len(result.steps))


def test_the_fast_ascii_form_is_perception_s_folding() -> None:
    """Texts are compared in perception's folded form; ASCII takes a shortcut (every log line passes
    here while a run hides a secret): the two agree on every printable ASCII text."""
    import random
    import string

    from mobile_agent.agent.mask import _norm

    rng = random.Random(7)
    texts = ["Quokka7731Zz", "a_b-c d.e", "x&y 50% C++", "e-mail@x.com", "tab\tnew\nline"]
    texts += ["".join(rng.choice(string.printable) for _ in range(24)) for _ in range(500)]
    for text in texts:
        assert _norm(text) == fold(text).replace(" ", ""), text
    assert _norm("Ｑｕｏｋｋａ７７３１") == "quokka7731"  # full width: the folding itself
