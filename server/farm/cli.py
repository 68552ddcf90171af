"""``mobile-agent worker``: this host's phones join the farm (docs/farm.md).

Registered with ``mobile-agent`` through the ``mobile_agent.commands`` entry point, like
``serve``; procrastinate and the farm are imported when the command runs.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

from mobile_agent.errors import ConfigError
from mobile_agent.settings import load_settings

_LABEL = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]{0,63})=(\S{1,200})$")


def _label(text: str) -> tuple[str, str]:
    match = _LABEL.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a label: write key=value, e.g. lab=berlin")
    return match.group(1), match.group(2)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="drive this host's phones for a farm's shared queue (PostgreSQL)",
        description="Register this host's phones (its own adb server) in the farm's database, heartbeat, "
        "and run the tasks routed to them. The API server runs `mobile-agent serve --farm` on the same database.",
    )
    parser.add_argument("--database-url", "--database", dest="database_url",
                        help="the farm's PostgreSQL: postgresql://user:password@host/db")
    parser.add_argument("--host-name", dest="host_name", help="this host's name in the farm (default: hostname)")
    parser.add_argument("--label", action="append", type=_label, default=None, metavar="KEY=VALUE",
                        help="a label of this host's phones (repeatable), e.g. --label lab=berlin")
    parser.add_argument("--device", action="append", default=None, metavar="SERIAL",
                        help="drive only this phone (repeatable; default: every phone the adb server lists)")
    parser.add_argument("--runs-dir", type=Path,
                        help="trajectories: a folder the API server reads at the same path (default: agent.output_dir)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = load_settings(
        getattr(args, "config", None),
        overrides={
            "server.database_url": args.database_url,
            "server.devices": args.device,
            "farm.host": args.host_name,
            "farm.labels": dict(args.label) if args.label else None,
            "agent.output_dir": str(args.runs_dir) if args.runs_dir else None,
        },
    )
    if not settings.server.database_url.startswith(("postgresql", "postgres:")):
        raise ConfigError(
            f"the farm's queue needs PostgreSQL; server.database_url is {settings.server.database_url.split(':')[0]}:… "
            "(give --database postgresql://user@host/db)",
            setting="server.database_url",
        )
    try:
        import procrastinate  # noqa: F401
    except ImportError as exc:
        raise ConfigError("the farm needs the postgres extra: pip install 'mobile-agent[postgres]'") from exc
    # the CLI configured the root logger at WARNING; the worker says what it does at --log-level
    level = getattr(logging, args.log_level.upper())
    logging.getLogger().setLevel(level)
    logging.getLogger("procrastinate").setLevel(max(logging.WARNING, level))
    from server.farm.host import run_host

    return run_host(settings)
