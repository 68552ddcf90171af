"""T3-Agent's two MLLM verifiers for the data engine: the query judge and the trajectory judge.

- ``QueryJudge``: is the instruction clear and feasible on this phone? It sees the
  instruction, the phone's installed apps and the first screenshot of the run.
- ``TrajectoryJudge``: did the steps achieve it, were they reasonable, no loops or
  pointless actions? It sees the instruction, every step's thought, action and outcome,
  the final answer and a few key screenshots (the first, the last, evenly spaced ones).

Both speak to an OpenAI-compatible endpoint through the planner's own transport
(``mobile_agent.planner.transport.ChatEndpoint``: bounded retries, bounded reads, errors
that name the endpoint) and read the reply with ``verdicts.parse_judge_reply``. Their
prompts are package files (``eval/data_engine/prompts/*.md``). A judge never raises on a
model's mistake: an unusable reply or a failed endpoint is a ``Verdict`` with ``passed``
None and the reason, kept in the run's verification (model mistakes are data).

May import: openai, numpy, Pillow, mobile_agent (planner transport and images, settings,
errors), eval.data_engine.verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import numpy as np
import openai
from PIL import Image

from eval.data_engine.verdicts import Verdict, VerdictReplyError, VerifierName, parse_judge_reply
from mobile_agent.errors import PlannerError
from mobile_agent.planner import ChatEndpoint, encode_image, shared_client, shown_url
from mobile_agent.settings import PlannerSettings

__all__ = ["JudgeEndpoint", "QueryJudge", "TrajectoryJudge", "key_screens", "load_prompt", "read_screen"]

MAX_KEY_SCREENS = 3
_STEP_CHARS = 400  # one step's line in the prompt: thought, action and outcome, cut


def load_prompt(name: str) -> Template:
    """A verifier prompt from ``eval/data_engine/prompts/<name>.md``."""
    return Template(resources.files("eval.data_engine.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8"))


class JudgeEndpoint:
    """One judge model behind an OpenAI-compatible endpoint (the planner settings' fields:
    base_url, api_key, model, retries, image size). ``client`` for tests that bring their own."""

    def __init__(self, settings: PlannerSettings, *, client: openai.OpenAI | None = None) -> None:
        self.settings = settings
        self.model = settings.model
        client = client or shared_client(settings)
        self._chat = ChatEndpoint(settings, client, shown_url(str(client.base_url)))

    def ask(self, verifier: VerifierName, text: str, images: Sequence[np.ndarray]) -> Verdict:
        """One question, one verdict; an endpoint failure or an unusable reply is a
        verdict with ``passed`` None that says so."""
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for pixels in images:
            encoded = encode_image(pixels, self.settings.image_long_side, self.settings.jpeg_quality)
            content.append({"type": "image_url", "image_url": {"url": encoded.data_url}})
        try:
            answer = self._chat.complete([{"role": "user", "content": content}], purpose=verifier)
            accepted, reason = parse_judge_reply(answer.text)
        except PlannerError as exc:
            return Verdict(verifier=verifier, passed=None, model=self.model,
                           reason=f"the judge's endpoint failed: {exc.message}"[:500])
        except VerdictReplyError as exc:
            return Verdict(verifier=verifier, passed=None, model=self.model,
                           reason=f"unusable reply: {exc.message}"[:500])
        return Verdict(verifier=verifier, passed=accepted, reason=reason, model=self.model,
                       prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens)


def read_screen(path: Path) -> np.ndarray | None:
    try:
        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"))
    except OSError:
        return None


def key_screens(folder: Path, steps: list[dict[str, Any]], result: dict[str, Any] | None,
                limit: int = MAX_KEY_SCREENS) -> list[tuple[str, np.ndarray]]:
    """(label, pixels) of the run's key screens: the first, evenly spaced middle ones, and
    the screen after the last action (``final.png`` when the run left one)."""
    found = [(f"before step {s['index']}", s.get("screenshot")) for s in steps]
    found.append(("the last screen", (result or {}).get("final_screenshot")))
    names = [(label, str(name)) for label, name in found if name and (folder / str(name)).is_file()]
    if len(names) > limit:
        picks = sorted({round(i * (len(names) - 1) / (limit - 1)) for i in range(limit)}) if limit > 1 else [len(names) - 1]
        names = [names[i] for i in picks]
    screens = [(label, read_screen(folder / name)) for label, name in names]
    return [(label, pixels) for label, pixels in screens if pixels is not None]


class QueryJudge:
    """Is the instruction clear and feasible on this phone?"""

    name: VerifierName = "query_judge"

    def __init__(self, endpoint: JudgeEndpoint) -> None:
        self.endpoint = endpoint
        self.prompt = load_prompt("query_verifier")

    def judge(self, instruction: str, installed_apps: Sequence[str] | None, first_screen: np.ndarray | None) -> Verdict:
        apps = ", ".join(sorted(installed_apps)) if installed_apps else "not known (see the screen)"
        text = self.prompt.safe_substitute(instruction=instruction.strip(), apps=apps)
        return self.endpoint.ask(self.name, text, [first_screen] if first_screen is not None else [])


class TrajectoryJudge:
    """Did the steps achieve the instruction, reasonably, without loops or pointless actions?"""

    name: VerifierName = "trajectory_judge"

    def __init__(self, endpoint: JudgeEndpoint, *, max_screens: int = MAX_KEY_SCREENS) -> None:
        self.endpoint = endpoint
        self.prompt = load_prompt("trajectory_verifier")
        self.max_screens = max_screens

    def judge(self, instruction: str, folder: Path, steps: list[dict[str, Any]], result: dict[str, Any] | None) -> Verdict:
        lines = []
        for s in steps:
            outcome = s.get("feedback") or ("done" if s.get("ok") else "failed")
            if s.get("screen_changed") is False:
                outcome += " (the screen did not change)"
            line = f"{s['index']}. thought: {s.get('thought') or '-'} | action: {s.get('action_text') or '(none)'} | {outcome}"
            lines.append(" ".join(line.split())[:_STEP_CHARS])
        screens = key_screens(folder, steps, result, self.max_screens)
        answer = (result or {}).get("answer") or (result or {}).get("reason") or "(none)"
        text = self.prompt.safe_substitute(
            instruction=instruction.strip(), steps="\n".join(lines) or "(no steps)", answer=str(answer)[:500],
            images=", ".join(label for label, _ in screens) or "none")
        return self.endpoint.ask(self.name, text, [pixels for _, pixels in screens])
