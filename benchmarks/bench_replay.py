"""The plan cache: the 33 Mobile-Eval tasks run twice, the second time from the cache.

A scripted planner answers each task's reference solution, one step per call, after
``--latency`` seconds (2 s: a fast hosted model), and confirms every Stop after the same
wait; success is read from the phone's state by the tasks' validators, as in
``mobile-agent eval``. Passes, in one process, on simulated phones behind a private adb
server (the real protocol):

1. ``cold``: cache on and empty: every step asks the model; completed runs become plans.
2. ``warm``: the same tasks on the same phone: plans replay while screens match.
3. ``other phone``: the same tasks on a 720x1600 phone (another size and density).
4. perturbed repeats (``eval.mobile_eval.perturb``, made over adb after each reset): the
   Settings list scrolled, one more note in Notes, Maps' location permission dialog, the
   task starting in Chrome; each run ``uncached`` (cache off) and ``perturbed`` (from the
   plans recorded unperturbed), to compare success.

Reported per pass: model calls, wall time, success, where the time went, and the per-step
time outside the model (median, all steps, steps that ran perception, and Type steps), both as the
step's own phases and as its wall time less the model's (``ReplayingPlanner``'s own check
of a replayed step counts as outside the model) — the goal is <= 300 ms, with OCR running
while the model thinks (``agent.prefetch_perception``).

Run: ``python benchmarks/bench_replay.py [--latency 2.0] [--offset K --limit N]
[--perturbed scrolled,extra_note,location_dialog,elsewhere | none] [--no-main]
[--cache FILE]`` or ``python -m benchmarks replay``. In chunks: main passes with
``--offset/--limit --perturbed none --cache FILE``, then ``--no-main --cache FILE``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rig import private_adb_server, served_phones  # noqa: E402

_INEFFECTIVE = re.compile(r"-> (failed|invalid|stop rejected|done, but the screen did not change)")
GOALS = {"calls": 10.0, "wall": 5.0, "other_wall": 3.0, "overhead_ms": 300.0}


class ReferencePlanner:
    """A ``PlannerLike`` that answers the task's reference solution, one line per step
    (the step's number is the history's length), then Stop; every call waits ``latency``."""

    def __init__(self, solutions: dict[str, list[str]], latency: float, counter: list[int]) -> None:
        self.solutions = solutions
        self.latency = latency
        self.counter = counter
        self._lock = threading.Lock()

    def _call(self) -> Any:
        from mobile_agent.planner.types import Usage

        time.sleep(self.latency)
        with self._lock:
            self.counter[0] += 1
        return Usage(prompt_tokens=1500, completion_tokens=60, calls=1)

    def plan(self, request: Any) -> Any:
        from mobile_agent.planner.types import PlanReply

        usage = self._call()
        lines = self.solutions[request.instruction]
        # a step that did nothing (failed, or left the screen as it was) does not advance
        # the reference: the model sees that in the history and answers that step again
        step = sum(1 for line in request.history if not _INEFFECTIVE.search(line))
        action = lines[step] if step < len(lines) else "Stop"
        return PlanReply("A phone screen.", "The reference's next step.", action, f"Action: {action}", usage)

    def parse(self, reply: Any) -> Any:
        from mobile_agent.operations import parse_action

        return parse_action(reply.action_text)

    def choose_candidate(self, instruction: str, location: Any, screenshot: Any = None) -> int | None:
        self._call()
        return 1

    def check_completion(self, instruction: str, history: Sequence[str], screenshot: Any) -> Any:
        from mobile_agent.planner.types import CompletionVerdict

        return CompletionVerdict(True, "the reference solution ran", usage=self._call())

    @property
    def last_choice_usage(self) -> Any:
        from mobile_agent.planner.types import Usage

        return Usage()


def _steps(records: list[Any]) -> list[tuple[dict[str, Any], float]]:
    """Every step line of the pass's trajectories, with its wall time in ms: from its
    start to the next step's (or the run's end), so that nothing between the phases the
    step times itself (the safety check, recording) escapes."""
    steps = []
    for record in records:
        path = Path(record.trajectory_dir or "") / "trajectory.jsonl"
        if not path.is_file():
            continue
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        run_steps = [d for d in lines if d.get("type") == "step" and isinstance(d.get("timings"), dict)]
        end = next((float(d["finished_at"]) for d in lines if d.get("type") == "result"), None)
        for i, data in enumerate(run_steps):
            following = run_steps[i + 1]["started_at"] if i + 1 < len(run_steps) else end
            wall = (float(following) - float(data["started_at"])) * 1000.0 if following else 0.0
            steps.append((data, wall))
    return steps


def _overheads(records: list[Any]) -> dict[str, list[float]]:
    """Per-step time outside the model, ms: ``phases`` sums the step's own timings,
    ``wall`` its wall time less the model's; both count a replayed step's check of the
    screen (recorded as its ``model_ms``: no model ran). ``*_perception``: the steps that
    ran perception (OCR or icons) or located a target; ``*_type``: the Type steps (their
    safety check reads the screen for a password word, outside the step's phases)."""
    out: dict[str, list[float]] = {"phases": [], "wall": [], "phases_perception": [], "wall_perception": [],
                                   "phases_type": [], "wall_type": []}
    for data, wall in _steps(records):
        timings = data["timings"]
        model = 0.0 if data.get("by") == "replay" else float(timings.get("model_ms", 0.0))
        phases = sum(v for k, v in timings.items() if k != "model_ms") + (timings.get("model_ms", 0.0) - model)
        perceiving = timings.get("perception_ms", 0) > 0 or (data.get("operation") or {}).get("name") in (
            "click_text", "click_icon", "long_press"
        )
        typing = (data.get("operation") or {}).get("name") == "type"
        for kind, value in (("phases", phases), ("wall", max(0.0, wall - model))):
            out[kind].append(value)
            if perceiving:
                out[f"{kind}_perception"].append(value)
            if typing:
                out[f"{kind}_type"].append(value)
    return out


_PHASES = ("capture_ms", "perception_ms", "model_ms", "action_ms", "settle_ms")


def _breakdown(records: list[Any], wall: float) -> dict[str, float]:
    """Where a pass's wall time went, in seconds: each step phase summed over the pass
    (``model_ms`` of a replayed step is the replay's own check of the screen), the rest
    of the runs (opening, trajectory, the end), and the harness around them (the phone's
    reset between tasks, reading its state, the validators)."""
    sums = dict.fromkeys(_PHASES, 0.0)
    runs = 0.0
    for record in records:
        path = Path(record.trajectory_dir or "") / "trajectory.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)
            if data.get("type") == "step" and isinstance(data.get("timings"), dict):
                for phase in _PHASES:
                    sums[phase] += float(data["timings"].get(phase, 0.0)) / 1000.0
            elif data.get("type") == "result":
                runs += float(data.get("finished_at", 0.0)) - float(data.get("started_at", 0.0))
    steps = sum(sums.values())
    out = {k.removesuffix("_ms"): round(v, 1) for k, v in sums.items()}
    out["run_rest"] = round(runs - steps, 1)
    out["harness"] = round(wall - runs, 1)
    return out


def _pass(name: str, settings: Any, serial: str, tasks: list[Any], solutions: dict[str, list[str]],
          latency: float, out: Path, perturbation: Any = None) -> dict[str, Any]:
    from eval.mobile_eval.runner import EvalConfig, SuiteRunner
    from mobile_agent.device import open_device

    counter = [0]
    device = open_device(settings.adb, serial)
    config = EvalConfig(output_dir=out / name, label=name, mode="agent")
    runner = SuiteRunner(settings, [device], config,
                         planner_factory=lambda: ReferencePlanner(solutions, latency, counter))
    with _perturbed(perturbation):
        started = time.perf_counter()
        records = runner.run(tasks)
        wall = time.perf_counter() - started
    overheads = _overheads(records)
    replayed = sum(1 for data, _ in _steps(records) if data.get("by") == "replay")
    return {
        "pass": name, "tasks": len(records), "success": sum(1 for r in records if r.success),
        "model_calls": counter[0], "wall_s": round(wall, 1), "replayed_steps": replayed,
        "steps": sum(r.agent_steps for r in records),
        **{f"overhead_ms_median_{kind}": _median(values) for kind, values in overheads.items()},
        "failed": [r.task_id for r in records if not r.success],
        "seconds": _breakdown(records, wall),
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


@contextmanager
def _perturbed(perturbation: Any) -> Iterator[None]:
    """While a perturbed pass runs, the environment's reset is followed by the
    perturbation, made over adb (``eval.mobile_eval.perturb``)."""
    if perturbation is None:
        yield
        return
    from eval.mobile_eval import environment

    original = environment.PhoneEnvironment.reset

    def reset(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        perturbation.apply(lambda argv: self.device.run(argv).stdout.decode("utf-8", "replace"))
        self.device.wait_settled(3.0, 0.15, 0.002)
        return result

    environment.PhoneEnvironment.reset = reset  # type: ignore[method-assign]
    try:
        yield
    finally:
        environment.PhoneEnvironment.reset = original  # type: ignore[method-assign]


def _solutions(tasks: list[Any], adb: Any, serial: str) -> dict[str, list[str]]:
    """Each task's instruction → its reference solution then Stop, with the values that
    come from the phone's state (today's date…) read as the runner reads them."""
    from eval.mobile_eval.app_validators import derive
    from eval.mobile_eval.environment import PhoneEnvironment
    from eval.mobile_eval.schema import ALTERNATIVE_SEPARATOR
    from mobile_agent.device import open_device

    environment = PhoneEnvironment(open_device(adb, serial))
    solutions = {}
    for task in tasks:
        values: dict[str, str] = {}
        if task.derived:
            environment.reset(seed=0, apps=task.apps)
            values = derive(task.derived, environment.read_state())
        # the model's answers: the first alternative of each reference line (reference_script
        # adds "Page down until (Text)", a script-only step no planner answers)
        steps = [line.split(ALTERNATIVE_SEPARATOR)[0].strip() for line in task.reference_lines(values)]
        solutions[task.render(values)] = [*steps, "Stop"]
        _INSTRUCTIONS[task.id] = task.render(values)
    return solutions


def _summary(results: list[dict[str, Any]], latency: float) -> None:
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; latency {latency:g} s per model call")
    print(f"{'pass':<28} {'tasks':>5} {'ok':>3} {'calls':>5} {'wall s':>7} {'replayed':>8} "
          f"{'outside model ms, median: all / perception (phases; wall)':>58}")
    for r in results:
        print(f"{r['pass']:<28} {r['tasks']:>5} {r['success']:>3} {r['model_calls']:>5} {r['wall_s']:>7} "
              f"{r['replayed_steps']:>8}   {r['overhead_ms_median_phases']} / {r['overhead_ms_median_phases_perception']}"
              f" ; {r['overhead_ms_median_wall']} / {r['overhead_ms_median_wall_perception']}"
              f" ; Type steps {r['overhead_ms_median_wall_type']} ({r['overhead_ms_median_phases_type']})")
    by_name = {r["pass"]: r for r in results}
    cold, warm, other = (by_name.get(k) for k in ("cold", "warm", "other phone"))
    if cold and warm and other:
        print(f"warm vs cold: {cold['model_calls'] / max(1, warm['model_calls']):.1f}x fewer model calls "
              f"(goal >= {GOALS['calls']:g}x), {cold['wall_s'] / max(1e-9, warm['wall_s']):.2f}x less wall time "
              f"(goal >= {GOALS['wall']:g}x), success {warm['success']} vs {cold['success']}")
        print(f"other phone vs cold: {cold['wall_s'] / max(1e-9, other['wall_s']):.2f}x less wall time "
              f"(goal >= {GOALS['other_wall']:g}x), success {other['success']} vs {cold['success']}")
        print(f"per-step time outside the model, cold pass, steps with perception: median "
              f"{cold['overhead_ms_median_wall_perception']} ms wall ({cold['overhead_ms_median_phases_perception']} ms "
              f"in the step's phases; goal <= {GOALS['overhead_ms']:g} ms)")
    for name, r in by_name.items():
        if name.startswith("perturbed "):
            plain = by_name.get(name.replace("perturbed ", "uncached "))
            print(f"{name}: {r['success']}/{r['tasks']} with the cache ({r['model_calls']} calls, {r['replayed_steps']} "
                  f"steps replayed), {plain['success'] if plain else '?'}/{r['tasks']} uncached")


def _warm_up(settings: Any, serial: str) -> None:
    """The OCR models loaded and run once, so that no pass pays the process's start."""
    from mobile_agent.device import open_device
    from mobile_agent.locate import build_locator

    build_locator(settings).ocr(open_device(settings.adb, serial).screenshot().pixels)


_INSTRUCTIONS: dict[str, str] = {}  # task id -> its instruction as rendered by _solutions


def _recorded(cache_file: Path, tasks: list[Any]) -> set[str]:
    """The tasks whose instruction has a plan in the cache file already."""
    from mobile_agent.replay import InstructionTemplate, PlanStore

    if not cache_file.is_file():
        return set()
    templates = {p.template for p in PlanStore(f"sqlite:///{cache_file}").list(limit=10_000)}
    return {t.id for t in tasks if InstructionTemplate.of(_INSTRUCTIONS[t.id]).template in templates}


def _type_steps(folder: Path) -> None:
    """The Type steps in the trajectories under ``folder`` (a pass's folder of a finished
    run), by who planned them: wall time outside the model (median, mean, max, sum) and
    the part of it outside the step's own phases (where the safety check's read of the
    screen goes), in ms. For comparing runs made before these figures were printed."""
    records = [argparse.Namespace(trajectory_dir=str(path.parent)) for path in sorted(folder.rglob("trajectory.jsonl"))]
    for by in ("replay", "model"):
        walls, outside = [], []
        for data, wall in _steps(records):
            if data.get("by") != by or (data.get("operation") or {}).get("name") != "type":
                continue
            timings = data["timings"]
            model = 0.0 if by == "replay" else float(timings.get("model_ms", 0.0))
            walls.append(max(0.0, wall - model))
            outside.append(wall - sum(float(v) for v in timings.values()))
        if walls:
            print(f"Type steps by {by}: {len(walls)}; outside the model, ms: median {_median(walls)}, mean "
                  f"{statistics.mean(walls):.1f}, max {max(walls):.1f}, sum {sum(walls):.0f}; outside the step's "
                  f"phases: median {_median(outside)}, mean {statistics.mean(outside):.1f}, max {max(outside):.1f}")


def main(argv: list[str] | None = None) -> int:
    from eval.mobile_eval.perturb import PERTURBATIONS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per model call (default 2)")
    parser.add_argument("--offset", type=int, default=0, help="skip the first N tasks (to run the suite in chunks)")
    parser.add_argument("--limit", type=int, default=0, help="only N tasks from the offset (default: all 33)")
    parser.add_argument("--perturbed", default=",".join(PERTURBATIONS),
                        help=f"perturbations to run, comma-separated, or 'none' (default: all: {', '.join(PERTURBATIONS)})")
    parser.add_argument("--no-main", action="store_true", help="only the perturbed passes")
    parser.add_argument("--cache", type=Path, default=None,
                        help="the plan cache's SQLite file, kept between runs (default: a new one): chunks of the "
                             "main passes record there the plans a --no-main run's perturbed passes then use")
    parser.add_argument("--type-steps", type=Path, default=None, metavar="RUNS",
                        help="only print the Type steps' figures of the trajectories under RUNS, and exit")
    args = parser.parse_args(argv)
    if args.type_steps is not None:
        _type_steps(args.type_steps)
        return 0
    chosen = [] if args.perturbed == "none" else [PERTURBATIONS[n.strip()] for n in args.perturbed.split(",") if n.strip()]

    from eval.mobile_eval.schema import load_tasks
    from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings

    every = load_tasks()
    tasks = every[args.offset:][: args.limit or None]
    out = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    cache_file = (args.cache or out / "plans.sqlite3").resolve()
    results: list[dict[str, Any]] = []
    with private_adb_server() as rig, served_phones(1) as (serials, _), \
            served_phones(1, width=720, height=1600, density=320) as (other_serials, _):
        solutions = _solutions(every, AdbSettings(server_port=rig.port), serials[0])

        def settings_for(serial: str, cache: bool = True) -> Settings:
            return Settings(
                adb=AdbSettings(server_port=rig.port, serial=serial),
                agent=AgentSettings(output_dir=out / "runs", settle_timeout_s=1.5, settle_interval_s=0.1),
                perception=PerceptionSettings(detector="proposals", ranker="heuristic"),
            ).with_overrides({"cache.enabled": cache, "cache.database_url": f"sqlite:///{cache_file}"})

        def run(name: str, serial: str, chosen_tasks: list[Any], cache: bool = True, perturbation: Any = None) -> None:
            answers = solutions if perturbation is None else {
                k: perturbation.reference(v[:-1]) + ["Stop"] for k, v in solutions.items()}
            result = _pass(name, settings_for(serial, cache), serial, chosen_tasks, answers, args.latency, out,
                           perturbation)
            results.append(result)
            print(json.dumps(result), flush=True)

        _warm_up(settings_for(serials[0]), serials[0])  # models loaded before any timed pass, not in the first
        print(f"load average at start {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
        if not args.no_main:
            run("cold", serials[0], tasks)
            run("warm", serials[0], tasks)
            run("other phone", other_serials[0], tasks)
        recorded = {t.id for t in tasks} if not args.no_main else _recorded(cache_file, every)
        for perturbation in chosen:
            subset = [t for t in every if t.app in perturbation.apps]
            unrecorded = [t for t in subset if t.id not in recorded]
            if unrecorded:  # plans of these tasks first, on the unperturbed phone
                run(f"record for {perturbation.name}", serials[0], unrecorded)
                recorded |= {t.id for t in unrecorded}
            run(f"uncached {perturbation.name}", serials[0], subset, cache=False, perturbation=perturbation)
            run(f"perturbed {perturbation.name}", serials[0], subset, perturbation=perturbation)
    _summary(results, args.latency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
