"""Testing Android apps with mobile-agent: assertions, extraction and flows.

- ``Phone``: perception-only assertions on the screen (``assert_visible``,
  ``assert_not_visible``, ``assert_icon``, ``wait_for_text``): OCR and the icon detector,
  no model; a failure is a ``ScreenAssertionError`` (an ``AssertionError``) naming what
  the screen showed, with its screenshot.
- ``Agent``: the agent plus the model's answers about the screen (``check``, ``verify``,
  ``extract(instruction, schema=Model)``, ``wait_for``), through ``ModelJudge``.
- Flows (``flows``): YAML files of steps run by ``mobile-agent test``; the pytest plugin
  (``pytest_plugin``) gives tests ``phone`` and ``agent`` fixtures.

May import: ``mobile_agent`` and ``perception``; never ``server`` or ``eval``.
"""

from mobile_agent.testing.agent import Agent, CheckFailedError
from mobile_agent.testing.flows import Flow, FlowError, load_flow, parse_flow
from mobile_agent.testing.judge import (
    AnswerSchema,
    CheckAnswer,
    ExtractionError,
    ModelJudge,
    Verdict,
    answer_mode,
)
from mobile_agent.testing.phone import Phone, ScreenAssertionError, ScreenEvidence
from mobile_agent.testing.runner import FlowResult, FlowRunner, SuiteResult, flow_pins

__all__ = [
    "Agent",
    "AnswerSchema",
    "CheckAnswer",
    "CheckFailedError",
    "ExtractionError",
    "Flow",
    "FlowError",
    "FlowResult",
    "FlowRunner",
    "ModelJudge",
    "Phone",
    "ScreenAssertionError",
    "ScreenEvidence",
    "SuiteResult",
    "Verdict",
    "answer_mode",
    "flow_pins",
    "load_flow",
    "parse_flow",
]
