"""The options of a run of tasks on phones, shared by `eval mobile-eval`, `eval families` and
`data collect` (argparse's public API: each command adds them to its own parser), and the
``TaskSelection`` a command hands `mobile_eval_command` in place of Mobile-Eval's own tasks."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eval.mobile_eval.schema import EvalTask

__all__ = ["RunCommand", "TaskSelection", "add_run_options"]


@dataclass
class TaskSelection:
    """The tasks to run instead of the 33 that --app/--level/--task select: `eval families`'
    sampled instances, which `data collect --augment` replaces with their variants (``pinned``:
    task id -> the serial of the phone a variant must run on)."""

    tasks: list[EvalTask]
    pinned: dict[str, str] = field(default_factory=dict)


# a command `eval families` runs its instances with: `mobile_eval_command`, or data collect's
RunCommand = Callable[[argparse.Namespace, TaskSelection], int]


def add_run_options(run: argparse.ArgumentParser) -> None:
    """The options of a run of tasks on phones (phones, planner, budget, resume), shared by
    `eval mobile-eval`, `eval families` and `data collect`; each adds its own choice of tasks
    (--app, --task / --family, --seeds) and its --output."""
    run.add_argument("--device", "-s", action="append", metavar="SERIAL",
                     help="a phone to use (repeatable: one task per phone at a time; default: the only one)")
    run.add_argument("--connect", metavar="HOST:PORT", action="append", help="`adb connect` first (repeatable)")
    run.add_argument("--model", help="planner model (default: settings)")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint")
    run.add_argument("--api-key", help="API key (prefer MOBILE_AGENT_PLANNER__API_KEY)")
    run.add_argument("--level", action="append", type=int, choices=(1, 2, 3), help="only this level (repeatable)")
    run.add_argument("--script-reference", action="store_true",
                     help="run each task's reference solution in scripted mode (no LLM): checks tasks and validators; "
                          "the default when no planner endpoint is configured")
    run.add_argument("--label", help="name of this run in reports (default: the model, or 'reference')")
    again = run.add_mutually_exclusive_group()
    again.add_argument("--force", action="store_true",
                       help="resume even when the folder's records come from another run (label, model, settings)")
    again.add_argument("--new", action="store_true",
                       help="start over in --output: earlier results move to a previous-<time> folder inside it")
    run.add_argument("--max-steps", type=int, help="step budget per task (default: 3 x human steps + 5)")
    run.add_argument("--cache", action="store_true", default=None,
                     help="replay cached plans without the model where a task's instruction and screens match, and "
                          "cache each completed run's plan (cache.enabled); the plans live in DIR/plan-cache.sqlite3 "
                          "unless cache.database_url says otherwise")
    run.add_argument("--judge", choices=("auto", "mllm"), default="auto",
                     help="phones without readable state: auto = annotate later, mllm = ask the planner model")
