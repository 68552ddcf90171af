"""The farm under load: 3 hosts x 4 phones vs 1 phone, and the embedded SQLite default with 4.

Real processes and parts: PostgreSQL (Debian's, a throwaway cluster as in the tests), per
host its own adb server (the adbutils wheel's binary, own port and HOME), a ``simphone serve``
process with its phones ``adb connect``ed to it, and a ``mobile-agent worker``; one API server
(``mobile-agent serve --farm``) that holds no phone; the scripted OpenAI-compatible server
(tests/llm_server.py) answering every planner call after ``--llm-delay`` seconds. The embedded
phase is one ``mobile-agent serve`` with its own SQLite file, driving 4 phones itself.

Each phase submits two batches of tasks, each batch at once (instructions planned as two short
waits, then Stop: three model calls each), with one event stream per task that records when its
first event and its ``running`` status arrive after the submission's POST began. The first batch
runs with no other client: its tasks/min is the throughput, and its CPU per task (farm processes
by role, PostgreSQL's backends apart) says where the CPU goes. The second batch runs while
``--clients`` threads poll ``GET /v1/tasks/{id}`` as fast as they get answers: its GET p50/p99,
and its tasks/min under that load. On 2 cores the pollers (about 130 requests/s) take a core
of their own, so the two are measured apart.

Prints per phase: tasks/min, GET p50/p99, submit -> first event p50/p99, CPU per task by
process; the farm's scaling, 12 phones vs 1 (goal >= 10x), for both batches; the load average
before and after.

Run: ``python benchmarks/bench_farm.py [--tasks 48] [--clients 50]`` or ``python -m benchmarks farm``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from benchmarks.rig import free_port  # noqa: E402
from tests.llm_server import Reply, ScriptedLLMServer  # noqa: E402
from tests.pg_fixtures import start_postgres  # noqa: E402
from tests.server_fixtures import TaggedPlanner, waits  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FINAL = {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("MOBILE_AGENT_", "ANDROID_"))}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def _toml(sections: dict[str, dict[str, Any]]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return f'"{v}"'
        return str(v)

    return "\n".join(f"[{name}]\n" + "\n".join(f"{k} = {value(v)}" for k, v in vals.items()) + "\n"
                     for name, vals in sections.items())


def _config(path: Path, *, database: str, adb_port: int, runs: Path, llm: str, host: str = "") -> Path:
    sections: dict[str, dict[str, Any]] = {
        "adb": {"server_port": adb_port},
        "server": {"database_url": database, "device_refresh_s": 1.0, "preload_perception": True},
        "agent": {"output_dir": str(runs), "completion_check": False, "settle_timeout_s": 0.6,
                  "settle_interval_s": 0.1},
        "planner": {"base_url": llm, "api_key": "bench-key", "model": "gpt-4o", "timeout_s": 30.0,
                    "max_retries": 1, "image_long_side": 512},
        "farm": {"heartbeat_s": 2.0, "host_timeout_s": 15.0, "poll_s": 0.5, **({"host": host} if host else {})},
    }
    for override in _OVERRIDES:  # --set SECTION.KEY=VALUE
        dotted, raw = override.split("=", 1)
        section, key = dotted.split(".", 1)
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw  # a bare string
        sections.setdefault(section, {})[key] = value
    path.write_text(_toml(sections))
    return path


def _wait(process: subprocess.Popen[bytes], condition: Any, what: str, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            raise SystemExit(f"{what}: the process exited: {log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not within {timeout} s: {log.read_text()[-3000:]}")
        time.sleep(0.2)


_OVERRIDES: list[str] = []  # --set: settings for every host and server, as SECTION.KEY=VALUE
_NOT_FARM = {"postgres", "client", "model"}  # shown beside the farm's CPU per task, not in it
_PIDS: dict[int, str] = {}  # the farm's processes (simphone, worker, api) by role: their CPU time is read
_POSTMASTER: list[int] = []  # PostgreSQL's backends (its children) are counted as "postgres"
_PROFILE_DIR: list[Path] = []  # --profile: each farm process runs under benchmarks/profile_process.py


def _cpu_s() -> dict[str, float]:
    """User + system CPU seconds of the farm's live processes by role, PostgreSQL's backends
    included (/proc/PID/stat, man 5 proc: ppid is field 4, utime and stime 14 and 15)."""
    tick = os.sysconf("SC_CLK_TCK")
    roles = {**_PIDS, os.getpid(): "client"}  # this bench's own submitting, streaming and polling
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stats[int(entry)] = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    for pid, fields in stats.items():
        if _POSTMASTER and (pid == _POSTMASTER[0] or int(fields[1]) == _POSTMASTER[0]):
            roles[pid] = "postgres"
    totals: dict[str, float] = {}
    for pid, role in roles.items():
        if pid in stats:
            fields = stats[pid]
            totals[role] = totals.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return totals


@contextmanager
def _process(args: list[str], log: Path, env: dict[str, str] | None = None, role: str = ""):
    if _PROFILE_DIR and args[1] == "-m":
        args = [args[0], str(REPO / "benchmarks" / "profile_process.py"), str(_PROFILE_DIR[0] / f"{log.stem}.prof"),
                *args[2:]]
    process = subprocess.Popen(args, cwd=REPO, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env or ENV)
    _PIDS[process.pid] = role or log.stem.split("-")[0]
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


@contextmanager
def _host(workdir: Path, name: str, n_phones: int, *, database: str, runs: Path, llm: str, worker: bool = True):
    """An adb server of its own, n simulated phones connected to it, and (farm) a worker. The
    phones listen on ports the system picks (its ephemeral range lies above the 5555-5585 that
    the adb server scans for emulators)."""
    import adbutils

    adb = str(Path(adbutils.__file__).parent / "binaries" / "adb")
    port = free_port()
    home = workdir / f"adb-{name}"
    home.mkdir()
    env = dict(ENV, HOME=str(home), TMPDIR=str(home))
    subprocess.run([adb, "-P", str(port), "start-server"], env=env, check=True, capture_output=True, timeout=60)
    for entry in os.listdir("/proc"):  # the daemon it forked: its CPU counts as the host's ("adb")
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"fork-server" in cmdline and f"tcp:{port}".encode() in cmdline:
            _PIDS[int(entry)] = "adb"
    try:
        with ExitStack() as stack:
            log = workdir / f"simphone-{name}.log"
            phones = stack.enter_context(_process(
                [sys.executable, "-m", "simphone", "serve", "--port", "0", "--count", str(n_phones),
                 "--width", "540", "--height", "1200", "--connect", "--adb", adb, "--adb-port", str(port)], log, env))
            client = adbutils.AdbClient(host="127.0.0.1", port=port)
            _wait(phones, lambda: sum(d.state == "device" for d in client.list()) >= n_phones, f"{name}'s phones", log)
            config = _config(workdir / f"{name}.toml", database=database, adb_port=port, runs=runs, llm=llm, host=name)
            if worker:
                wlog = workdir / f"worker-{name}.log"
                stack.enter_context(_process(
                    [sys.executable, "-m", "mobile_agent.cli", "--config", str(config), "worker", "--log-level",
                     "warning"], wlog))
            yield config
    finally:
        subprocess.run([adb, "-P", str(port), "kill-server"], env=env, capture_output=True, timeout=30)


def _serve(config: Path, log: Path, *extra: str):
    port = free_port()
    proc = _process([sys.executable, "-m", "mobile_agent.cli", "--config", str(config), "serve", "--port", str(port),
                     "--log-level", "warning", *extra], log)
    return port, proc


def _load(url: str, n_phones: int, args: argparse.Namespace, label: str) -> dict[str, Any]:
    """Two batches of the same tasks: the first with an event stream per task and no poller
    (throughput, event delivery, CPU per task), the second with ``--clients`` threads polling
    ``GET /v1/tasks/{id}`` as fast as they are answered (its latency, and the throughput
    under that load)."""
    with httpx.Client(base_url=url, timeout=30) as http:
        deadline = time.monotonic() + 120
        while sum(d["state"] in ("free", "device") for d in http.get("/v1/devices").json()["data"]) < n_phones:
            if time.monotonic() > deadline:
                raise SystemExit(f"{label}: {n_phones} phones not ready: {http.get('/v1/devices').text}")
            time.sleep(0.3)
    n_tasks = args.tasks if n_phones > 1 else max(4, args.tasks // 6)
    idle_before = _cpu_s()  # the farm with nothing to do: what its polling and heartbeats cost
    time.sleep(5.0)
    idle = {role: (cpu - idle_before.get(role, 0.0)) / 5.0 for role, cpu in _cpu_s().items()}
    alone = _batch(url, n_phones, n_tasks, label, "a", 0)
    polled = _batch(url, n_phones, n_tasks, label, "b", args.clients)
    return {**alone, **{k: polled[k] for k in ("polls", "p50_ms", "p99_ms")},
            "polled_tasks_per_min": polled["tasks_per_min"], "polled_cpu_per_task_s": polled["cpu_per_task_s"],
            "polled_first_p50_ms": polled["first_p50_ms"], "polled_first_p99_ms": polled["first_p99_ms"],
            "idle_cpu": idle}


def _batch(url: str, n_phones: int, n_tasks: int, label: str, batch: str, clients: int) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=30) as http:
        latencies: list[float] = []
        first_event: list[float] = []
        started_at: list[float] = []
        delivery: list[float] = []
        seen_first: set[int] = set()
        lock = threading.Lock()
        done = threading.Event()
        ids: list[int] = []

        def follow(task_id: int, submitted: float) -> None:
            # first event: the stream's first one (the "queued" status, written with the task);
            # started: the "running" status (queue wait included); delivery: how long after its
            # writer (the worker) stored it the client had that event (the same clock: one machine)
            with httpx.Client(base_url=url, timeout=httpx.Timeout(30, read=900)) as streamer:
                with streamer.stream("GET", f"/v1/tasks/{task_id}/events") as answer:
                    for line in answer.iter_lines():
                        if not line.startswith("data: "):
                            continue
                        now = time.perf_counter()
                        if task_id not in seen_first:
                            seen_first.add(task_id)
                            with lock:
                                first_event.append(now - submitted)
                        if '"status":"running"' in line:
                            created = json.loads(line[6:])["created_at"]
                            with lock:
                                started_at.append(now - submitted)
                                delivery.append(max(0.0, time.time() - created))
                            return

        followers = []
        print(f"{label}: {n_phones} phones ready, submitting {n_tasks} tasks, {clients} polling", flush=True)
        cpu_before = _cpu_s()
        started = time.perf_counter()
        for i in range(n_tasks):
            t0 = time.perf_counter()
            tag = f"t-{label.split()[0]}{n_phones}{batch}-{i}"  # the planner's plan is per tag: new ones per phase
            answer = http.post("/v1/tasks", json={"instruction": f"[{tag}] farm bench task {i}", "max_steps": 4})
            if answer.status_code != 202:
                raise SystemExit(f"submit failed: {answer.status_code} {answer.text}")
            ids.append(answer.json()["id"])
            thread = threading.Thread(target=follow, args=(ids[-1], t0), daemon=True)
            thread.start()
            followers.append(thread)

        def poll(k: int) -> None:
            with httpx.Client(base_url=url, timeout=30) as poller:
                i = k
                while not done.is_set():
                    t0 = time.perf_counter()
                    answer = poller.get(f"/v1/tasks/{ids[i % len(ids)]}")
                    elapsed = time.perf_counter() - t0
                    if answer.status_code != 200:
                        raise SystemExit(f"poll failed: {answer.status_code}")
                    with lock:
                        latencies.append(elapsed)
                    i += 1

        pollers = [threading.Thread(target=poll, args=(k,), daemon=True) for k in range(clients)]
        for thread in pollers:
            thread.start()
        tasks = []
        for task_id in ids:
            while (task := http.get(f"/v1/tasks/{task_id}").json())["status"] not in FINAL:
                if time.perf_counter() - started > 900:
                    raise SystemExit(f"{label}: task {task_id} still {task['status']}")
                time.sleep(0.5)
            tasks.append(task)
        cpu_after = _cpu_s()
        cpu_roles = {role: (cpu_after.get(role, 0.0) - cpu_before.get(role, 0.0)) / n_tasks for role in cpu_after}
        done.set()
        for thread in pollers + followers:
            thread.join(30)
    if os.environ.get("BENCH_FARM_DUMP"):  # the task records, to look at a phase's timeline
        with open(os.environ["BENCH_FARM_DUMP"], "a") as dump:
            dump.write(json.dumps({"label": label, "batch": batch, "tasks": tasks}) + "\n")
    bad = [(t["id"], t["status"], t["error"]) for t in tasks if t["status"] != "completed"]
    if bad:
        raise SystemExit(f"{label}: tasks did not complete: {bad[:3]}")
    span = max(t["finished_at"] for t in tasks) - min(t["created_at"] for t in tasks)
    return {
        "label": label, "phones": n_phones, "tasks": n_tasks, "tasks_per_min": n_tasks / span * 60, "span_s": span,
        "polls": len(latencies), "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": percentile(latencies, 99) * 1000 if latencies else 0.0,
        "first_p50_ms": statistics.median(first_event) * 1000, "first_p99_ms": percentile(first_event, 99) * 1000,
        "start_p50_ms": statistics.median(started_at) * 1000, "start_p99_ms": percentile(started_at, 99) * 1000,
        "delivery_p50_ms": statistics.median(delivery) * 1000, "delivery_p99_ms": percentile(delivery, 99) * 1000,
        "devices": len({t["device"] for t in tasks}),
        "run_p50_s": statistics.median(t["run_s"] for t in tasks),
        "cpu_per_task_s": sum(v for k, v in cpu_roles.items() if k not in _NOT_FARM),
        "cpu_roles": cpu_roles,
    }


def farm_phase(workdir: Path, pg: Any, hosts: int, per_host: int, args: argparse.Namespace, llm: str) -> dict[str, Any]:
    database = pg.create_database()
    runs = workdir / f"shared-runs-{hosts}x{per_host}"
    with ExitStack() as stack:
        configs = [stack.enter_context(_host(workdir, f"h{hosts}x{per_host}-{i}", per_host, database=database,
                                             runs=runs, llm=llm)) for i in range(hosts)]
        log = workdir / f"api-{hosts}x{per_host}.log"
        port, proc = _serve(configs[0], log, "--farm")
        process = stack.enter_context(proc)
        _wait(process, lambda: _ready(port), "the API server", log)
        return _load(f"http://127.0.0.1:{port}", hosts * per_host, args, f"farm {hosts}x{per_host} (Postgres)")


def sqlite_phase(workdir: Path, n: int, args: argparse.Namespace, llm: str) -> dict[str, Any]:
    database = f"sqlite:///{workdir / 'embedded.sqlite3'}"
    with _host(workdir, "embedded", n, database=database, runs=workdir / "embedded-runs", llm=llm,
               worker=False) as config:
        log = workdir / "serve-embedded.log"
        port, proc = _serve(config, log)
        with proc as process:
            _wait(process, lambda: _ready(port), "the embedded server", log)
            return _load(f"http://127.0.0.1:{port}", n, args, f"embedded {n} phones (SQLite)")


class _LLM:
    """The scripted model server in a process of its own: in this one, the polling threads
    would hold the GIL and its replies would come late for reasons of the bench, not the farm."""

    def __init__(self, process: Any, port: int) -> None:
        self.process, self.base_url = process, f"http://127.0.0.1:{port}/v1"

    def terminate(self) -> None:
        self.process.terminate()
        self.process.join(10)


def _llm_process(delay: float) -> _LLM:
    import multiprocessing

    port = free_port()

    def serve() -> None:
        planner = TaggedPlanner(default_plan=waits(2))
        llm = ScriptedLLMServer(port=port).start()
        llm.script([], default=lambda body: Reply(text=planner(body).text, delay_s=delay, usage=(1000, 50)))
        threading.Event().wait()

    process = multiprocessing.get_context("fork").Process(target=serve, daemon=True)
    process.start()
    if process.pid is not None:
        _PIDS[process.pid] = "model"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return _LLM(process, port)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise SystemExit("the scripted model server did not start") from None
            time.sleep(0.1)


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=48, help="tasks of the 12-phone phase (others: 1/6 of it, >= 4)")
    parser.add_argument("--clients", type=int, default=50, help="threads polling GET /v1/tasks/{id}")
    parser.add_argument("--llm-delay", type=float, default=0.5, help="seconds per model reply")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    parser.add_argument("--phases", default="farm12,farm1,embedded", help="which phases, comma-separated")
    parser.add_argument("--profile", type=Path, help="write a cProfile file per farm process into this folder")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a setting for every host and server (JSON value or a bare string), e.g. agent.prefetch_perception=false")
    args = parser.parse_args()
    _OVERRIDES.extend(args.set)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        _PROFILE_DIR.append(args.profile.resolve())
    phases = set(args.phases.split(","))

    llm = _llm_process(args.llm_delay)
    workdir = Path(tempfile.mkdtemp(prefix="bench-farm-"))
    load_before = os.getloadavg()
    pg = start_postgres()
    _POSTMASTER.append(int((pg.data / "postmaster.pid").read_text().split()[0]))
    try:
        print(f"{args.clients} polling clients, model latency {args.llm_delay:g} s, 3 model calls per task, "
              f"phones 540x1200, {os.cpu_count()} CPU(s), load average before {load_before[0]:.2f}", flush=True)
        results = []
        if "farm12" in phases:
            results.append(farm_phase(workdir, pg, 3, 4, args, llm.base_url))
        if "farm1" in phases:
            results.append(farm_phase(workdir, pg, 1, 1, args, llm.base_url))
        if "embedded" in phases:
            results.append(sqlite_phase(workdir, 4, args, llm.base_url))
    finally:
        pg.shutdown()
        llm.terminate()
        if args.keep:
            print(f"work folder kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    for r in results:
        print(f"{r['label']}: {r['tasks']} tasks on {r['devices']} phones, {r['tasks_per_min']:.1f} tasks/min "
              f"({r['span_s']:.1f} s); GET /v1/tasks/{{id}} p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms "
              f"over {r['polls']} polls; submit -> first event p50 {r['first_p50_ms']:.0f} ms, "
              f"p99 {r['first_p99_ms']:.0f} ms; submit -> running event p50 {r['start_p50_ms']:.0f} ms, "
              f"p99 {r['start_p99_ms']:.0f} ms (queue wait included); running event written -> received "
              f"p50 {r['delivery_p50_ms']:.0f} ms, p99 {r['delivery_p99_ms']:.0f} ms; a run's median length {r['run_p50_s']:.2f} s; "
              f"CPU of the farm's processes per task {r['cpu_per_task_s']:.2f} s ("
              + ", ".join(f"{k} {v:.3f}" for k, v in sorted(r["cpu_roles"].items())) + "); "
              f"with the pollers: {r['polled_tasks_per_min']:.1f} tasks/min, submit -> first event p50 "
              f"{r['polled_first_p50_ms']:.0f} ms, p99 {r['polled_first_p99_ms']:.0f} ms, "
              f"CPU per task {r['polled_cpu_per_task_s']:.2f} s; idle, CPU s per s: "
              + ", ".join(f"{k} {v:.3f}" for k, v in sorted(r["idle_cpu"].items())))
    if len(results) < 2 or results[0]["phones"] != 12 or results[1]["phones"] != 1:
        return 0
    ratio = results[0]["tasks_per_min"] / results[1]["tasks_per_min"]
    print(f"farm scaling, 12 phones vs 1: {ratio:.2f}x (ideal 12x; goal >= 10x); with the pollers "
          f"{results[0]['polled_tasks_per_min'] / results[1]['polled_tasks_per_min']:.2f}x")
    cores = os.cpu_count() or 1
    ceiling = cores / results[0]["cpu_per_task_s"] * 60
    print(f"CPU ceiling of this machine: {cores} cores / {results[0]['cpu_per_task_s']:.2f} CPU s per task = "
          f"{ceiling:.0f} tasks/min = {ceiling / results[1]['tasks_per_min']:.1f}x the 1-phone rate, with nothing else running")
    print(f"load average after: {os.getloadavg()[0]:.2f} (before {load_before[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
