"""The harness's public names, pinned; and the layering rule: mobile_agent never imports eval."""

from __future__ import annotations

import subprocess
import sys

import eval.mobile_eval as mobile_eval

PUBLIC = {
    "Annotation", "AnnotationError", "DeviceStateError", "EvalConfig", "EvalTask", "JudgeError", "MllmJudge",
    "MobileEvalError", "PhoneEnvironment", "ResultTable", "ResultsFile", "ResultsFileError", "StepJudgement",
    "SuiteRunner", "TaskDataError", "TaskResult", "UnknownValidatorError", "ValidatorSpec", "Verdict",
    "annotate_run", "compare_markdown", "judge_steps", "load_paper_results", "load_results", "load_tasks",
    "render_html", "render_markdown", "result_from_annotation", "select_tasks", "summarize", "validate",
    "write_reports",
}


def test_public_names():
    assert set(mobile_eval.__all__) == PUBLIC
    assert all(hasattr(mobile_eval, name) for name in PUBLIC)


def test_errors_are_mobile_agent_errors():
    from mobile_agent.errors import MobileAgentError

    assert issubclass(mobile_eval.MobileEvalError, MobileAgentError)


def test_the_cli_loads_the_harness_only_when_asked():
    code = ("import sys; from mobile_agent.cli import build_parser; build_parser(); "
            "print(any(m == 'eval' or m.startswith('eval.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
