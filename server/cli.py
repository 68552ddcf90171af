"""`mobile-agent serve`: the REST service and dashboard (uvicorn).

Registered with ``mobile-agent`` through the ``mobile_agent.commands`` entry point, so the
core never imports the service. FastAPI and the app are imported when the command runs,
not when the parser is built, to keep every other subcommand quick to start.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mobile_agent.cli import read_token_file
from mobile_agent.settings import load_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the REST task API and the dashboard",
        description="Serve /v1/tasks, /v1/devices, /metrics and the dashboard. Beyond localhost an API "
        "token is required (MOBILE_AGENT_SERVER__API_TOKEN or --token-file).",
    )
    parser.add_argument("--host", help="listen address (default: server.host, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="listen port (default: server.port, 8000)")
    parser.add_argument("--token-file", type=Path, help="file holding the API token (first line)")
    parser.add_argument("--database-url", "--database", dest="database_url",
                        help="SQLAlchemy URL: sqlite:///path (default: sqlite under runs/) or postgresql://user@host/db")
    parser.add_argument("--runs-dir", type=Path, help="where trajectories go (default: agent.output_dir)")
    parser.add_argument(
        "--device", action="append", default=None, metavar="SERIAL", help="drive only this phone (repeatable)"
    )
    parser.add_argument("--no-preload", action="store_true", help="load perception models on first use")
    parser.add_argument("--farm", action="store_true", default=None,
                        help="hold no phone: queue tasks for `mobile-agent worker` hosts (PostgreSQL; docs/farm.md)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    token = read_token_file(args.token_file) if args.token_file is not None else None
    settings = load_settings(
        getattr(args, "config", None),
        overrides={
            "server.host": args.host,
            "server.port": args.port,
            "server.api_token": token,
            "server.database_url": args.database_url,
            "server.devices": args.device,
            "server.preload_perception": False if args.no_preload else None,
            "farm.enabled": args.farm,
            "agent.output_dir": str(args.runs_dir) if args.runs_dir else None,
        },
    )
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - uvicorn is a core dependency
        print("error: uvicorn is missing: pip install 'uvicorn[standard]'", file=sys.stderr)
        return 3
    from server.app import create_app

    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.server.host,
        port=settings.server.port,
        log_level=args.log_level,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    stop = server.handle_exit

    def drain_then_stop(sig: int, frame: Any) -> None:
        # Drain at once (no new tasks, event streams end): uvicorn alone first waits for open
        # streams, and the scheduler would go on starting tasks that the stop then interrupts.
        service = getattr(app.state, "service", None)
        if service is not None:
            service.drain()
        stop(sig, frame)

    server.handle_exit = drain_then_stop  # type: ignore[method-assign]  # read when the signals are installed
    server.run()
    return 0
