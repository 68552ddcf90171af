"""``mobile-agent schedule``: recurring tasks on a running service, through its REST API
(``/v1/schedules``): add, list, delete. Works with the embedded default and with a farm.

The service's address comes from ``--url`` (default ``http://127.0.0.1:8000``), its token from
``--token-file`` or MOBILE_AGENT_SERVER__API_TOKEN.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from mobile_agent.cli import read_token_file


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("schedule", help="recurring tasks on a running service (cron or interval)",
                                   description="Add, list and delete recurring tasks through the service's REST API.")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the service (default: %(default)s)")
    parser.add_argument("--token-file", type=Path, help="file holding the API token (first line)")
    verbs = parser.add_subparsers(dest="verb", required=True)
    add = verbs.add_parser("add", help="a new schedule")
    add.add_argument("name", help="what it is for")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", help='five cron fields, UTC, e.g. "0 7 * * 1-5"')
    when.add_argument("--every", type=float, metavar="SECONDS", help="seconds between runs")
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument("--instruction", help="what the agent should do")
    what.add_argument("--script", type=Path, help="a file of operations, one per line (no model)")
    add.add_argument("--device", default="any", help='a serial, or "any" (default)')
    add.add_argument("--host", help="a worker host (farm)")
    add.add_argument("--require", action="append", metavar="KEY=VALUE",
                     help='a property the phone must have, e.g. "android>=13" (repeatable; farm)')
    add.add_argument("--max-steps", type=int)
    verbs.add_parser("list", help="every schedule")
    delete = verbs.add_parser("delete", help="no more occurrences (its tasks stay)")
    delete.add_argument("id", type=int)
    parser.set_defaults(func=run)


def _token(args: argparse.Namespace) -> str | None:
    if args.token_file is not None:
        return read_token_file(args.token_file)
    return os.environ.get("MOBILE_AGENT_SERVER__API_TOKEN") or None


def run(args: argparse.Namespace) -> int:
    import httpx

    token = _token(args)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(base_url=args.url.rstrip("/"), headers=headers, timeout=30) as client:
            if args.verb == "add":
                task: dict[str, Any] = {"device": args.device}
                if args.instruction:
                    task["instruction"] = args.instruction
                else:
                    task["script"] = args.script.read_text(encoding="utf-8")
                for key, value in (("host", args.host), ("requires", args.require), ("max_steps", args.max_steps)):
                    if value:
                        task[key] = value
                body = {"name": args.name, "task": task, **({"cron": args.cron} if args.cron else {"every_s": args.every})}
                response = client.post("/v1/schedules", json=body)
            elif args.verb == "list":
                response = client.get("/v1/schedules")
            else:
                response = client.delete(f"/v1/schedules/{args.id}")
    except (httpx.HTTPError, OSError) as exc:
        print(f"error: {args.url}: {exc}", file=sys.stderr)
        return 3
    if response.status_code >= 400:
        print(f"error: {response.status_code}: {response.text}", file=sys.stderr)
        return 2 if response.status_code in (400, 404, 422) else 3
    if args.verb == "list":
        for row in response.json()["data"]:
            when = f"cron {row['cron']}" if row["cron"] else f"every {row['every_s']:g} s"
            print(f"{row['id']}\t{row['name']}\t{when}\truns={row['runs']}\tnext in {row['next_in_s']:.0f} s\t"
                  f"last task={row['last_task_id'] or '-'}\tskipped={row['skipped']}")
    elif args.verb == "add":
        print(json.dumps(response.json(), indent=2))
    else:
        print(f"schedule {args.id} deleted")
    return 0
