"""Mobile-Eval: the Mobile-Agent paper's benchmark (33 instructions: 10 apps x 3 levels
and 3 multi-app ones), its four metrics (Su, PS, RE, CR), GPT4Tools' step rates, a runner
over one or more phones, judges for phones without readable state, and reports.

    from eval.mobile_eval import SuiteRunner, EvalConfig, load_tasks, select_tasks, write_reports

Modules: ``schema`` (tasks), ``validators`` / ``app_validators`` (success from state),
``environment`` (reset / read a phone), ``matching`` (step judging), ``records`` (results
JSONL), ``metrics`` (Table 2 averages), ``runner``, ``judges``, ``report``.

May import: ``mobile_agent`` (public API), pydantic, rapidfuzz, openai.
"""

# the validators of each app register themselves (app_validators imports validators, never
# the other way round: importing this package is what makes them known)
from eval.mobile_eval import app_validators as _app_validators  # noqa: F401
from eval.mobile_eval.environment import PhoneEnvironment
from eval.mobile_eval.errors import (
    AnnotationError,
    DeviceStateError,
    JudgeError,
    MobileEvalError,
    ResultsFileError,
    TaskDataError,
    UnknownValidatorError,
)
from eval.mobile_eval.judges import Annotation, MllmJudge, annotate_run, result_from_annotation
from eval.mobile_eval.matching import judge_steps
from eval.mobile_eval.metrics import ResultTable, summarize
from eval.mobile_eval.records import ResultsFile, StepJudgement, TaskResult, load_paper_results, load_results
from eval.mobile_eval.report import compare_markdown, render_html, render_markdown, write_reports
from eval.mobile_eval.runner import EvalConfig, SuiteRunner
from eval.mobile_eval.schema import EvalTask, load_tasks, select_tasks
from eval.mobile_eval.validators import ValidatorSpec, Verdict, validate

__all__ = [
    "Annotation",
    "AnnotationError",
    "DeviceStateError",
    "EvalConfig",
    "EvalTask",
    "JudgeError",
    "MllmJudge",
    "MobileEvalError",
    "PhoneEnvironment",
    "ResultTable",
    "ResultsFile",
    "ResultsFileError",
    "StepJudgement",
    "SuiteRunner",
    "TaskDataError",
    "TaskResult",
    "UnknownValidatorError",
    "ValidatorSpec",
    "Verdict",
    "annotate_run",
    "compare_markdown",
    "judge_steps",
    "load_paper_results",
    "load_results",
    "load_tasks",
    "render_html",
    "render_markdown",
    "result_from_annotation",
    "select_tasks",
    "summarize",
    "validate",
    "write_reports",
]
