"""The planner: a multimodal chat model behind any OpenAI-compatible endpoint.

``Planner(settings.planner)`` talks to OpenAI, DashScope's compatible mode (Qwen-VL),
vLLM, SGLang, Ollama or LM Studio through the official ``openai`` client, with the
client's own retries off and bounded retries of our own (``transport.ChatEndpoint``:
backoff with jitter, errors that name the endpoint, answers read with bounds).

What the model sees at each step: the system prompt (instruction + operation cards),
the operation history as text, the last step's feedback, and **one** screenshot,
downscaled (two when reflecting: the previous and the current). Never every past
screenshot.

May import: openai, numpy, Pillow, mobile_agent.errors/settings/operations, perception.types.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from importlib import resources
from string import Template
from typing import Any

import numpy as np
import openai
from PIL import Image

from mobile_agent.errors import OperationError, PlannerError, PlannerResponseError, PlannerUnreachableError
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import REGISTRY, OperationRegistry, parse_action
from mobile_agent.planner.dialects import Dialect, PaperDialect, dialect_for
from mobile_agent.planner.geometry import Viewport, image_shrunk_by_server, viewport_for
from mobile_agent.planner.images import EncodedImage, Framed, Picture, encode_image, pixels_of
from mobile_agent.planner.models import PAPER
from mobile_agent.planner.phones import phone_name, phone_note
from mobile_agent.planner.replies import parse_choice, parse_verdict, split_plan_reply
from mobile_agent.planner.transport import (
    OPENAI_BASE_URL,
    ChatEndpoint,
    cap_reply,
    shared_client,
    shown_url,
)
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage
from mobile_agent.settings import PlannerSettings
from perception.types import Box, Candidate, Location

__all__ = ["Planner", "Picture", "cap_reply", "load_prompt"]

log = logging.getLogger(__name__)

_CROP_LONG_SIDE = 512
_HISTORY_LIMIT = 40
# Encodings kept: the current frame and the previous one (a Stop's completion check
# re-sends the current frame; a reflection re-sends the previous one).
_ENCODED_FRAMES = 2


@functools.cache
def load_prompt(name: str) -> Template:
    """A prompt template from ``mobile_agent/planner/prompts/<name>.md`` (read once per
    process: a ``Template`` is immutable)."""
    text = resources.files("mobile_agent.planner.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")
    return Template(text)


class Planner:
    """One model endpoint. Thread-safe; ``usage`` sums every call since creation."""

    def __init__(
        self,
        settings: PlannerSettings,
        *,
        registry: OperationRegistry | None = None,
        client: openai.OpenAI | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        history_limit: int = _HISTORY_LIMIT,
    ) -> None:
        self.settings = settings
        self.registry = registry if registry is not None else REGISTRY
        self._client = client or shared_client(settings)
        # named in the errors: which endpoint failed is the first thing to check
        shown = shown_url(str(self._client.base_url or settings.base_url or OPENAI_BASE_URL))
        self._chat = ChatEndpoint(settings, self._client, shown, sleep=sleep, rng=rng)
        self._history_limit = history_limit
        self._lock = threading.Lock()
        self._usage = Usage()
        self._local = threading.local()  # last_choice_usage is per calling thread (one run each)
        self._prompts = {n: load_prompt(n) for n in ("system", "step", "reflection", "choose", "completion")}
        self._encoded: list[
            tuple[Framed, int | tuple[int, int], EncodedImage]
        ] = []  # (frame, long side or size, encoding), newest first
        # how the model is prompted and read: the settings' dialect, or the one its name calls for
        if registry is not None:
            self.dialect: Dialect = PaperDialect()
            self.profile = PAPER
        else:
            self.dialect, self.profile = dialect_for(settings)
        # set when a grounded model's server is seen resizing our images (planner.geometry)
        self.image_warning: str | None = None

    # --- usage ---------------------------------------------------------------------
    @property
    def usage(self) -> Usage:
        with self._lock:
            return self._usage

    @property
    def last_choice_usage(self) -> Usage:
        """The usage of this thread's last ``choose_candidate`` (one or two calls)."""
        return getattr(self._local, "choice_usage", Usage())

    @last_choice_usage.setter
    def last_choice_usage(self, value: Usage) -> None:
        self._local.choice_usage = value

    def _count(self, prompt_tokens: int, completion_tokens: int) -> Usage:
        usage = Usage(prompt_tokens, completion_tokens, self._cost(prompt_tokens, completion_tokens), calls=1)
        with self._lock:
            self._usage = self._usage + usage
        return usage

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        prices = self.settings.prices.get(self.settings.model)
        if prices is None:  # a dated model name ("gpt-4o-2024-08-06"): the longest matching prefix
            keys = [k for k in self.settings.prices if self.settings.model.startswith(k)]
            prices = self.settings.prices[max(keys, key=len)] if keys else {}
        return (
            prompt_tokens * prices.get("input", 0.0) + completion_tokens * prices.get("output", 0.0)
        ) / 1e6

    # --- the three questions ---------------------------------------------------------
    def plan(self, request: PlanRequest) -> PlanReply:
        """Ask for the next operation (in this planner's dialect)."""
        dialect = self.dialect
        if dialect.uses_paper_prompt:
            messages = self.plan_messages(request)
            tools = dialect.tools()
            text, usage = self._complete(messages, purpose="plan", tools=tools)
            calls = self._last_tool_calls()
            observation, thought, action = split_plan_reply(text)
            if tools:  # function calling: the call is the step, the text its Observation and Thought
                action = self._called(text, calls, action)
            return PlanReply(observation, thought, action, text, usage, tool_calls=calls)
        viewport = self.viewport(request.screenshot)
        feedback = [*request.feedback, *request.notes, *([request.reflection_note] if request.reflection_note else [])]
        size = (viewport.image_width, viewport.image_height)
        messages = dialect.messages(
            request.instruction, request.history, feedback, viewport,
            lambda: self._image_part(request.screenshot, size=size), platform=request.platform,
        )  # fmt: skip
        text, usage = self._complete(messages, purpose="plan")
        self._check_image_size(usage, viewport)
        calls = self._last_tool_calls()
        thought, action_text = "", text.strip()
        try:
            read = dialect.parse(text, viewport, calls)
            thought, action_text = read.thought, read.action.raw
        except OperationError:
            pass  # parse() says so to the loop, with the message for the model
        return PlanReply("", thought, action_text, text, usage, tool_calls=calls, viewport=viewport)

    def _called(self, text: str, calls: tuple[dict[str, Any], ...], written: str) -> str:
        """A function-calling reply's step: the operation its call names, as the paper writes
        it (``Open App (Settings)``: the progress, the history sent back, a hand-over's
        question), or the call as sent when it does not parse (the loop says why)."""
        try:
            action: ParsedAction = self.dialect.parse(text, Viewport(1, 1, 1, 1), calls).action
            return action.text
        except OperationError:
            if calls:
                return "; ".join(f"{c['function']['name']}({c['function']['arguments']})" for c in calls)
            return written

    def _check_image_size(self, usage: Usage, viewport: Viewport) -> None:
        """Warn once when the server shrank the image (its max_pixels below ours)."""
        if self.image_warning is None:
            warning = image_shrunk_by_server(
                usage.prompt_tokens, viewport, self.dialect.image_rule(self.profile.image)
            )
            if warning is not None:
                self.image_warning = warning
                log.warning("%s", warning)

    def viewport(self, screenshot: Picture) -> Viewport:
        """The frame as this planner's dialect sees it: screen size, image size, coordinate space."""
        height, width = pixels_of(screenshot).shape[:2]
        return viewport_for(width, height, self.dialect.image_rule(self.profile.image), self.dialect.space)

    def parse(self, reply: PlanReply) -> ParsedAction:
        """The operation of a ``plan`` reply, read by this planner's dialect (the paper's:
        the whole reply, ``parse_action`` finds its last Action section)."""
        if isinstance(self.dialect, PaperDialect):
            return parse_action(reply.raw or reply.action_text or "", self.registry)
        viewport = reply.viewport
        if viewport is None:  # the paper's dialects have no points
            viewport = Viewport(1, 1, 1, 1)
        action: ParsedAction = self.dialect.parse(reply.raw or "", viewport, reply.tool_calls).action
        return action

    def plan_messages(self, request: PlanRequest) -> list[dict[str, Any]]:
        """The chat messages of one planning call (public for tests and benchmarks)."""
        if not request.instruction or not request.instruction.strip():
            raise ValueError("the instruction is empty")
        note = phone_note(request.platform)
        system = self._prompts["system"].safe_substitute(
            instruction=request.instruction.strip(), operations=self.registry.cards_prompt(),
            phone=phone_name(request.platform), phone_note=f"- {note}\n" if note else "",
        )
        feedback = ""
        if request.feedback or request.notes:
            lines = "\n".join(f"- {f}" for f in [*request.feedback, *request.notes] if f)
            feedback = f"## Feedback on your last operation\n\n{lines}\n\n"
        reflection = ""
        reflecting = request.previous_screenshot is not None
        if reflecting or request.reflection_note:
            compare = (
                "Compare the previous screenshot (before your last operation) with the current one."
                if reflecting
                else "Look at the current screenshot."
            )
            reflection = (
                self._prompts["reflection"].safe_substitute(
                    note=request.reflection_note or "", compare=compare
                )
                + "\n"
            )
        shots = (
            "The first image is the previous screenshot (before your last operation); the second is the current one."
            if reflecting
            else "The image is the current screenshot."
        )
        text = self._prompts["step"].safe_substitute(
            history=self._history_text(request.history),
            feedback=feedback,
            reflection=reflection,
            screenshots=shots + " What is your next operation?",
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if request.previous_screenshot is not None:
            content.append(self._image_part(request.previous_screenshot))
        content.append(self._image_part(request.screenshot))
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def choose_candidate(
        self, instruction: str, location: Location, screenshot: Picture | None = None
    ) -> int | None:
        """Which of ``location.candidates`` to tap: the crops go to the model with their
        numbers; a bad answer is asked again once, then None. The usage of these calls
        is in ``last_choice_usage`` (and ``usage``)."""
        candidates = list(location.candidates)
        self.last_choice_usage = Usage()
        if not candidates:
            return None
        numbers = [c.index for c in candidates]
        prompt = self._prompts["choose"].safe_substitute(
            instruction=instruction.strip(),
            target=location.target,
            count=len(candidates),
            numbers=", ".join(str(n) for n in numbers),
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
        for cand in candidates:
            crop = self._crop_of(cand, screenshot)
            content.append({"type": "text", "text": f"Candidate {cand.index}:"})
            if crop is not None:
                content.append(self._image_part(crop, long_side=_CROP_LONG_SIDE))
            else:
                content.append({"type": "text", "text": f"(text {cand.text!r} at box {cand.box.as_list()})"})
        messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
        total = Usage()
        for attempt in range(2):
            text, usage = self._complete(messages, purpose="choose")
            total = total + usage
            choice = parse_choice(text, numbers)
            if choice is not None:
                self.last_choice_usage = total
                return choice
            if attempt == 0:
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": f"Your answer {text.strip()[:80]!r} is not one of "
                        f"{', '.join(str(n) for n in numbers)}. Answer with one number only.",
                    },
                ]
        self.last_choice_usage = total
        return None

    def check_completion(
        self, instruction: str, history: Sequence[str], screenshot: Picture
    ) -> CompletionVerdict:
        """A separate call: is the instruction complete on the current screen? A grounded
        dialect's model (UI-TARS, mobile_use, AutoGLM) is not asked a paper-style verdict it
        was not trained for: its "finished" stands."""
        if not self.dialect.uses_paper_prompt:
            return CompletionVerdict(
                True, f"the model answered finished ({self.dialect.name} dialect: no separate check)"
            )
        prompt = self._prompts["completion"].safe_substitute(
            instruction=instruction.strip(), history=self._history_text(history)
        )
        messages = [
            {"role": "user", "content": [{"type": "text", "text": prompt}, self._image_part(screenshot)]}
        ]
        text, usage = self._complete(messages, purpose="completion")
        done, reason = parse_verdict(text)
        if done is None:
            return CompletionVerdict(
                False, f"the completion check gave no verdict: {reason[:200]}", text, usage
            )
        return CompletionVerdict(done, reason, text, usage)

    def list_models(self) -> list[str]:
        """The endpoint's model ids (for ``doctor``); one attempt, errors as PlannerError
        (``PlannerResponseError`` when the answer is not a model list, e.g. an HTML page)."""
        try:
            body = self._client.models.with_raw_response.list().http_response.json()
        except openai.APIConnectionError as exc:
            raise PlannerUnreachableError(f"planner endpoint unreachable: {exc}", attempts=1) from exc
        except openai.APIStatusError as exc:
            raise PlannerError(
                f"planner endpoint answered {exc.status_code}", status_code=exc.status_code, attempts=1
            ) from exc
        except ValueError as exc:  # not JSON
            raise PlannerResponseError(
                "planner endpoint answered something that is not JSON", attempts=1
            ) from exc
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise PlannerResponseError("planner endpoint answered JSON that is not a model list", attempts=1)
        return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]

    # --- pieces ------------------------------------------------------------------------
    def _history_text(self, history: Sequence[str]) -> str:
        if not history:
            return "None yet: this is the first step."
        items = list(history)
        skipped = max(0, len(items) - self._history_limit)
        lines = [f"({skipped} earlier operations omitted)"] if skipped else []
        lines += [f"{i}. {line}" for i, line in enumerate(items[skipped:], start=skipped + 1)]
        return "\n".join(lines)

    def _image_part(
        self, image: Picture, long_side: int | None = None, size: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        encoded = self._encode(image, long_side or self.settings.image_long_side, size)
        return {"type": "image_url", "image_url": {"url": encoded.data_url}}

    def _encode(self, image: Picture, long_side: int, size: tuple[int, int] | None = None) -> EncodedImage:
        """``encode_image``, remembered for the last frames by identity. Only frozen
        screenshots (``Framed``) are remembered: an array or a PIL image may change in place."""
        if isinstance(image, (np.ndarray, Image.Image)):
            return _encoded(image, long_side, self.settings.jpeg_quality, size)
        key = size or long_side
        with self._lock:
            for frame, side, encoded in self._encoded:
                if frame is image and side == key:
                    return encoded
        encoded = _encoded(image, long_side, self.settings.jpeg_quality, size)
        with self._lock:  # the frame is held, so its id cannot be reused while it is here
            self._encoded = [(image, key, encoded), *self._encoded][:_ENCODED_FRAMES]
        return encoded

    def _last_tool_calls(self) -> tuple[dict[str, Any], ...]:
        return tuple(getattr(self._local, "tool_calls", ()))

    def _crop_of(self, cand: Candidate, screenshot: Picture | None) -> np.ndarray | None:
        if cand.crop is not None:
            return cand.crop
        if screenshot is None:
            return None
        pixels = pixels_of(screenshot)
        height, width = pixels.shape[:2]
        box: Box = cand.box.expand(cand.box.width * 0.5 + 20, cand.box.height + 20, width, height)
        left, top, right, bottom = box.as_list()
        if right <= left or bottom <= top:
            return None
        return pixels[top:bottom, left:right]

    def _complete(
        self, messages: list[dict[str, Any]], *, purpose: str, tools: list[dict[str, Any]] | None = None
    ) -> tuple[str, Usage]:
        self._local.tool_calls = ()
        answer = self._chat.complete(messages, purpose=purpose, tools=tools)
        self._local.tool_calls = answer.tool_calls
        return answer.text, self._count(answer.prompt_tokens, answer.completion_tokens)


def _encoded(image: Picture, long_side: int, quality: int, size: tuple[int, int] | None) -> EncodedImage:
    # the paper's call keeps encode_image's three-argument form
    return encode_image(image, long_side, quality) if size is None else encode_image(image, long_side, quality, size)
