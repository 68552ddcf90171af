"""The agent with a tester's questions: ``check``, ``verify``, ``extract``, ``wait_for``.

``mobile_agent.testing.Agent`` is the agent (``run`` carries out instructions as ever) plus
questions about the current screen, answered by the model (``judge.ModelJudge``), and a
``phone`` (``testing.Phone``) for perception-only assertions on the same device::

    with Agent(settings) as agent:                    # closes the phone it opened at the end
        agent.run("Add a note titled Groceries")
        agent.phone.assert_visible("Groceries")       # OCR, no model
        agent.verify("the note list shows Groceries")  # the model's verdict, AssertionError if false
        order = agent.extract("the order total and the item names", schema=Order)

May import: ``mobile_agent`` (agent, device, planner, settings), this package.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, TypeVar

from mobile_agent.agent import Agent as BaseAgent
from mobile_agent.agent import RunResult
from mobile_agent.agent.redact import Redactor
from mobile_agent.errors import ConfigError
from mobile_agent.operations.context import ScreenshotLike
from mobile_agent.settings import Settings
from mobile_agent.testing.judge import DEFAULT_ATTEMPTS, AnswerSchema, ModelJudge, Verdict
from mobile_agent.testing.phone import Phone, ScreenEvidence, failure_message

__all__ = ["Agent", "CheckFailedError"]

T = TypeVar("T")


class CheckFailedError(AssertionError):
    """A model check that answered false (or never true before its timeout): ``verdict``
    (the model's reason, the judged frame) and ``screenshot_path``."""

    def __init__(self, message: str, verdict: Verdict) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.screenshot_path = verdict.screenshot_path


class Agent(BaseAgent):
    """``mobile_agent.agent.Agent`` with a tester's questions (see the module docstring).
    ``judge`` defaults to one on ``settings.planner``; ``phone`` is built on first use."""

    def __init__(self, settings: Settings, *, judge: ModelJudge | None = None, phone: Phone | None = None,
                 **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self._judge = judge
        self._phone = phone
        self._built_phone = False  # ``phone`` built here on the agent's device (closed with it)
        self.results: list[RunResult] = []  # every run of this agent, in order (their reports for a failed test)

    def run(self, instruction: str, *, cancel: threading.Event | None = None,
            output_dir: str | Path | None = None) -> RunResult:  # fmt: skip
        """``mobile_agent.agent.Agent.run``, its result also kept in ``results``."""
        result = super().run(instruction, cancel=cancel, output_dir=output_dir)
        self.results.append(result)
        return result

    @property
    def phone(self) -> Phone:
        """The device under test, for perception-only assertions (no model)."""
        if self._phone is None:
            self._phone = Phone(self.settings, self.open_device())
            self._built_phone = True
        return self._phone

    def close(self) -> None:
        """``mobile_agent.agent.Agent.close``; a ``phone`` built on the device it closes goes
        with it (the next use builds it on the device opened anew)."""
        super().close()
        if self._built_phone and self.device is None:
            self._phone, self._built_phone = None, False

    @property
    def judge(self) -> ModelJudge:
        if self._judge is None:
            if not self.settings.planner.configured:
                raise ConfigError("agent.check / extract / wait_for ask the model: no planner endpoint is configured")
            self._judge = ModelJudge(self.settings.planner)
        return self._judge

    def check(self, statement: str, *, attempts: int = DEFAULT_ATTEMPTS) -> Verdict:
        """The model's verdict on ``statement`` for the settled screen, with its reason and
        the screenshot it judged (saved in the phone's evidence folder)."""
        return self._judged(statement, self.phone.settled(), attempts)

    def verify(self, statement: str, *, attempts: int = DEFAULT_ATTEMPTS) -> Verdict:
        """``check``, raising ``CheckFailedError`` (an ``AssertionError``) when false."""
        verdict = self.check(statement, attempts=attempts)
        if not verdict.passed:
            raise CheckFailedError(_verdict_message(f"not true: {statement!r}", verdict, self.phone), verdict)
        return verdict

    def extract(self, instruction: str, schema: type[T] | AnswerSchema[T], *, attempts: int = DEFAULT_ATTEMPTS) -> T:
        """What ``instruction`` asks for, read from the settled screen, as a validated
        ``schema`` (a pydantic model, or an ``AnswerSchema``). ``ExtractionError`` when the
        model's answer never validated within ``attempts``."""
        answer_schema = schema if isinstance(schema, AnswerSchema) else AnswerSchema.of_model(schema)
        frame = self.model_frame(self.phone.settled())
        value: T = self.judge.extract(instruction, answer_schema, frame, attempts=attempts)
        return value

    def model_frame(self, frame: ScreenshotLike) -> ScreenshotLike:
        """``frame`` as the model may see it: secrets blacked out (``Phone.masked``)."""
        return self.phone.masked(frame)

    def wait_for(self, statement: str, *, timeout: float = 30.0, attempts: int = DEFAULT_ATTEMPTS) -> Verdict:
        """Wait until the model finds ``statement`` true. The screen is judged once it has
        settled, and again only after it has changed (the settle detector, no sleeps).
        ``CheckFailedError`` with the last verdict after ``timeout`` seconds."""
        held, _, verdict = self.phone.poll(timeout, lambda frame: self._judged(statement, frame, attempts),
                                           lambda judged: judged.passed)  # fmt: skip
        if held:
            return verdict
        raise CheckFailedError(
            _verdict_message(f"still not true after {timeout:g} s: {statement!r}", verdict, self.phone), verdict
        )

    def _judged(self, statement: str, frame: ScreenshotLike, attempts: int) -> Verdict:
        verdict = self.judge.check(statement, self.model_frame(frame), attempts=attempts)
        evidence = self.phone.evidence(frame, statement)
        return Verdict(verdict.statement, verdict.passed, verdict.reason, frame, evidence.path, verdict.usage)


def _verdict_message(summary: str, verdict: Verdict, phone: Phone) -> str:
    frame = verdict.screenshot
    texts = tuple(phone.texts(frame)) if frame is not None else ()
    evidence = ScreenEvidence(frame, verdict.screenshot_path, texts) if frame is not None else None
    head = f"{summary}; the model: {verdict.reason}"
    message = failure_message(head, evidence) if evidence is not None else head
    return Redactor.from_settings(phone.settings).text(message)  # the screen's texts may show a secret
