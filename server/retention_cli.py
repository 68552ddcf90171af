"""``mobile-agent gc``: apply ``server.retention`` now (``--dry-run``: only say what would go).

The same cleanup the running service does every ``server.retention.interval_s``, on the same
database and runs folder (``--database-url``, ``--runs-dir`` or the settings); safe while the
service runs: a queued, running or waiting task is never touched. ``--as-of`` moves the clock
(an ISO date or a Unix time): what would go on that day.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from mobile_agent.settings import load_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "gc", help="delete old finished tasks, unused cached plans, stale relay files (server.retention)",
        description="Apply server.retention to the service's database and runs folder: finished tasks older than "
        "task_days or over runs_max_mb (oldest first), cached plans unused for cache_unused_days, the farm's "
        "live relay files older than relay_max_age_s, audit trail rows older than audit_days.",
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    parser.add_argument("--database-url", "--database", dest="database_url", help="default: server.database_url")
    parser.add_argument("--runs-dir", type=Path, help="default: agent.output_dir")
    parser.add_argument("--as-of", metavar="WHEN", help="pretend it is WHEN (2027-01-31, or a Unix time)")
    parser.set_defaults(func=run)


def _when(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise SystemExit(f"--as-of {text!r}: give an ISO date (2027-01-31) or a Unix time") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


def run(args: argparse.Namespace) -> int:
    from server.retention import Retention
    from server.store import TaskStore, check_database_url

    settings = load_settings(getattr(args, "config", None), overrides={
        "server.database_url": args.database_url,
        "agent.output_dir": str(args.runs_dir) if args.runs_dir else None,
    })
    url = settings.server.database_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        print(f"no database at {url.removeprefix('sqlite:///')}: nothing to delete (--database-url, or run it where "
              "the service runs)")
        return 0
    check_database_url(url)
    store = TaskStore(url, instance="gc")
    try:
        retention = Retention(settings, store, Path(settings.agent.output_dir))
        done = retention.run(_when(args.as_of), dry_run=args.dry_run)
    finally:
        store.close()
    verb = "would delete" if args.dry_run else "deleted"
    for item in done:
        print(f"{verb} {item.line()}")
    tasks = sum(item.kind == "task" for item in done)
    plans = sum(item.kind == "plan" for item in done)
    relay = sum(item.kind == "relay" for item in done)
    audit = "".join(f", audit {item.why.split(',')[0]}" for item in done if item.kind == "audit")
    print(f"{verb} {tasks} tasks, {plans} cached plans, {relay} relay files{audit} "
          f"({sum(item.bytes for item in done) / 1e6:.1f} MB)")
    return 0
