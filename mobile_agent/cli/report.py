"""`mobile-agent report FOLDER`: write a trajectory's ``report.html`` again, from its
``trajectory.jsonl``.

Every run writes its report when it ends; a process that died first (killed, a crash, an
MCP server stopped before its client's session ended) leaves the steps but no report:
this makes it, as the steps stand (the page says "unfinished" when no result line was
written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("report", help="write a trajectory folder's report.html again (a run that never ended)")
    parser.add_argument("folder", type=Path, help="the trajectory folder (holding trajectory.jsonl)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mobile_agent.agent.trajectory import write_report

    folder: Path = args.folder
    if not (folder / "trajectory.jsonl").is_file():
        print(f"mobile-agent report: {folder} holds no trajectory.jsonl", file=sys.stderr)
        return EXIT_USAGE
    try:
        path = write_report(folder)
    except (OSError, ValueError) as exc:
        print(f"mobile-agent report: cannot write the report of {folder}: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0
