"""`mobile-agent cache`: look into the plan cache and clear it.

    mobile-agent cache list            # id, uses, successes/failures, steps, instruction
    mobile-agent cache show ID         # one plan's steps, as they replay
    mobile-agent cache clear [ID]      # one plan, or every plan

The cache is ``cache.database_url`` (default ``plan-cache.sqlite3`` in ``agent.output_dir``);
runs use it with ``mobile-agent run --cache`` or ``cache.enabled = true``. This command is the
owner of that file: it sees and clears the plans of every namespace (the service keeps one per
token or team, docs/security.md), as an admin does through ``/v1/cache``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from mobile_agent.errors import ConfigError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="the plan cache: list, show or clear the plans that replay without the model",
        description="Completed runs with --cache become plans that replay without the model; inspect or clear them.",
    )
    parser.add_argument("--output", "-o", metavar="DIR", help="the runs folder whose cache to use (agent.output_dir)")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="every cached plan, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON object per plan")
    show = verbs.add_parser("show", help="one plan's steps")
    show.add_argument("plan_id", type=int, metavar="ID")
    clear = verbs.add_parser("clear", help="delete one plan, or all of them")
    clear.add_argument("plan_id", type=int, nargs="?", metavar="ID")
    parser.set_defaults(func=cache_command)


def cache_command(args: argparse.Namespace) -> int:
    from mobile_agent.replay import PlanStore, default_cache_url
    from mobile_agent.settings import load_settings

    try:
        settings = load_settings(args.config)
        if args.output:
            settings = settings.with_overrides({"agent.output_dir": args.output})
    except ConfigError as exc:
        print(f"mobile-agent cache: {exc.message}", file=sys.stderr)
        return 2
    url = settings.cache.database_url or default_cache_url(settings.agent.output_dir)
    store = PlanStore(url, None)  # every namespace's plans
    if args.verb == "list":
        plans = store.list(limit=1000)
        if args.json:
            for plan in plans:
                print(json.dumps({
                    "id": plan.id, "instruction": plan.instruction, "template": plan.template,
                    "steps": len(plan.steps), "uses": plan.uses, "successes": plan.successes,
                    "failures": plan.failures, "trusted": plan.trusted, "created_at": plan.created_at,
                    "source_run": plan.source_run,
                }, ensure_ascii=False))
            return 0
        if not plans:
            print(f"no cached plans in {url}")
            return 0
        print(f"{'id':>4}  {'steps':>5}  {'used':>4}  {'ok/failed':>9}  created           instruction")
        for plan in plans:
            created = time.strftime("%Y-%m-%d %H:%M", time.localtime(plan.created_at))
            flag = "" if plan.trusted else "  (not replayed: fails more than it works)"
            print(f"{plan.id:>4}  {len(plan.steps):>5}  {plan.uses:>4}  {plan.successes:>4}/{plan.failures:<4}  "
                  f"{created}  {plan.instruction}{flag}")
        return 0
    if args.verb == "show":
        found = store.get(args.plan_id)
        if found is None:
            print(f"mobile-agent cache: no plan {args.plan_id} in {url}", file=sys.stderr)
            return 1
        print(f"plan {found.id}: {found.instruction}")
        print(f"  template: {found.template}")
        print(f"  recorded from run {found.source_run or '-'}; used {found.uses} times, "
              f"{found.successes} completed, {found.failures} failed")
        for number, step in enumerate(found.steps, start=1):
            texts = ", ".join(sorted(step.fingerprint.texts)[:4])
            print(f"  {number}. {step.action}    [screen: {texts or 'no text'}]")
        return 0
    if args.plan_id is not None:
        if not store.delete(args.plan_id):
            print(f"mobile-agent cache: no plan {args.plan_id} in {url}", file=sys.stderr)
            return 1
        print(f"deleted plan {args.plan_id}")
        return 0
    print(f"deleted {store.clear()} plans")
    return 0
