"""The service under load: latency of ``GET /v1/tasks/{id}`` and task throughput, 4 phones vs 1.

Real parts, as in the tests: a private adb server (the adbutils wheel's binary), simulated
phones over ADB on loopback, the real agent, the scripted OpenAI-compatible server (each
reply delayed by ``--llm-delay`` seconds to stand in for a model's latency), the app on a
real uvicorn. Each phase submits ``--tasks`` tasks at once (two short waits, then Stop)
while ``--clients`` threads load the server: half poll task status as fast as they get
answers (the latencies reported), half follow a task's event stream to its end.

Prints p50/p99 of the polls, tasks per minute with 4 phones and with 1, and the scaling
ratio (ideal: 4.0; the goal: >= 2.5 on a 2-core machine).

Run: ``python benchmarks/bench_server.py [--tasks 20] [--clients 50]`` or ``python -m benchmarks server``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from benchmarks.rig import private_adb_server, served_phones  # noqa: E402
from tests.llm_server import ScriptedLLMServer  # noqa: E402
from tests.server_fixtures import TaggedPlanner, service_settings, start_service, waits  # noqa: E402

FINAL = {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def phase(n_phones: int, args: argparse.Namespace, adb_port: int, workdir: Path) -> dict[str, float]:
    with served_phones(n_phones, width=args.width, height=args.height) as (serials, _phones):
        return _load(serials, args, adb_port, workdir)


def _load(serials: list[str], args: argparse.Namespace, adb_port: int, workdir: Path) -> dict[str, float]:
    n_phones = len(serials)
    planner = TaggedPlanner(default_plan=waits(2), delay_s={})
    delay = args.llm_delay
    llm = ScriptedLLMServer().start()
    llm.script([], default=lambda body: _delayed(planner, body, delay))
    folder = workdir / f"phones-{n_phones}"
    folder.mkdir()
    settings = service_settings(folder, adb_port, llm, serials)
    live = start_service(settings)
    latencies: list[float] = []
    lock = threading.Lock()
    done = threading.Event()
    try:
        started = time.perf_counter()
        ids = [live.submit(f"[t-b{i}] bench task {i}", max_steps=4)["id"] for i in range(args.tasks)]

        def poll(k: int) -> None:
            with httpx.Client(base_url=live.url, timeout=30) as http:
                i = k
                while not done.is_set():
                    t0 = time.perf_counter()
                    answer = http.get(f"/v1/tasks/{ids[i % len(ids)]}")
                    elapsed = time.perf_counter() - t0
                    if answer.status_code != 200:
                        raise SystemExit(f"poll failed: {answer.status_code}")
                    with lock:
                        latencies.append(elapsed)
                    i += 1

        def stream(k: int) -> None:
            # follows one task's events to their end, as a dashboard does
            with httpx.Client(base_url=live.url, timeout=httpx.Timeout(30, read=600)) as http:
                with http.stream("GET", f"/v1/tasks/{ids[k % len(ids)]}/events") as answer:
                    for line in answer.iter_lines():
                        if line == "event: end":
                            with lock:
                                streams_ended[0] += 1
                            return

        streams_ended = [0]
        n_streams = args.clients // 2  # half the clients stream events, half poll
        pollers = [threading.Thread(target=poll, args=(k,), daemon=True) for k in range(args.clients - n_streams)]
        streamers = [threading.Thread(target=stream, args=(k,), daemon=True) for k in range(n_streams)]
        for thread in pollers + streamers:
            thread.start()
        tasks = [live.wait_task(task_id, timeout=600) for task_id in ids]
        finished = max(t["finished_at"] for t in tasks)
        first_submit = min(t["created_at"] for t in tasks)
        done.set()
        for thread in pollers + streamers:
            thread.join(30)
        if streams_ended[0] != n_streams:
            raise SystemExit(f"only {streams_ended[0]} of {n_streams} event streams reached their end")
        wall = time.perf_counter() - started
        bad = [(t["id"], t["status"]) for t in tasks if t["status"] != "completed"]
        if bad:
            raise SystemExit(f"tasks did not complete: {bad}")
        span = finished - first_submit
        return {
            "phones": n_phones,
            "tasks_per_min": args.tasks / span * 60,
            "span_s": span,
            "wall_s": wall,
            "polls": len(latencies),
            "p50_ms": statistics.median(latencies) * 1000,
            "p99_ms": percentile(latencies, 99) * 1000,
        }
    finally:
        done.set()
        live.stop()
        llm.stop()


def _delayed(planner: TaggedPlanner, body: dict, delay: float):
    reply = planner(body)
    from tests.llm_server import Reply

    return Reply(text=reply.text, delay_s=delay, usage=reply.usage)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--llm-delay", type=float, default=0.5, help="seconds per model reply")
    parser.add_argument("--width", type=int, default=540)
    parser.add_argument("--height", type=int, default=1200)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-server-runs-"))
    try:
        with private_adb_server() as adb:
            print(
                f"{args.tasks} tasks (3 steps each), {args.clients} clients (half polling, half streaming), "
                f"model latency {args.llm_delay:g} s, phones {args.width}x{args.height}, {os.cpu_count()} CPU(s)"
            )
            results = [phase(4, args, adb.port, workdir), phase(1, args, adb.port, workdir)]
        for r in results:
            print(
                f"{r['phones']} phone(s): {r['tasks_per_min']:.1f} tasks/min ({r['span_s']:.1f} s); "
                f"GET /v1/tasks/{{id}} p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms over {r['polls']} polls"
            )
        ratio = results[0]["tasks_per_min"] / results[1]["tasks_per_min"]
        print(f"scaling 4 phones vs 1: {ratio:.2f}x (ideal 4.00x; goal >= 2.5x)")
        print(f"p99 / p50 under load (4 phones): {results[0]['p99_ms'] / results[0]['p50_ms']:.1f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
