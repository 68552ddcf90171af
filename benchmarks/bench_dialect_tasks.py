"""Mobile-Eval tasks through every planner dialect, end to end.

For each dialect (chosen by a served model name, as a user would), every Mobile-Eval task
runs through ``SuiteRunner`` in agent mode on a simulated phone over a private adb server;
the planner talks to the scripted OpenAI-compatible server, where a scripted grounding
model (tests/grounding_model.py) plays the task's reference solution in that dialect's
own format and coordinate space, aiming at the ground-truth centre of each element, plus
an optional vertical drift. Success is the suite's own judgement: read from the phone's
state by the task's validator.

Tasks whose reference needs run-time values (``{address}``) are left out and counted;
where a reference line offers alternatives (``A || B``) the first is played.

Run: ``python benchmarks/bench_dialect_tasks.py [--apps Settings,Notes] [--tasks settings-2,notes-1] [--drift 3]``
or ``python -m benchmarks dialect_tasks``. Prints figures; exits 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.rig import ADB_PORT, private_adb_server, served_phones  # noqa: E402  (sets the adb port first)
from eval.mobile_eval.errors import TaskDataError  # noqa: E402
from eval.mobile_eval.runner import EvalConfig, SuiteRunner  # noqa: E402
from eval.mobile_eval.schema import load_tasks  # noqa: E402
from mobile_agent.device import open_device  # noqa: E402
from mobile_agent.planner.dialects import dialect_for  # noqa: E402
from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, PlannerSettings, Settings  # noqa: E402
from tests.grounding_model import GroundingModel  # noqa: E402
from tests.llm_server import ScriptedLLMServer  # noqa: E402

MODELS = [
    ("ui_tars (image px)", "ui-tars-1.5-7b", "auto"),
    ("ui_tars (0-999)", "UI-TARS-7B-SFT", "auto"),
    ("mobile_use (Qwen2.5-VL, image px)", "qwen2.5vl:7b", "auto"),
    ("mobile_use (Qwen3-VL, 0-999)", "Qwen/Qwen3-VL-8B-Instruct", "auto"),
    ("autoglm (0-999)", "autoglm-phone-9b", "auto"),
    ("function_calling", "gpt-4o", "function_calling"),
    ("paper", "gpt-4o", "auto"),
]


def _playable(task) -> list[str] | None:
    try:
        lines = task.reference_lines()
    except (KeyError, ValueError, TaskDataError):
        return None
    return [line.split("||")[0].strip() for line in lines]


def run(apps: list[str] | None, drift: float, task_ids: list[str] | None = None, skip_models: int = 0) -> None:
    # the scripted server counts 765 prompt tokens an image, not Qwen's one per 28x28 patch:
    # the planner's image-size warning would fire on every task
    logging.getLogger("mobile_agent.planner.client").setLevel(logging.ERROR)
    tasks = [t for t in load_tasks() if (not apps or t.app in apps) and (not task_ids or t.id in task_ids)]
    playable = [(t, _playable(t)) for t in tasks]
    skipped = [t.id for t, lines in playable if lines is None]
    playable = [(t, lines) for t, lines in playable if lines is not None]
    print(
        f"{len(playable)} tasks ({len(skipped)} left out, their reference needs run-time values: {', '.join(skipped)})"
    )
    started = time.perf_counter()
    rows = []
    with private_adb_server(), served_phones(1) as (serials, phones), ScriptedLLMServer() as llm:
        phone = phones[0]
        device = open_device(AdbSettings(server_port=ADB_PORT), serials[0])
        for label, model, setting in MODELS[skip_models:]:
            dialect, profile = dialect_for(PlannerSettings(model=model, dialect=setting))
            folder = Path(tempfile.mkdtemp(prefix="bench-dialect-tasks-"))
            llm.model = model
            settings = Settings(
                adb=AdbSettings(server_port=ADB_PORT, serial=serials[0]),
                agent=AgentSettings(output_dir=folder, settle_timeout_s=1.5, settle_interval_s=0.1),
                perception=PerceptionSettings(detector="proposals", ranker="heuristic"),
                planner=llm.planner_settings(model=model, dialect=setting),
            )
            runner = SuiteRunner(settings, [device], EvalConfig(output_dir=folder, label=label))
            done, failed, t0 = 0, [], time.perf_counter()
            for task, lines in playable:
                grounding = GroundingModel(dialect.name, profile.space.kind, lines, phone.ground_truth,
                                           screen=(phone.width, phone.height), drift=(0.0, drift / 100))  # fmt: skip
                llm.script([], default=grounding)
                records = runner.run([task])
                record = next(r for r in records if r.task_id == task.id)
                if record.success:
                    done += 1
                else:
                    failed.append(f"{task.id} ({record.status}: {'; '.join(record.reasons)[:120]})")
            rows.append((label, done, len(playable), time.perf_counter() - t0, failed))
            print(f"  {label}: {done}/{len(playable)}", flush=True)
    print("\n| dialect | tasks completed (state-verified) | time |\n| --- | --- | --- |")
    for label, done, total, seconds, _failed in rows:
        print(f"| {label} | {done}/{total} = {done / total:.0%} | {seconds:.0f} s |")
    for label, _d, _t, _s, failed in rows:
        for item in failed:
            print(f"  {label} failed: {item}")
    print(f"\ndrift {drift:g}% of the screen height down; total {time.perf_counter() - started:.0f} s; "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--apps", default="", help="only these apps (comma-separated, as in the task files)")
    parser.add_argument("--drift", type=float, default=0.0, help="vertical drift, %% of the screen height")
    parser.add_argument("--tasks", default="", help="only these task ids (comma-separated)")
    parser.add_argument("--skip-models", type=int, default=0, help="start at the N-th model of the list")
    args = parser.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] or None
    run([a.strip() for a in args.apps.split(",") if a.strip()] or None, args.drift, tasks, args.skip_models)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
