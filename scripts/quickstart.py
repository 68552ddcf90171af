"""The quick start (`make demo`): the agent turns on the dark mode of a simulated phone.

1. starts a private adb server (the adb binary bundled in the adbutils wheel) on a free
   port, with its own HOME so that nothing of the user's adb setup is touched;
2. starts a simulated phone as a separate process (`simphone serve --port P`) and
   `adb connect`s it — the agent knows nothing of the simulator: it sees a phone over ADB;
3. runs `mobile-agent run --serial 127.0.0.1:P --instruction "Turn on the dark mode"`:
   with the planner when MOBILE_AGENT_PLANNER__BASE_URL (and a key) are set, otherwise
   in scripted mode with scripts/demo_dark_mode.txt (no LLM), and says how to configure one;
4. prints where the trajectory and its replay report are, then stops everything.

Exit code: the `mobile-agent run` exit code (0 = completed), or 3 when setup failed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INSTRUCTION = "Turn on the dark mode"
DEMO_SCRIPT = HERE / "demo_dark_mode.txt"


def bundled_adb() -> str:
    import adbutils

    path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if path.is_file():
        return str(path)
    found = shutil.which("adb")
    if found:
        return found
    raise SystemExit("no adb binary: reinstall adbutils (its wheel bundles one) or install Android platform-tools")


def console_script(name: str) -> list[str]:
    """The venv's console script next to this Python, else `python -m`."""
    candidate = Path(sys.executable).with_name(name)
    if candidate.is_file():
        return [str(candidate)]
    module = {"simphone": "simphone", "mobile-agent": "mobile_agent.cli"}[name]
    return [sys.executable, "-m", module]


def planner_settings():  # -> mobile_agent.settings.PlannerSettings
    """The planner as `mobile-agent run` will see it: environment and config file
    (MOBILE_AGENT_CONFIG) both count."""
    from mobile_agent.errors import ConfigError
    from mobile_agent.settings import load_settings

    try:
        return load_settings().planner
    except ConfigError as exc:
        raise SystemExit(f"the settings are invalid: {exc.message}") from exc


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the simulated phone exited early (code {proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the simulated phone did not listen on port {port} within {timeout:.0f} s")


def main() -> int:
    from mobile_agent.device.server import start_private_server
    from mobile_agent.errors import AdbServerError
    from mobile_agent.ports import quiet_port

    adb = bundled_adb()
    home = Path(tempfile.mkdtemp(prefix="mobile-agent-demo-"))
    adb_env = dict(os.environ, HOME=str(home), TMPDIR=str(home))
    adb_port = 0
    phone = None
    try:
        print(f"* starting a private adb server ({adb})")
        try:
            adb_port = start_private_server(adb, env=adb_env)
        except AdbServerError as exc:
            print(f"setup failed: {exc.message}", file=sys.stderr)
            return 3
        adb_env["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
        print(f"  on port {adb_port}")
        phone_port = quiet_port(avoid=(adb_port,))
        serial = f"127.0.0.1:{phone_port}"

        print(f"* starting a simulated phone on port {phone_port} (simphone serve)")
        phone = subprocess.Popen(
            [*console_script("simphone"), "serve", "--port", str(phone_port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        wait_for_port(phone_port, phone)
        out = subprocess.run(
            [adb, "-P", str(adb_port), "connect", serial], env=adb_env, capture_output=True, text=True, timeout=30
        )
        print(f"* adb connect {serial}: {out.stdout.strip() or out.stderr.strip()}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            state = subprocess.run(
                [adb, "-P", str(adb_port), "-s", serial, "get-state"], env=adb_env, capture_output=True, text=True
            ).stdout.strip()
            if state == "device":
                break
            time.sleep(0.3)
        else:
            raise SystemExit(f"{serial} did not come online")

        run_env = dict(os.environ, MOBILE_AGENT_ADB__SERVER_PORT=str(adb_port))
        command = [*console_script("mobile-agent"), "run", "--serial", serial, "--instruction", INSTRUCTION]
        planner = planner_settings()
        if planner.configured:
            print(f"* running the agent with the planner at {planner.base_url or 'OpenAI'} (model {planner.model})")
        else:
            print(
                "* no planner endpoint configured: running the bundled script instead of an LLM\n"
                "  (to let a model plan, set MOBILE_AGENT_PLANNER__BASE_URL and MOBILE_AGENT_PLANNER__API_KEY,\n"
                "   e.g. https://api.openai.com/v1 and your key, or a local http://localhost:11434/v1)"
            )
            command += ["--script", str(DEMO_SCRIPT)]
        print("$ mobile-agent " + shlex.join(command[command.index("run"):]))
        code = subprocess.run(command, env=run_env, cwd=os.getcwd()).returncode

        night = subprocess.run(
            [adb, "-P", str(adb_port), "-s", serial, "shell", "settings", "get", "secure", "ui_night_mode"],
            env=adb_env,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        print(f"* the phone's dark mode setting (secure ui_night_mode, 2 = on): {night or 'unknown'}")
        print("* open the report.html printed above in a browser to replay the run step by step")
        return code
    finally:
        if phone is not None and phone.poll() is None:
            phone.terminate()
            try:
                phone.wait(10)
            except subprocess.TimeoutExpired:
                phone.kill()
        if adb_port:
            subprocess.run([adb, "-P", str(adb_port), "kill-server"], env=adb_env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit as stop:
        if isinstance(stop.code, str):  # a set-up step's reason: said, and exit code 3
            print(f"setup failed: {stop.code}", file=sys.stderr)
            sys.exit(3)
        raise
