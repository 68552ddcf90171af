"""`mobile-agent data`: collect verified runs of the task families and export them.

    mobile-agent data collect [eval families options] -o runs/data        # run, then export to runs/data/dataset
    mobile-agent data export RUN_DIR [-o OUT]                             # export a finished families run

Registered through the ``mobile_agent.commands`` entry point (the core never imports eval/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("data", help="data engine: verified runs of the task families -> training data")
    commands = parser.add_subparsers(dest="data_command", metavar="COMMAND")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    export = commands.add_parser("export", help="export the verified runs of a families run folder")
    export.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `eval families` / `data collect` output")
    export.add_argument("--output", "-o", type=Path, metavar="OUT", help="default: RUN_DIR/dataset")
    export.set_defaults(func=export_command)

    # collect: `eval families`' parser, then the export
    from eval.families.cli import add_families_parser
    from eval.mobile_eval.cli import mobile_eval_command
    from eval.mobile_eval.cli import register as register_eval

    scratch = argparse.ArgumentParser().add_subparsers()
    register_eval(scratch)
    run_like = scratch.choices["eval"]._subparsers._group_actions[0].choices["mobile-eval"]  # type: ignore[union-attr]

    def collect(args: argparse.Namespace) -> int:
        if not getattr(args, "model", None) and not getattr(args, "base_url", None):
            args.script_reference = True  # expert data: the reference solutions
        code = int(mobile_eval_command(args))
        if code != 0:
            return code
        return export_command(argparse.Namespace(run_dir=args.output, output=None))

    add_families_parser(commands, run_like, collect, name="collect",
                        help="run family instances (reference solutions unless --model) and export the verified runs")


def export_command(args: argparse.Namespace) -> int:
    from eval.data_engine.export import export_runs
    from eval.families.catalog import instance_by_id
    from eval.mobile_eval.records import load_results

    results = args.run_dir / "results.jsonl"
    if not results.is_file():
        print(f"mobile-agent data export: no {results}", file=sys.stderr)
        return 2
    records = load_results(results)
    tasks = {r.task_id: t for r in records if (t := instance_by_id(r.task_id)) is not None}
    out = args.output or args.run_dir / "dataset"
    summary = export_runs(records, tasks, out)
    print(summary.card())
    print(f"dataset: {out}")
    return 0
