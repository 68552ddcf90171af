"""The ``mobile-agent`` command line.

Each subcommand lives in its own module with ``register(subparsers)``; that function
adds a parser whose ``func`` default takes the parsed args and returns an exit code.

The core's own subcommands are listed here. The layers above the core (``server``,
``eval.mobile_eval``) add theirs through the ``mobile_agent.commands`` entry-point group
(see pyproject.toml), so this package never imports them. What such a plugin may use of
this package is its ``__all__`` (``read_token_file`` for a ``--token-file`` option).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from importlib.metadata import entry_points

from mobile_agent import __version__
from mobile_agent.cli.token_file import read_token_file
from mobile_agent.errors import MobileAgentError

__all__ = ["PLUGIN_GROUP", "SUBCOMMANDS", "build_parser", "main", "read_token_file"]

SUBCOMMANDS = ("run", "devices", "doctor", "adb", "cache", "report", "test")
PLUGIN_GROUP = "mobile_agent.commands"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mobile-agent",
        description="Drive an Android phone with a multimodal LLM, through screenshots and ADB.",
    )
    parser.add_argument("--version", action="version", version=f"mobile-agent {__version__}")
    parser.add_argument("--config", metavar="FILE", help="TOML config file (default: $MOBILE_AGENT_CONFIG)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"mobile_agent.cli.{name}").register(subparsers)
    for entry in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        try:
            register = entry.load()
        except Exception as exc:  # a broken plugin must not take the core commands down
            logging.getLogger(__name__).warning("subcommand %r not loaded: %s", entry.name, exc)
            continue
        register(subparsers)
    return parser


def _split_adb(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``mobile-agent [global options] adb ARGS...``: the ARGS, kept from argparse (adb's own
    ``-s SERIAL`` is not an option of ours)."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in ("-v", "--verbose") or token.startswith("--config="):
            i += 1
        elif token == "--config":
            i += 2
        elif token == "adb":
            return argv[: i + 1], argv[i + 1 :]
        else:
            break
    return argv, None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv, adb_args = _split_adb(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if adb_args is not None:
        args.adb_args = adb_args
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except MobileAgentError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
