"""Questions a test asks the model about one screen: a verdict, or values in a schema.

``ModelJudge(planner_settings)`` sends one screenshot and a question to the planner's
endpoint (``transport.ChatEndpoint``: the same retries, bounds and errors as planning):

- ``extract(instruction, schema, frame)``: the answer is an instance of ``schema`` (an
  ``AnswerSchema``: a pydantic model, or a JSON Schema read from a flow). The schema goes
  to the model the way its dialect takes it (``answer_mode``): as a function to call
  (``tools``, the function-calling dialect), as OpenAI's JSON mode with the schema
  (``json``: ``response_format`` ``json_schema``, OpenAI's own endpoint), or written in the
  prompt (``prompt``: every other model). An answer that does not validate is sent back
  with the validation errors, at most ``attempts`` times in all, then ``ExtractionError``.
- ``check(statement, frame)``: ``extract`` with the ``CheckAnswer`` schema, as a
  ``Verdict`` (passed, the model's reason, the frame it judged).

May import: ``mobile_agent`` (planner, settings, errors), pydantic, jsonschema.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from mobile_agent.errors import MobileAgentError
from mobile_agent.operations.context import ScreenshotLike
from mobile_agent.planner.dialects import dialect_for
from mobile_agent.planner.images import encode_image
from mobile_agent.planner.transport import OPENAI_BASE_URL, ChatEndpoint, shared_client, shown_url
from mobile_agent.planner.types import Usage
from mobile_agent.settings import PlannerSettings

__all__ = [
    "AnswerMode",
    "AnswerSchema",
    "CheckAnswer",
    "ExtractionError",
    "ModelJudge",
    "Verdict",
    "answer_mode",
    "read_json",
]

T = TypeVar("T")
AnswerMode = Literal["tools", "json", "prompt"]
ANSWER_FUNCTION = "answer"
DEFAULT_ATTEMPTS = 3
_MAX_PROBLEMS = 8  # validation errors sent back to the model, and shown in an error


class ExtractionError(MobileAgentError):
    """The model's answer never validated: ``instruction``, ``attempts``, ``problems`` (the
    last answer's validation errors), ``last_reply``."""


class CheckAnswer(BaseModel):
    """What the model answers to a check."""

    passed: bool = Field(description="true when the statement is true of the screen")
    reason: str = Field(description="one sentence: what on the screen shows it")


@dataclass(frozen=True)
class Verdict:
    """A check's outcome: the model's verdict and reason, and the frame it judged."""

    statement: str
    passed: bool
    reason: str
    screenshot: ScreenshotLike | None = field(repr=False, default=None)
    screenshot_path: Path | None = None
    usage: Usage = field(default_factory=Usage)

    def __bool__(self) -> bool:
        return self.passed


@dataclass(frozen=True)
class AnswerSchema(Generic[T]):
    """A schema the answer must validate against: its JSON Schema (sent to the model) and a
    validator (raises ``ValueError`` with the problems, one per line)."""

    name: str
    json_schema: dict[str, Any]
    validate: Callable[[Any], T]

    @staticmethod
    def of_model(model: type[Any]) -> AnswerSchema[Any]:
        """A pydantic model (or any type pydantic validates)."""
        adapter: TypeAdapter[Any] = TypeAdapter(model)

        def validate(value: Any) -> Any:
            try:
                return adapter.validate_python(value)
            except ValidationError as exc:
                raise ValueError("\n".join(_pydantic_problems(exc))) from None

        return AnswerSchema(getattr(model, "__name__", "answer"), adapter.json_schema(), validate)

    @staticmethod
    def of_json_schema(schema: dict[str, Any], name: str = "answer") -> AnswerSchema[Any]:
        """A JSON Schema (a flow's ``schema:`` file); the answer stays JSON data."""
        import jsonschema

        validator_type = jsonschema.validators.validator_for(schema)
        validator_type.check_schema(schema)
        validator = validator_type(schema)

        def validate(value: Any) -> Any:
            problems = [
                f"{'/'.join(str(p) for p in error.absolute_path) or '(the answer)'}: {error.message}"
                for error in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
            ]
            if problems:
                raise ValueError("\n".join(problems[:_MAX_PROBLEMS]))
            return value

        return AnswerSchema(name, schema, validate)


def _pydantic_problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors()[:_MAX_PROBLEMS]:
        where = ".".join(str(p) for p in error["loc"]) or "(the answer)"
        problems.append(f"{where}: {error['msg']}")
    return problems


def answer_mode(settings: PlannerSettings) -> AnswerMode:
    """How a schema goes to this model: function calling for the function-calling dialect,
    JSON mode for the paper's dialect on OpenAI's own endpoint (which has structured
    outputs), the schema in the prompt for every other model and server."""
    dialect, _ = dialect_for(settings)
    if dialect.name == "function_calling":
        return "tools"
    if dialect.name == "paper" and (settings.base_url or OPENAI_BASE_URL).rstrip("/") == OPENAI_BASE_URL:
        return "json"
    return "prompt"


@functools.cache
def _prompt(name: str) -> Template:
    text = resources.files("mobile_agent.testing.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")
    return Template(text)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def read_json(text: str) -> Any:
    """The JSON value of a reply: a fenced block, else the first object or array in it
    (``ValueError`` when there is none)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        stripped = candidate.strip()
        for start, char in enumerate(stripped):
            if char in "{[":
                try:
                    value, _ = decoder.raw_decode(stripped[start:])
                except json.JSONDecodeError:
                    continue
                return value
    raise ValueError("the answer has no JSON object")


class ModelJudge:
    """The planner's endpoint asked about single screens. Thread-safe; ``usage`` sums every call."""

    def __init__(self, settings: PlannerSettings, *, endpoint: ChatEndpoint | None = None) -> None:
        self.settings = settings
        if endpoint is None:
            client = shared_client(settings)
            endpoint = ChatEndpoint(settings, client, shown_url(str(client.base_url)))
        self._chat = endpoint
        self.mode: AnswerMode = answer_mode(settings)
        self._lock = threading.Lock()
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        with self._lock:
            return self._usage

    def check(self, statement: str, frame: ScreenshotLike, *, attempts: int = DEFAULT_ATTEMPTS) -> Verdict:
        """Is ``statement`` true of ``frame``? The verdict with the model's reason."""
        statement = _checked(statement, "statement")
        before = self.usage
        answer = self._ask(
            "check", {"statement": statement}, AnswerSchema.of_model(CheckAnswer), frame, attempts, statement
        )
        after = self.usage
        spent = Usage(after.prompt_tokens - before.prompt_tokens, after.completion_tokens - before.completion_tokens,
                      0.0, calls=after.calls - before.calls)  # fmt: skip
        return Verdict(statement, bool(answer.passed), str(answer.reason), frame, usage=spent)

    def extract(
        self, instruction: str, schema: AnswerSchema[T], frame: ScreenshotLike, *, attempts: int = DEFAULT_ATTEMPTS
    ) -> T:
        """The values ``instruction`` asks for, read from ``frame``, validated by ``schema``."""
        instruction = _checked(instruction, "instruction")
        return self._ask("extract", {"instruction": instruction}, schema, frame, attempts, instruction)

    def _ask(
        self, prompt: str, values: dict[str, str], schema: AnswerSchema[T], frame: ScreenshotLike, attempts: int, what: str
    ) -> T:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        schema_text = json.dumps(schema.json_schema, ensure_ascii=False, indent=1)
        kwargs: dict[str, Any] = {}
        if self.mode == "tools":
            fmt = f"Call the function `{ANSWER_FUNCTION}` with the values."
            kwargs["tools"] = [{"type": "function", "function": {
                "name": ANSWER_FUNCTION, "description": "the answer, in the test's schema", "parameters": schema.json_schema}}]  # fmt: skip
            kwargs["tool_choice"] = {"type": "function", "function": {"name": ANSWER_FUNCTION}}
        elif self.mode == "json":
            fmt = "Answer with one JSON object in the given schema."
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": _schema_name(schema.name), "schema": schema.json_schema}}  # fmt: skip
        else:
            fmt = (
                "Answer with one JSON object that validates against this JSON Schema, in a ```json block, "
                f"and nothing else:\n```json\n{schema_text}\n```"
            )
        text = _prompt(prompt).safe_substitute(format=fmt, **values)
        image = encode_image(frame, self.settings.image_long_side, self.settings.jpeg_quality).data_url
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": image}}]}
        ]
        problems: list[str] = []
        reply = ""
        for _ in range(attempts):
            answer = self._chat.complete(messages, purpose=prompt, **kwargs)
            self._count(answer.prompt_tokens, answer.completion_tokens)
            reply = answer.text
            arguments = [c["function"]["arguments"] for c in answer.tool_calls if c["function"]["name"] == ANSWER_FUNCTION]
            try:
                value = json.loads(arguments[0]) if arguments else read_json(answer.text)
                return schema.validate(value)
            except ValueError as exc:  # json.JSONDecodeError is one too
                problems = str(exc).splitlines()[:_MAX_PROBLEMS] or [type(exc).__name__]
                reply = arguments[0] if arguments else answer.text
            messages = [
                *messages,
                {"role": "assistant", "content": reply[:2000] or "(no answer)"},
                {"role": "user", "content": "Your answer does not validate against the schema:\n"
                 + "\n".join(f"- {p}" for p in problems) + f"\n{fmt}"},
            ]  # fmt: skip
        raise ExtractionError(
            f"the model's answer to {what!r} did not validate after {attempts} attempt{'s' if attempts != 1 else ''}: "
            + "; ".join(problems),
            instruction=what,
            attempts=attempts,
            problems=problems,
            last_reply=reply[:500],
        )

    def _count(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._usage = self._usage + Usage(prompt_tokens, completion_tokens, 0.0, calls=1)


def _schema_name(name: str) -> str:
    # OpenAI's json_schema name: letters, digits, _ and -, at most 64
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "answer"


def _checked(text: str, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the {what} must be a non-empty text, got {text!r}")
    return text.strip()
