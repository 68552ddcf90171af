"""`mobile-agent eval families`: run a sample of family instances with Mobile-Eval's runner.

    mobile-agent eval families [--family NAME]... [--app APP]... [--level N]... [--seed N | --seeds A:B] \
        [--count N] [--script-reference | --model ...] [--device SERIAL]... -o runs/families
    mobile-agent eval families --list

Same options, resume rules, reports and step metrics as `eval mobile-eval`; the instances
come from the families instead of the 33 fixed tasks. Beside Mobile-Eval's reports,
families.md / families.json give Su and GPT4Tools' SR_act / SR_args / SR per level and
per family.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from eval.mobile_eval.run_options import RunCommand, TaskSelection, add_run_options

__all__ = ["add_families_parser"]


def add_families_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser], command: RunCommand, *,
                        name: str = "families",
                        help: str = "run seeded instances of the task families") -> argparse.ArgumentParser:
    """The families command: `eval mobile-eval`'s run options (``add_run_options``, so both stay
    alike), the families and seeds in place of its tasks."""
    parser = commands.add_parser(name, help=help, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser)
    parser.add_argument("--family", action="append", metavar="NAME", help="only this family (repeatable)")
    parser.add_argument("--app", action="append", metavar="APP", help="families that use this app (repeatable)")
    parser.add_argument("--seeds", default="0:1", metavar="A:B", help="instance seeds A..B-1 (default 0:1)")
    parser.add_argument("--count", type=int, help="a random sample of this many instances (seeded by --sample-seed)")
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="list the families and their instance counts")
    parser.add_argument("--output", "-o", type=Path, default=Path("runs/families"), metavar="DIR")
    parser.set_defaults(func=lambda args: families_command(args, command), seed=0, param=None, task=None)
    return parser


def _seeds(text: str) -> range:
    start, sep, stop = text.partition(":")
    try:
        return range(int(start), int(stop)) if sep else range(int(start), int(start) + 1)
    except ValueError:
        raise SystemExit(f"mobile-agent eval families: --seeds wants A:B, got {text!r}") from None


def families_command(args: argparse.Namespace, command: RunCommand) -> int:
    from eval.families import FAMILIES, distinct_instances, sample_instances

    if args.list:
        for family in FAMILIES.values():
            print(f"{family.name:<26} L{family.level} {', '.join(family.apps):<28} "
                  f"{distinct_instances(family, range(200)):>4} instances in seeds 0-199")
        return 0
    try:
        tasks = sample_instances(families=args.family, apps=args.app, levels=args.level, seeds=_seeds(args.seeds))
    except KeyError as exc:
        print(f"mobile-agent eval families: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.count is not None:
        tasks = random.Random(args.sample_seed).sample(tasks, min(args.count, len(tasks)))
    selection = TaskSelection(tasks)
    code = int(command(args, selection))
    results = args.output / "results.jsonl"
    # GPT4Tools' step rates per level and family, beside Table 2 (also when a task hit a bug: exit 3)
    if code in (0, 3) and results.is_file():
        from eval.families.report import write_family_reports
        from eval.mobile_eval.records import load_results

        ran = {t.id for t in selection.tasks}  # data collect --augment ran variants of the instances
        paths = write_family_reports(load_results(results), args.output, ids=ran,
                                     label=args.label or ("reference" if args.script_reference else args.model or ""))
        print(paths["markdown"].read_text(encoding="utf-8") + f"families report: {paths['json']}")
    return code
