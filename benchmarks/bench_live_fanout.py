"""Live-view fan-out: 1, 10 and 50 viewers of one phone's ``GET /v1/tasks/{id}/live``.

A real ``mobile-agent serve`` in its own process (so that its CPU is its own), a private adb
server and one simulated 540x1200 phone running a long script task. For each number of
viewers (each asking ``fps=10``; the phone is captured at ``server.live_fps``, once for all),
after a warm-up, over a window: the server process's CPU (user+system time / wall time, from
/proc), the p50/p99 of ``GET /v1/tasks/{id}`` polled back to back by one client, and the
frames the viewers got. Prints a table, the 50-to-1 ratios (the goal: under 2x) and the load
average of the machine. Before the fan-out (issue 29), 40 viewers of fps=10 took the server to
74 % CPU and the poll p99 from 137 to 2,886 ms.

Run: ``python benchmarks/bench_live_fanout.py [--window 8] [--viewers 1 10 50]``
or ``python -m benchmarks live_fanout``. The code before the fan-out, for comparison:
``git worktree add /tmp/before 0635bfe~1`` then ``--server-dir /tmp/before --before-fanout``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.rig import ADB_PORT, free_port, private_adb_server, served_phones  # noqa: E402

LIVE_FPS = 3.0


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process, its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


class Viewers:
    """``n`` live-view streams read to the end, on one asyncio loop in a thread."""

    def __init__(self, url: str, task_id: int, n: int) -> None:
        self.url, self.task_id, self.n = url, task_id, n
        self.frames = 0
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _one(self, client: httpx.AsyncClient) -> None:
        async with client.stream("GET", f"/v1/tasks/{self.task_id}/live", params={"fps": 10}) as answer:
            if answer.status_code != 200:
                self.refused += 1
                return
            async for chunk in answer.aiter_bytes():
                self.frames += chunk.count(b"Content-Type: image/jpeg")
                if self._stop.is_set():
                    return

    async def _main(self) -> None:
        import httpx

        limits = httpx.Limits(max_connections=self.n + 5)
        async with httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(30, read=60), limits=limits) as client:
            await asyncio.gather(*(self._one(client) for _ in range(self.n)), return_exceptions=True)

    def __enter__(self) -> Viewers:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(15)


def main() -> int:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--window", type=float, default=8.0, help="seconds measured per step")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--live-fps", type=float, default=LIVE_FPS, help="server.live_fps (the phone's rate)")
    parser.add_argument("--server-dir", type=Path, default=Path(__file__).resolve().parents[1],
                        help="serve from this checkout (e.g. a `git worktree` of an older commit, to compare)")
    parser.add_argument("--before-fanout", action="store_true",
                        help="the --server-dir checkout predates server.live_* (one capture per viewer)")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-live-fanout-"))
    port = free_port()
    with private_adb_server(), served_phones(1, width=540, height=1200) as (serials, _phones):
        env = {
            **os.environ,
            "MOBILE_AGENT_ADB__SERVER_PORT": str(ADB_PORT),
            "MOBILE_AGENT_SERVER__DEVICES": f'["{serials[0]}"]',
            "MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S": "0.3",
        }
        if not args.before_fanout:
            env.update({"MOBILE_AGENT_SERVER__LIVE_FPS": str(args.live_fps),
                        "MOBILE_AGENT_SERVER__LIVE_VIEWERS_PER_PHONE": "200",
                        "MOBILE_AGENT_SERVER__LIVE_VIEWERS_PER_TOKEN": "200"})
        server = subprocess.Popen(
            [sys.executable, "-m", "mobile_agent.cli", "serve", "--port", str(port), "--no-preload",
             "--database-url", f"sqlite:///{workdir / 'bench.sqlite3'}", "--runs-dir", str(workdir / "runs"),
             "--log-level", "warning"],
            env=env, stdin=subprocess.DEVNULL, cwd=args.server_dir,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        devices = http.get("/v1/devices").json()["data"]
                        if devices and devices[0]["state"] == "device":
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("the server did not start")
                    time.sleep(0.2)
                how = ("each viewer captures the phone itself at its fps=10 (before the fan-out)" if args.before_fanout
                       else f"one 540x1200 phone captured at {args.live_fps:g} fps for all viewers (each asks fps=10)")
                print(f"{how}; server from {args.server_dir}; {args.window:g} s windows; {os.cpu_count()} CPU(s)")
                print(f"{'viewers':>7} {'server CPU %':>12} {'poll p50 ms':>11} {'poll p99 ms':>11} "
                      f"{'polls':>6} {'frames/s':>9} {'refused':>7}")
                rows = []
                for n in args.viewers:
                    script = "\n".join(["Home", "Wait (0.5)"] * 50)  # ~30 s: past the window (100 lines: server.max_steps_limit)
                    created = http.post("/v1/tasks", json={"script": script})
                    if created.status_code != 202:
                        raise SystemExit(f"the task was refused: {created.status_code} {created.text}")
                    task = created.json()
                    while http.get(f"/v1/tasks/{task['id']}").json()["status"] != "running":
                        time.sleep(0.1)
                    with Viewers(url, task["id"], n) as viewers:
                        time.sleep(args.warmup)
                        frames0, cpu0, t0 = viewers.frames, _cpu_s(server.pid), time.monotonic()
                        latencies = []
                        while time.monotonic() - t0 < args.window:
                            begun = time.perf_counter()
                            answer = http.get(f"/v1/tasks/{task['id']}")
                            latencies.append((time.perf_counter() - begun) * 1000)
                            if answer.status_code != 200:
                                raise SystemExit(f"poll answered {answer.status_code}")
                            time.sleep(0.02)
                        wall = time.monotonic() - t0
                        cpu = (_cpu_s(server.pid) - cpu0) / wall * 100
                        fps = (viewers.frames - frames0) / wall
                        refused = viewers.refused
                    http.post(f"/v1/tasks/{task['id']}/cancel")
                    row = (n, cpu, statistics.median(latencies), _percentile(latencies, 99), len(latencies), fps)
                    rows.append(row)
                    print(f"{n:>7} {cpu:>12.1f} {row[2]:>11.1f} {row[3]:>11.1f} {len(latencies):>6} {fps:>9.1f} "
                          f"{refused:>7}")
                first, last = rows[0], rows[-1]
                print(f"{last[0]} vs {first[0]} viewers: server CPU x{last[1] / max(first[1], 0.1):.2f}, "
                      f"poll p99 x{last[3] / max(first[3], 0.1):.2f} (goal: under 2x each)")
                print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            server.terminate()
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
