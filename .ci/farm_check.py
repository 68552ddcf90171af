"""The container tier's farm check (.ci/containers), against a farm that docker/compose.yaml
brought up: both worker hosts' phones listed free; a scripted task completed on host-a; that
host's worker killed (KILL, a shell command) and its phones shown "host lost"; a task then
completed on host-b. Standard library only, plus .ci/smoke.py's task helper.

Usage: python farm_check.py --api URL --token TOKEN --kill "podman kill <worker-a container>"
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from smoke import http, run_task, say  # noqa: E402


def phones(api: str, token: str) -> list[dict[str, object]]:
    data = http("GET", f"{api}/v1/devices", token=token)["data"]
    assert isinstance(data, list)
    return data


def wait_for(api: str, token: str, what: str, ok: Callable[[list[dict[str, object]]], bool],
             timeout: float = 180) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout
    while True:
        listed = phones(api, token)
        if ok(listed):
            return listed
        if time.monotonic() > deadline:
            raise SystemExit(f"farm: {what} not seen within {timeout:.0f} s: {listed}")
        time.sleep(1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--kill", required=True, help="shell command that kills host-a's worker")
    args = parser.parse_args()

    def free_on(host: str, listed: list[dict[str, object]]) -> int:
        return sum(1 for p in listed if p["host"] == host and p["state"] == "free")

    listed = wait_for(args.api, args.token, "two free phones on each host",
                      lambda ps: free_on("host-a", ps) == 2 and free_on("host-b", ps) == 2)
    say(f"farm: {len(listed)} phones: " + ", ".join(f"{p['host']}/{p['serial']} {p['state']}" for p in listed))
    task = run_task(args.api, args.token, {"host": "host-a"})
    say(f"farm: task {task['id']} {task['status']} on host-a")

    subprocess.run(shlex.split(args.kill), check=True, capture_output=True)
    say("farm: host-a's worker killed")
    wait_for(args.api, args.token, "host-a's phones lost",
             lambda ps: all(p["state"] == "host lost" for p in ps if p["host"] == "host-a"))
    say("farm: host-a's phones show 'host lost'")
    task = run_task(args.api, args.token, {"host": "host-b"})
    say(f"farm: task {task['id']} {task['status']} on host-b after host-a died")
    return 0


if __name__ == "__main__":
    sys.exit(main())
