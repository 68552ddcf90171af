"""`mobile-agent adb ARGS...`: the adb that mobile-agent uses, with these arguments.

adb often is not on the user's PATH: ``pip install`` brings it inside the adbutils wheel.
This runs that binary (or ``adb.adb_path``, or the one on PATH: ``find_adb``'s order)
against the adb server of the settings, so `mobile-agent adb -s SERIAL shell ...` reaches
the same phones as `mobile-agent run`. ``mobile-agent adb --path`` prints where it is.

The arguments after ``adb`` go to adb untouched (``mobile_agent.cli.main`` splits them off
before argparse, which would take ``-s`` for an option of its own).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from mobile_agent.errors import ConfigError, DeviceError

__all__ = ["adb_command", "register"]

_DEFAULT_PORT = 5037
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "adb",
        help="run the adb that mobile-agent uses (the adbutils wheel's, or adb.adb_path): mobile-agent adb devices",
        description="Run adb with these arguments, against the adb server of the settings. "
        "`mobile-agent adb --path` prints the binary's path.",
        add_help=False,  # --help goes to adb
    )
    parser.set_defaults(func=adb_command, adb_args=[])


def adb_command(args: argparse.Namespace) -> int:
    from mobile_agent.device import find_adb
    from mobile_agent.settings import load_settings

    try:
        settings = load_settings(args.config)
        adb = find_adb(settings.adb)
    except (ConfigError, DeviceError) as exc:
        print(f"mobile-agent adb: {exc.message}", file=sys.stderr)
        return 2 if isinstance(exc, ConfigError) else 3
    rest = list(args.adb_args)
    if rest == ["--path"]:
        print(adb)
        return 0
    server: list[str] = []
    if settings.adb.server_host not in _LOCAL_HOSTS:
        server += ["-H", settings.adb.server_host]
    if settings.adb.server_port != _DEFAULT_PORT:
        server += ["-P", str(settings.adb.server_port)]
    sys.stdout.flush()
    return subprocess.call([str(adb), *server, *rest])
