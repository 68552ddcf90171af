"""The harness's public names, pinned; and the layering rule: mobile_agent never imports eval."""

from __future__ import annotations

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


def test_the_eval_command_comes_from_the_entry_point():
    # The core's CLI never imports the harness: `mobile-agent eval` is added through the
    # `mobile_agent.commands` entry point that eval.mobile_eval.cli registers.
    from importlib.metadata import entry_points

    from mobile_agent.cli import PLUGIN_GROUP, build_parser

    (entry,) = [e for e in entry_points(group=PLUGIN_GROUP) if e.name == "eval"]
    assert entry.value == "eval.mobile_eval.cli:register"
    args = build_parser().parse_args(["eval", "tasks", "--app", "Notes"])
    assert args.func.__module__ == "eval.mobile_eval.cli"
