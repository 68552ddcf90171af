"""What every ``mobile-agent`` process loads before it does anything: the parser of every
command (core and plugins) but none of the modules only one command needs. The ``data``
command's export used to come in through ``eval/data_engine/__init__.py`` and bring the OpenAI
client's types with it (about 0.65 s of a 1.5 s ``mobile-agent --version``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_AT_START = ("openai", "eval.data_engine.export", "eval.data_engine.verify", "eval.data_engine.judges")


def test_building_the_parser_loads_no_command_s_heavy_modules() -> None:
    code = (
        "import json, sys\n"
        "from mobile_agent.cli import build_parser\n"
        "parser = build_parser()\n"
        "commands = sorted(parser._subparsers._group_actions[0].choices)\n"  # noqa: SLF001 (argparse's own)
        f"print(json.dumps({{'commands': commands, 'loaded': [m for m in {list(NOT_AT_START)!r} if m in sys.modules]}}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"run", "data", "eval", "serve", "mcp"} <= set(seen["commands"])  # the plugins are registered
    assert seen["loaded"] == [], seen["loaded"]


def test_the_data_command_still_reaches_its_export() -> None:
    from eval.data_engine.export import ExportSummary, export_runs

    assert callable(export_runs) and ExportSummary.__name__ == "ExportSummary"
