"""What a new user does first, run from an installed mobile-agent (the wheel in a fresh venv,
or inside a container image), never from the source tree:

  version    `mobile-agent --version` prints the package's version
  doctor     `mobile-agent doctor` with a simulated phone attached (adb, the phone, perception)
  quickstart the README's `make demo` script (scripts/quickstart.py, copied next to this run):
             a simulated phone's dark mode turned on by the scripted run
  serve      `mobile-agent serve` on loopback, one scripted task through POST /v1/tasks
  mcp        `mobile-agent mcp` over stdio (the MCP SDK's client) lists its tools
  script     `mobile-agent run --script` against a phone already served on PHONE (host:port)
  rest       one scripted task through a service already running at API (a container, a farm)

Usage: python smoke.py [--scripts DIR] [--phone HOST:PORT] STEP...  (exit 0 when every step passed)
Only the standard library here, the installed mobile_agent's port and adb-server helpers, and
the MCP SDK for the mcp step (the [mcp] extra).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCRIPT = "Open App (Settings)\nClick text (Display & brightness)\nClick text (Dark mode)\nStop\n"
FINAL = {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}


def say(message: str) -> None:
    print(f"smoke: {message}", flush=True)


def tool(name: str) -> str:
    """The console script next to this interpreter (the venv's), else on PATH."""
    here = Path(sys.executable).with_name(name)
    if here.is_file():
        return str(here)
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"smoke: no {name} next to {sys.executable} or on PATH")
    return found


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any mobile-agent setting (no planner: scripted runs only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


def free_port(avoid: tuple[int, ...] = ()) -> int:
    """A port below the ephemeral range (mobile_agent.ports): a server binds it a moment later."""
    from mobile_agent.ports import quiet_port

    return quiet_port(avoid=avoid)


def wait_port(port: int, proc: subprocess.Popen[bytes] | None, what: str, timeout: float = 60,
              log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            said = log.read_text(errors="replace")[-3000:] if log else ""
            raise SystemExit(f"smoke: {what} exited early ({proc.returncode})\n{said}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"smoke: {what} did not listen on {port} within {timeout:.0f} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def adb_binary() -> str:
    found = shutil.which("adb")  # Debian's adb in the images
    if found:
        return found
    import adbutils  # the binary its wheel bundles

    return str(Path(adbutils.__file__).parent / "binaries" / "adb")


@contextmanager
def phone(work: Path) -> Iterator[tuple[int, str]]:
    """A private adb server and one simulated phone connected to it: (adb port, serial)."""
    from mobile_agent.device.server import start_private_server

    adb = adb_binary()
    home = work / "adb-home"
    home.mkdir(exist_ok=True)
    env = clean_env(HOME=str(home), TMPDIR=str(home))
    adb_port = start_private_server(adb, env=env)  # another port should the first be taken meanwhile
    phone_port = free_port(avoid=(adb_port,))
    log = (work / "simphone.log").open("ab")
    proc = subprocess.Popen([tool("simphone"), "serve", "--port", str(phone_port)], stdout=log, stderr=log, env=env)
    serial = f"127.0.0.1:{phone_port}"
    try:
        wait_port(phone_port, proc, "simphone serve")
        subprocess.run([adb, "-P", str(adb_port), "connect", serial], env=env, timeout=30, capture_output=True)
        deadline = time.monotonic() + 30
        while subprocess.run([adb, "-P", str(adb_port), "-s", serial, "get-state"], env=env,
                             capture_output=True, text=True).stdout.strip() != "device":
            if time.monotonic() > deadline:
                raise SystemExit(f"smoke: {serial} did not come online")
            time.sleep(0.3)
        yield adb_port, serial
    finally:
        stop(proc)
        subprocess.run([adb, "-P", str(adb_port), "kill-server"], env=env, capture_output=True, timeout=30)


def http(method: str, url: str, body: object | None = None, token: str | None = None) -> dict[str, object]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as reply:
        result: dict[str, object] = json.loads(reply.read())
        return result


def step_version(work: Path, args: argparse.Namespace) -> None:
    import mobile_agent

    out = subprocess.run([tool("mobile-agent"), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"mobile-agent {mobile_agent.__version__}", out
    say(f"version: {out} (imported from {Path(mobile_agent.__file__).parent})")


def step_doctor(work: Path, args: argparse.Namespace) -> None:
    with phone(work) as (adb_port, serial):
        done = subprocess.run([tool("mobile-agent"), "doctor"], capture_output=True, text=True, timeout=300,
                              env=clean_env(MOBILE_AGENT_ADB__SERVER_PORT=str(adb_port)), cwd=work)
    print(done.stdout + done.stderr)
    # no planner endpoint is configured here: that line may warn; adb, the phone and perception must not fail
    failed = [line for line in done.stdout.splitlines() if line.lstrip().startswith("fail")]
    assert done.returncode == 0 and not failed and serial in done.stdout, (done.returncode, failed)
    say("doctor: no check failed")


def step_quickstart(work: Path, args: argparse.Namespace) -> None:
    scripts = work / "quickstart"
    shutil.copytree(args.scripts, scripts, dirs_exist_ok=True)
    done = subprocess.run([sys.executable, str(scripts / "quickstart.py")], capture_output=True, text=True,
                          timeout=600, env=clean_env(), cwd=work)
    print(done.stdout + done.stderr)
    assert done.returncode == 0, done.returncode
    assert "(secure ui_night_mode, 2 = on): 2" in done.stdout, "the dark mode is not on"
    say("quickstart: completed, dark mode on")


def step_serve(work: Path, args: argparse.Namespace) -> None:
    port = free_port()
    with phone(work) as (adb_port, serial):
        log_path = work / "serve.log"
        log = log_path.open("ab")
        env = clean_env(MOBILE_AGENT_ADB__SERVER_PORT=str(adb_port))
        proc = subprocess.Popen([tool("mobile-agent"), "serve", "--port", str(port), "--runs-dir", str(work / "runs"),
                                 "--database-url", f"sqlite:///{work / 'tasks.sqlite3'}"],
                                stdout=log, stderr=log, env=env, cwd=work)
        try:
            wait_port(port, proc, "mobile-agent serve", timeout=180, log=log_path)
            base = f"http://127.0.0.1:{port}"
            assert http("GET", f"{base}/healthz") is not None
            task = run_task(base, None, {"device": serial})
            say(f"serve: task {task['id']} {task['status']} on {serial}")
        finally:
            stop(proc)


def run_task(base: str, token: str | None, where: dict[str, object], timeout: float = 180,
             script: str = SCRIPT) -> dict[str, object]:
    """POST a script (the dark mode's) as a task, poll it to its end; the task, completed."""
    task = http("POST", f"{base}/v1/tasks", {"instruction": script.splitlines()[-2], "script": script, **where}, token)
    deadline = time.monotonic() + timeout
    while (task := http("GET", f"{base}/v1/tasks/{task['id']}", token=token))["status"] not in FINAL:
        if time.monotonic() > deadline:
            raise SystemExit(f"smoke: task {task['id']} still {task['status']} after {timeout:.0f} s")
        time.sleep(0.3)
    assert task["status"] == "completed", task
    return task


def step_rest(work: Path, args: argparse.Namespace) -> None:
    """One scripted task through a service that something else runs (--api, --token, --device)."""
    where: dict[str, object] = {"device": args.device} if args.device else {}
    where |= {"host": args.host} if args.host else {}
    task = run_task(args.api, args.token, where)
    say(f"rest: task {task['id']} {task['status']} at {args.api} ({task.get('device') or where})")


def step_mcp(work: Path, args: argparse.Namespace) -> None:
    import asyncio

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def tools() -> list[str]:
        params = StdioServerParameters(command=tool("mobile-agent"), args=["mcp"], env=clean_env(), cwd=str(work))
        with (work / "mcp.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return sorted(t.name for t in (await session.list_tools()).tools)

    names = asyncio.run(tools())
    assert len(names) >= 3, names
    say(f"mcp: {len(names)} tools: {', '.join(names)}")


def step_script(work: Path, args: argparse.Namespace) -> None:
    """A scripted run against a phone that something else serves (the container tier's host)."""
    assert args.phone, "--phone HOST:PORT"
    adb_port = free_port()
    (work / "actions.txt").write_text(SCRIPT)
    env = clean_env(HOME=str(work), MOBILE_AGENT_ADB__SERVER_PORT=str(adb_port),
                    MOBILE_AGENT_ADB__CONNECT=json.dumps([args.phone]))
    try:
        done = subprocess.run([tool("mobile-agent"), "run", "--serial", args.phone, "--script", "actions.txt",
                               "--output", str(work / "runs")], capture_output=True, text=True, timeout=300,
                              env=env, cwd=work)
        print(done.stdout + done.stderr)
        assert done.returncode == 0, done.returncode
    finally:
        subprocess.run([adb_binary(), "-P", str(adb_port), "kill-server"], capture_output=True, timeout=30)
    say(f"script: completed on {args.phone}")


STEPS = {"version": step_version, "doctor": step_doctor, "quickstart": step_quickstart, "serve": step_serve,
         "mcp": step_mcp, "script": step_script, "rest": step_rest}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("steps", nargs="+", choices=sorted(STEPS))
    parser.add_argument("--scripts", type=Path, default=Path(__file__).resolve().parent.parent / "scripts",
                        help="the quick start's folder (scripts/ of the source tree)")
    parser.add_argument("--phone", help="host:port of a simulated phone served elsewhere (step script)")
    parser.add_argument("--api", help="step rest: the service's URL")
    parser.add_argument("--token", default=os.environ.get("SMOKE_API_TOKEN"), help="step rest: its API token")
    parser.add_argument("--device", help="step rest: the phone's serial")
    parser.add_argument("--host", help="step rest: the farm host to run on")
    args = parser.parse_args()
    if args.steps != ["rest"]:  # rest talks HTTP only: it runs from any Python
        import mobile_agent

        say(f"mobile_agent from {Path(mobile_agent.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="mobile-agent-smoke-") as tmp:
        for name in args.steps:
            started = time.monotonic()
            STEPS[name](Path(tmp), args)
            say(f"{name}: {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
