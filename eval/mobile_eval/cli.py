"""`mobile-agent eval`: the Mobile-Eval benchmark.

    mobile-agent eval mobile-eval [--device SERIAL]... [--app APP]... [--level N]... [--script-reference]
    mobile-agent eval annotate RUN_DIR [--task ID] [--results FILE]
    mobile-agent eval report RESULTS [--compare BEFORE] [--out DIR]
    mobile-agent eval tasks [--app APP] [--level N]

Registered with ``mobile-agent`` through the ``mobile_agent.commands`` entry point, so the
core never imports the harness; the harness's heavier modules are imported inside the
command functions.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval.mobile_eval.run_options import TaskSelection, add_run_options

if TYPE_CHECKING:
    from mobile_agent.device import Phone, PhoneLease
    from mobile_agent.settings import Settings

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3  # 3: as `mobile-agent` for other errors


def _usage(parser: argparse.ArgumentParser) -> int:
    """A command group called without its command: its help, and the usage exit status."""
    parser.print_help()
    return EXIT_USAGE


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("eval", help="benchmarks: Mobile-Eval (the paper's 33 instructions)",
                                   description="Evaluate the agent on Mobile-Eval.")
    commands = parser.add_subparsers(dest="eval_command", metavar="BENCHMARK")
    parser.set_defaults(func=lambda args: _usage(parser))

    run = commands.add_parser("mobile-eval", help="run the Mobile-Eval tasks on one or more phones")
    add_run_options(run)
    run.add_argument("--app", action="append", metavar="APP", help="only this app (name or slug; repeatable)")
    run.add_argument("--task", action="append", metavar="ID", help="only this task id, e.g. notes-2 (repeatable)")
    run.add_argument("--output", "-o", type=Path, default=Path("runs/mobile-eval"), metavar="DIR",
                     help="results.jsonl, trajectories/ and reports (default: runs/mobile-eval); rerun to resume")
    run.add_argument("--seed", type=int, default=0, help="seed of the simulated phone's reset (default 0)")
    run.add_argument("--param", action="append", metavar="NAME=VALUE", help="task parameter, e.g. address=a@b.c")
    run.set_defaults(func=mobile_eval_command)

    from eval.families.cli import add_families_parser

    add_families_parser(commands, mobile_eval_command)

    annotate = commands.add_parser("annotate", help="judge a run step by step (correct? y/n) on the terminal")
    annotate.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run's trajectory folder")
    annotate.add_argument("--task", metavar="ID", help="the task it ran (default: from the results file)")
    annotate.add_argument("--results", type=Path, metavar="FILE", help="append the judged result to this results.jsonl")
    annotate.add_argument("--annotator", default="", help="your name, kept in annotation.json")
    annotate.set_defaults(func=annotate_command)

    report = commands.add_parser("report", help="Markdown/HTML/JSON report of a results file")
    report.add_argument("results", type=Path, metavar="RESULTS", help="a results.jsonl")
    report.add_argument("--compare", type=Path, metavar="BEFORE", help="an earlier results file: compare BEFORE -> RESULTS")
    report.add_argument("--out", type=Path, metavar="DIR", help="where to write (default: beside RESULTS)")
    report.add_argument("--no-paper", action="store_true", help="leave out the paper's published figures")
    report.set_defaults(func=report_command)

    tasks = commands.add_parser("tasks", help="list the Mobile-Eval tasks")
    tasks.add_argument("--app", action="append", metavar="APP")
    tasks.add_argument("--level", action="append", type=int, choices=(1, 2, 3))
    tasks.add_argument("--reference", action="store_true", help="print each reference solution too")
    tasks.set_defaults(func=tasks_command)


def _params(pairs: list[str] | None) -> dict[str, str] | None:
    """``NAME=VALUE`` pairs; None (after saying why) when one is malformed."""
    values = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            print(f"mobile-agent eval: --param wants NAME=VALUE, got {pair!r}", file=sys.stderr)
            return None
        values[name.strip()] = value
    return values


def mobile_eval_command(args: argparse.Namespace, selection: TaskSelection | None = None) -> int:
    """`eval mobile-eval`: Mobile-Eval's tasks the filters select, or ``selection``'s."""
    from eval.mobile_eval.manifest import check_resume, run_manifest, write_manifest
    from eval.mobile_eval.records import ResultsFile, load_paper_results
    from eval.mobile_eval.report import write_reports
    from eval.mobile_eval.runner import EvalConfig, Mode, SuiteRunner
    from eval.mobile_eval.schema import load_tasks, select_tasks
    from mobile_agent.errors import DeviceNotFoundError, MultipleDevicesError, PhoneBusyError
    from mobile_agent.settings import load_settings

    settings = load_settings(args.config, {
        "adb.connect": args.connect, "planner.model": args.model,
        "planner.base_url": args.base_url, "planner.api_key": args.api_key, "cache.enabled": args.cache,
    })
    if settings.cache.enabled and not settings.cache.database_url:  # the plans beside the results, not in ./runs
        from mobile_agent.replay import default_cache_url

        settings = settings.with_overrides({"cache.database_url": default_cache_url(args.output)})
    if not args.script_reference and not settings.planner.configured:
        if args.model:  # asked for a model's run: reference records under its name would lie
            print("mobile-agent eval: no planner endpoint configured for --model (set "
                  "MOBILE_AGENT_PLANNER__BASE_URL / MOBILE_AGENT_PLANNER__API_KEY or --base-url), "
                  "or use --script-reference", file=sys.stderr)
            return EXIT_USAGE
        print("mobile-agent eval: no planner endpoint configured (MOBILE_AGENT_PLANNER__BASE_URL / "
              "MOBILE_AGENT_PLANNER__API_KEY or --base-url): running the reference solutions (--script-reference), "
              "which checks the tasks and validators, not a model", file=sys.stderr, flush=True)
        args.script_reference = True
    params = _params(args.param)
    if params is None:
        return EXIT_USAGE
    # `eval families` hands its sampled instances over; Mobile-Eval's 33 tasks otherwise
    tasks = (selection.tasks if selection is not None
             else select_tasks(load_tasks(), apps=args.app, levels=args.level, ids=args.task))
    if not tasks:
        print("mobile-agent eval: no task matches the filters", file=sys.stderr)
        return EXIT_USAGE
    label = args.label or ("reference" if args.script_reference else settings.planner.model)
    mode: Mode = "reference" if args.script_reference else "agent"
    manifest = run_manifest(settings, mode=mode, label=label, seed=args.seed, params=params, judge=args.judge,
                            max_steps=args.max_steps, tasks=tasks)
    if args.new:
        moved = start_over(args.output)
        if moved is not None:
            print(f"earlier results of {args.output} moved to {moved}", flush=True)
    done = ResultsFile(args.output / "results.jsonl").done_ids() & {t.id for t in tasks}
    conflict = check_resume(args.output, manifest, done)
    if conflict is not None and not args.force:
        print(f"mobile-agent eval: {conflict.message(args.output)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        devices = open_devices(settings, args.device)
    except (MultipleDevicesError, DeviceNotFoundError) as exc:  # no phone at all: an error (3), said by main
        print(f"mobile-agent eval: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    try:
        leases = lease_devices(settings, devices)
    except PhoneBusyError as exc:  # one phone, one run: a REST task's or an MCP session's phone is not shared
        close_devices(devices)
        print(f"mobile-agent eval: {exc.message}; run again when it is free", file=sys.stderr)
        return EXIT_ERROR
    try:
        config = EvalConfig(output_dir=args.output, mode=mode, label=label, seed=args.seed, params=params,
                            judge=args.judge, max_steps=args.max_steps)

        def show(record: Any) -> None:
            mark = {"pending": "?"}.get(record.judged_by, "✓" if record.success else "×")
            failed = [r for r in record.reasons if r.startswith("✗")] if not record.success else []
            why = (failed or record.reasons or [""])[0]
            print(f"{mark} {record.task_id:<16} {record.agent_steps:>2}/{record.human_steps:<2} steps  "
                  f"{record.status or '':<16} {why[:100]}", flush=True)

        runner = SuiteRunner(settings, devices, config, on_result=show)
        if done:
            forced = " (--force: recorded by another run)" if conflict is not None else ""
            print(f"resuming: {len(done)} task(s) already in {runner.results.path}{forced}", flush=True)
        write_manifest(args.output, manifest)
        try:
            records = runner.run(tasks, pinned=selection.pinned if selection is not None else None)  # --augment profiles
        except KeyboardInterrupt:
            runner.cancel.set()
            print("interrupted; rerun the same command to resume", file=sys.stderr)
            return 130
        chosen = {t.id for t in tasks}
        paper = load_paper_results() if selection is None else None
        paths = write_reports([r for r in records if r.task_id in chosen], args.output, paper=paper,
                              label=label)
        print(f"results: {runner.results.path}\nreport: {paths['html']}\n{paths['markdown'].read_text()}")
        faults = internal_errors([r for r in records if r.task_id in chosen])
        if faults:  # a bug of mobile-agent, not a model's failure: the figures are not the model's
            for record in faults:
                error = record.error or {}
                print(f"mobile-agent eval: {record.task_id} ended with an internal error (a bug, not the model's "
                      f"failure): {error.get('type', '?')}: {error.get('message', '')}"[:400], file=sys.stderr)
            return EXIT_ERROR
        return EXIT_OK
    finally:
        for lease in leases:
            lease.release()
        close_devices(devices)  # the phones it opened (an iPhone's WDA connections, a USB iPhone's forward)


def internal_errors(records: list[Any]) -> list[Any]:
    """The records of tasks that ended on an error of the software itself (cause ``internal``
    of ``mobile_agent.agent.causes``, or a crash of the harness that is no ``MobileAgentError``):
    a run with any is reported and exits 3, not 0."""
    from mobile_agent.errors import MobileAgentError

    known = {cls.__name__ for cls in _subclasses(MobileAgentError)}
    faulty = []
    for record in records:
        error = record.error or {}
        if record.status == "error" and error.get("cause") == "internal":
            faulty.append(record)
        elif record.status == "crashed" and error.get("type") not in known:
            faulty.append(record)
    return faulty


def _subclasses(cls: type) -> set[type]:
    found = {cls}
    sub: type
    for sub in cls.__subclasses__():
        found |= _subclasses(sub)
    return found


def open_devices(settings: Settings, serials: list[str] | None) -> list[Phone]:
    """The phones named with --device; without any, the first ready phone (any one does: each
    task resets the phone first), said on stderr when there were several to choose from. The
    caller closes them (``close_devices``)."""
    from mobile_agent.device import list_devices, open_device, open_phone

    if serials:  # an ios:NAME serial is an iPhone of ios.devices (docs/ios.md)
        opened: list[Phone] = []
        try:
            for serial in serials:
                opened.append(open_phone(settings, serial))
        except BaseException:
            close_devices(opened)  # the ones opened before the one that failed
            raise
        return opened
    if settings.adb.serial or settings.adb.connect:
        return [open_device(settings.adb)]
    ready = sorted(d.serial for d in list_devices(settings.adb) if d.state == "device")
    if len(ready) > 1:
        print(f"{len(ready)} phones ready ({', '.join(ready)}): using {ready[0]}; "
              "name the ones to use with --device SERIAL (repeatable: one task per phone at a time)",
              file=sys.stderr, flush=True)
    return [open_device(settings.adb, ready[0] if ready else None)]


def lease_devices(settings: Settings, devices: list[Phone]) -> list[PhoneLease]:
    """Each phone's lease (``mobile_agent.device.PhoneLease``) for the whole evaluation, as
    `mobile-agent run` takes it: a phone that a REST task, an MCP session or another run holds
    is refused (``PhoneBusyError``, the leases taken so far released), never driven and reset
    in the middle of that run. The caller releases them."""
    from mobile_agent.device import PhoneLease

    leases: list[PhoneLease] = []
    try:
        for device in devices:
            lease = PhoneLease(settings.adb, device.serial, f"mobile-agent eval (pid {os.getpid()})")
            lease.acquire()
            leases.append(lease)
    except BaseException:
        for lease in leases:
            lease.release()
        raise
    return leases


def close_devices(devices: list[Phone]) -> None:
    """Close the phones ``open_devices`` opened (``close_phone``: an Android phone holds nothing open)."""
    from mobile_agent.device import close_phone

    for device in devices:
        close_phone(device)


# what starting over leaves in place: the plans cached by earlier runs (a run with --cache replays them)
_KEPT = ("plan-cache.sqlite3", "plan-cache.sqlite3-wal", "plan-cache.sqlite3-shm", "plan-cache.sqlite3-journal")


def start_over(folder: Path) -> Path | None:
    """Move what an earlier run left in ``folder`` into ``folder/previous-<UTC time>``
    (the plan cache stays: it is what a run learns, not its results)."""
    from datetime import datetime, timezone

    if not folder.is_dir():
        return None
    entries = [p for p in folder.iterdir() if not p.name.startswith("previous-") and p.name not in _KEPT]
    if not entries:
        return None
    target = folder / f"previous-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%fZ}"
    target.mkdir()
    for entry in entries:
        entry.rename(target / entry.name)
    return target


def annotate_command(args: argparse.Namespace) -> int:
    from eval.mobile_eval.judges import annotate_run, result_from_annotation
    from eval.mobile_eval.records import ResultsFile
    from eval.mobile_eval.schema import load_tasks

    tasks = {t.id: t for t in load_tasks()}
    task_id = args.task
    earlier = None  # the run's record in the results file: its label, device, tokens carry over
    if args.results is not None and args.results.exists():
        folder = args.run_dir.resolve()
        for record in ResultsFile(args.results).records():
            if record.trajectory_dir and Path(record.trajectory_dir).resolve() == folder:
                earlier = record
        if task_id is None and earlier is not None:
            task_id = earlier.task_id
    if task_id is not None and task_id not in tasks:
        print(f"mobile-agent eval annotate: no task {task_id!r}", file=sys.stderr)
        return EXIT_USAGE
    task = tasks.get(task_id) if task_id else None
    annotation = annotate_run(args.run_dir, stdin=sys.stdin, stdout=sys.stdout, annotator=args.annotator,
                              human_steps=task.human_steps if task else None, task_id=task_id)
    print(f"wrote {args.run_dir / 'annotation.json'}")
    if args.results is not None:
        if task is None:
            print("mobile-agent eval annotate: --results needs --task (the run is not in that file)", file=sys.stderr)
            return EXIT_USAGE
        kept = ("label", "instruction", "status", "error", "device", "duration_s", "prompt_tokens",
                "completion_tokens", "cost_usd", "finished_at")
        extra = {k: getattr(earlier, k) for k in kept} if earlier is not None and earlier.task_id == task.id else {}
        record = result_from_annotation(task, args.run_dir, annotation, **extra)
        ResultsFile(args.results).append(record)
        print(f"appended the judged result of {task.id} to {args.results}")
    return EXIT_OK


def report_command(args: argparse.Namespace) -> int:
    from eval.mobile_eval.records import load_paper_results, load_results
    from eval.mobile_eval.report import write_reports

    records = load_results(args.results)
    out = args.out or args.results.parent
    before = load_results(args.compare) if args.compare is not None else None
    paths = write_reports(records, out, paper=None if args.no_paper else load_paper_results(), before=before)
    print(paths["markdown"].read_text())
    if "compare" in paths:
        print(paths["compare"].read_text())
    print(f"report: {paths['html']}")
    return EXIT_OK


def tasks_command(args: argparse.Namespace) -> int:
    from eval.mobile_eval.schema import load_tasks, select_tasks

    for task in select_tasks(load_tasks(), apps=args.app, levels=args.level):
        print(f"{task.id:<16} L{task.level} {task.human_steps:>2} steps  {task.instruction}")
        if args.reference:
            for line in task.reference:
                print(f"{'':<20}{line}")
    return EXIT_OK
