"""GPT4Tools' step rates (SR_act / SR_args / SR) of planners against the task families'
reference actions, per level, with Su from the phone's state validator.

No real model is reachable here: the planners are scripted (tests/family_planner.py),
served by the scripted OpenAI-compatible server and asked through the real planner client,
each instance run in agent mode by ``SuiteRunner`` on a simulated phone over a private adb
server (the same path as ``mobile-agent eval families --model``):

- ``reference``: plays each instance's reference solution (a sanity check: ~1.00);
- ``perturbed``: the reference with 30% of the arguments misspelt by one character and a
  needless ``Page down`` before 15% of the steps;
- ``other-seed``: the reference of the same family for other parameters.

    .venv/bin/python -m benchmarks.bench_family_metrics [--per-family 1] [--first-seed 300] [--planners reference,perturbed,other-seed]
        [--families settings-theme,notes-create] [--offline]

``--offline``: GPT4Tools' own protocol instead — the reference runs are exported as a dataset
and every step is asked of each planner with the gold history (``mobile-agent data score``);
the perturbed planner's detour then takes the place of its step. Families that derive values
from the phone at run time are left out (the scripted planners read them from the phone).

Accuracy only (no timing figure); prints a Markdown table per planner and the load average.
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
from eval.families import sample_instances  # noqa: E402
from eval.families.report import family_step_metrics  # noqa: E402
from eval.mobile_eval.environment import PhoneEnvironment  # noqa: E402
from eval.mobile_eval.runner import EvalConfig, SuiteRunner  # noqa: E402
from mobile_agent.device import open_device  # noqa: E402
from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings  # noqa: E402
from tests.family_planner import FamilyPlanner  # noqa: E402
from tests.llm_server import ScriptedLLMServer  # noqa: E402


def _row(name: str, row: dict) -> str:
    cells = ["–" if row[k] is None else f"{row[k]:.2f}" for k in ("su", "sr_act", "sr_args", "sr")]
    return f"| {name} | {row['n']} | " + " | ".join(cells) + " |"


def run(planners: list[str], per_family: int, first_seed: int, families: list[str] | None = None) -> None:
    logging.getLogger("mobile_agent.planner.client").setLevel(logging.ERROR)
    tasks = sample_instances(families=families, seeds=range(first_seed, first_seed + per_family))
    print(f"{len(tasks)} instances ({', '.join(families) if families else 'every family'}, seeds {first_seed}..{first_seed + per_family - 1}); "
          f"load average at start {os.getloadavg()}", flush=True)
    results = {}
    with private_adb_server(), served_phones(1) as (serials, _phones), ScriptedLLMServer() as llm:
        device = open_device(AdbSettings(server_port=ADB_PORT), serials[0])
        for mode in planners:
            folder = Path(tempfile.mkdtemp(prefix=f"bench-family-metrics-{mode}-"))
            settings = Settings(
                adb=AdbSettings(server_port=ADB_PORT, serial=serials[0]),
                agent=AgentSettings(output_dir=folder, settle_timeout_s=1.5, settle_interval_s=0.1),
                perception=PerceptionSettings(detector="proposals", ranker="heuristic"),
                planner=llm.planner_settings(model="scripted-planner"),
            )
            environment = PhoneEnvironment(device)
            llm.script([], default=FamilyPlanner(tasks, mode, read_state=environment.read_state))  # type: ignore[arg-type]
            started = time.perf_counter()
            records = SuiteRunner(settings, [device], EvalConfig(output_dir=folder, label=mode)).run(tasks)
            metrics = family_step_metrics(records)
            results[mode] = metrics
            print(f"  {mode}: {len(records)} runs in {time.perf_counter() - started:.0f} s; "
                  f"load average {os.getloadavg()[0]:.2f}", flush=True)
    for mode, metrics in results.items():
        print(f"\n### {mode}\n\n| level | n | Su | SR_act | SR_args | SR |\n|---|---|---|---|---|---|")
        for level, row in metrics["levels"].items():
            print(_row(f"L{level}", row))
        print(_row("all", metrics["overall"]))
    print(f"\nload average at the end {os.getloadavg()}")


def run_offline(planners: list[str], per_family: int, first_seed: int, families: list[str] | None = None) -> None:
    """GPT4Tools' offline protocol: the reference runs exported as a dataset, then every step
    asked of each planner with the gold history (``mobile-agent data score``), no phone."""
    from eval.data_engine.export import export_runs
    from eval.data_engine.score import load_runs, score_runs
    from eval.data_engine.variants import task_for_id
    from mobile_agent.planner import Planner

    logging.getLogger("mobile_agent.planner.client").setLevel(logging.ERROR)
    # the families that derive values from the phone at run time (today's date, the forecast) are
    # left out: the scripted planners read them from the phone, and offline there is none
    tasks = [t for t in sample_instances(families=families, seeds=range(first_seed, first_seed + per_family))
             if not t.derived]
    print(f"offline: {len(tasks)} instances (without run-time derived values); load average at start "
          f"{os.getloadavg()}", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="bench-family-metrics-offline-"))
    with private_adb_server(), served_phones(1) as (serials, _phones):
        device = open_device(AdbSettings(server_port=ADB_PORT), serials[0])
        settings = Settings(adb=AdbSettings(server_port=ADB_PORT, serial=serials[0]),
                            agent=AgentSettings(output_dir=folder, settle_timeout_s=1.5, settle_interval_s=0.1),
                            perception=PerceptionSettings(detector="proposals", ranker="heuristic"))
        records = SuiteRunner(settings, [device], EvalConfig(output_dir=folder, mode="reference")).run(tasks)
    summary = export_runs(records, {r.task_id: task_for_id(r.task_id) for r in records}, folder / "dataset")
    runs = load_runs(folder / "dataset", None)
    print(f"  {summary.exported} runs exported, {sum(len(r['actions']) for r in runs)} steps; "
          f"rejected {summary.rejected}, duplicates {summary.duplicates}", flush=True)
    with ScriptedLLMServer() as llm:
        for mode in planners:
            llm.script([], default=FamilyPlanner(tasks, mode, offline=True))  # type: ignore[arg-type]
            result = score_runs(runs, folder / "dataset", Planner(llm.planner_settings(model="scripted-planner")))
            print(f"\n### {mode} (offline, gold history)\n\n| level | runs | SR_act | SR_args | SR |\n|---|---|---|---|---|")
            for level, row in [*result["levels"].items(), ("all", result["overall"])]:
                print(f"| {level} | {row['n']} | {row['sr_act']:.2f} | {row['sr_args']:.2f} | {row['sr']:.2f} |")
    print(f"\nload average at the end {os.getloadavg()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-family", type=int, default=1, help="instances per family (seeds from --first-seed)")
    parser.add_argument("--first-seed", type=int, default=300, help="first instance seed (no test uses 300+)")
    parser.add_argument("--planners", default="reference,perturbed,other-seed")
    parser.add_argument("--offline", action="store_true",
                        help="GPT4Tools' offline protocol: score each step of the exported reference runs")
    parser.add_argument("--families", default="", help="only these families (comma-separated; default: all)")
    args = parser.parse_args(argv)
    families = [f.strip() for f in args.families.split(",") if f.strip()] or None
    if args.offline:
        run_offline([p.strip() for p in args.planners.split(",") if p.strip()], args.per_family, args.first_seed,
                    families)
        return 0
    run([p.strip() for p in args.planners.split(",") if p.strip()], args.per_family, args.first_seed, families)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
