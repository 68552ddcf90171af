"""`mobile-agent run` as a user runs it: a subprocess, the simulated phone over the real adb
server, the scripted LLM server on loopback; exit codes, progress, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.agent_helpers import DONE, ROOT, plan_reply
from tests.agent_helpers import cli_env as _env
from tests.agent_helpers import run_cli as _cli
from tests.agent_helpers import trajectory_of as _trajectory
from tests.llm_fixtures import Reply

pytestmark = pytest.mark.timeout(180)


def _start(*args: str, env: dict[str, str]) -> subprocess.Popen:
    """`mobile-agent run` in the background, to be interrupted."""
    return subprocess.Popen(
        [sys.executable, "-m", "mobile_agent.cli", "run", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _final(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])


def test_script_mode_runs_and_exits_0(adb_server, sim_phone, tmp_path):
    script = tmp_path / "ops.txt"
    script.write_text("# go home, then back\nHome\n\nBack\nStop\n", encoding="utf-8")
    proc = _cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[step 1] Home" in proc.stdout and "[step 3] Stop" in proc.stdout
    assert "result: completed after 3 steps —" in proc.stdout
    path = _trajectory(proc.stdout)
    assert path.is_file() and _final(path)["status"] == "completed"
    assert re.search(r"^report: .+report\.html$", proc.stdout, re.M)



def test_one_step_is_one_step(adb_server, sim_phone, tmp_path):
    script = tmp_path / "stop.txt"
    script.write_text("Stop\n", encoding="utf-8")
    proc = _cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                env=_env(adb_server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "result: completed after 1 step —" in proc.stdout

def test_a_script_error_exits_2_with_the_list_of_operations(adb_server, sim_phone, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("Home\nFly to the moon (now)\n", encoding="utf-8")
    proc = _cli("--serial", sim_phone.serial, "--script", str(bad), env=_env(adb_server.port))
    assert proc.returncode == 2 and "script line 2: 'Fly to the moon (now)' is not an operation" in proc.stderr
    assert "Open App (App)" in proc.stderr and "Action:" not in proc.stderr  # the list, not the model's instructions
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("case", "said"), [
    ("neither", "--instruction"),
    ("no planner", "MOBILE_AGENT_PLANNER__BASE_URL"),
    ("missing script", "cannot read"),
    ("output is a file", "cannot create the trajectory folder"),
])
def test_usage_errors_exit_2(adb_server, sim_phone, tmp_path, capsys, monkeypatch, case, said):
    # in this process (`mobile-agent run` exits with what main() returns: the subprocess test above)
    from mobile_agent.cli import main

    for name in [k for k in os.environ if k.startswith("MOBILE_AGENT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    monkeypatch.chdir(ROOT)
    script = tmp_path / "home.txt"
    script.write_text("Home\n", encoding="utf-8")
    not_a_folder = tmp_path / "runs-file"
    not_a_folder.write_text("", encoding="utf-8")
    args = {"neither": [],
            "no planner": ["--instruction", "Turn on the dark mode"],
            "missing script": ["--script", str(tmp_path / "missing.txt")],
            "output is a file": ["--script", str(script), "-o", str(not_a_folder)]}[case]
    assert main(["run", "--serial", sim_phone.serial, *args]) == 2
    assert said in capsys.readouterr().err


def test_a_wrong_serial_is_a_usage_error_and_writes_nothing(adb_server, sim_phone, tmp_path):
    script = tmp_path / "home.txt"
    script.write_text("Home\n", encoding="utf-8")
    runs = tmp_path / "runs"
    proc = _cli("--serial", "no-such-phone", "--script", str(script), "-o", str(runs), env=_env(adb_server.port))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "'no-such-phone' is not attached" in proc.stderr and "Traceback" not in proc.stderr
    assert not runs.exists()  # a run that never opened its phone leaves no trajectory folder


def test_two_phones_and_no_serial_is_a_usage_error(adb_server, sim_phones, tmp_path):
    phones = sim_phones(2)
    script = tmp_path / "home.txt"
    script.write_text("Home\n", encoding="utf-8")
    runs = tmp_path / "runs"
    proc = _cli("--script", str(script), "-o", str(runs), env=_env(adb_server.port))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "choose one with --serial" in proc.stderr and all(p.serial in proc.stderr for p in phones)
    assert not runs.exists()


def test_mobile_agent_adb_runs_the_bundled_adb(adb_server, sim_phone, tmp_path):
    """The README's `mobile-agent adb -s SERIAL shell dumpsys simphone` (adb itself is not on
    the PATH of a pip install: it is inside the adbutils wheel)."""
    env = _env(adb_server.port)
    env["PATH"] = str(tmp_path)  # no adb on the PATH
    run = [sys.executable, "-m", "mobile_agent.cli", "adb"]
    state = subprocess.run([*run, "-s", sim_phone.serial, "shell", "dumpsys", "simphone"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert state.returncode == 0, state.stderr
    assert json.loads(state.stdout)["foreground"]
    where = subprocess.run([*run, "--path"], env=env, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0 and Path(where.stdout.strip()).name == "adb" and Path(where.stdout.strip()).is_file()
    missing = subprocess.run([*run, "-s", "no-such-phone", "shell", "true"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode != 0 and "no-such-phone" in missing.stderr  # adb's own answer and status


def test_planned_run_with_flags_exits_0_and_budget_exits_1(adb_server, sim_phone, llm_server, tmp_path):
    env = _env(adb_server.port)
    llm_server.script([plan_reply("Back"), plan_reply("Stop"), DONE])
    common = ["--serial", sim_phone.serial, "--base-url", llm_server.base_url, "--api-key", "k-123456",
              "--model", "scripted-vlm", "-o", str(tmp_path / "runs")]
    proc = _cli(*common, "--instruction", "Go back", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "thought:" in proc.stdout and "tokens:" in proc.stdout
    assert llm_server.chat_requests[0].json["model"] == "scripted-vlm"
    assert "k-123456" not in _trajectory(proc.stdout).read_text(encoding="utf-8")

    llm_server.script([], default=plan_reply("Home"))
    secret_env = dict(env, MOBILE_AGENT_AGENT__SECRETS='["opensesame"]')
    proc = _cli(*common, "--instruction", "Go home, the code is opensesame", "--max-steps", "2", "--json",
                env=secret_env)
    assert proc.returncode == 1
    assert "opensesame" not in proc.stdout + proc.stderr
    data = json.loads(proc.stdout)  # nothing but the JSON result on stdout
    assert data["instruction"] == "Go home, the code is [REDACTED]"
    assert data["status"] == "budget_exhausted" and data["steps"] == 2
    assert Path(data["report"]).is_file() and data["usage"]["calls"] == 2


def test_unreachable_planner_exits_3(adb_server, sim_phone, tmp_path):
    env = _env(adb_server.port, MOBILE_AGENT_PLANNER__MAX_RETRIES="0", MOBILE_AGENT_PLANNER__TIMEOUT_S="2")
    proc = _cli("--serial", sim_phone.serial, "--base-url", "http://127.0.0.1:9/v1", "--api-key", "x",
                "--instruction", "Go home", "-o", str(tmp_path), env=env)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "planner_unreachable" in proc.stderr


def _interrupt(proc, until_ready, *, signals: int = 1, gap_s: float = 0.5) -> tuple[str, str, float]:
    """Once ``until_ready()`` returns, send ``signals`` Ctrl-Cs ``gap_s`` apart; returns the rest
    of stdout, stderr and the seconds from the first Ctrl-C to the exit. Kills on failure."""
    try:
        until_ready()
        interrupted = time.monotonic()
        for n in range(signals):
            if n:
                time.sleep(gap_s)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        return out, err, time.monotonic() - interrupted
    finally:
        if proc.poll() is None:
            proc.kill()


def _wait_for(condition, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert condition()


def _after_step(proc, step: int, seen: list[str], then=None, pause_s: float = 0.5):
    """``until_ready`` for ``_interrupt``: read progress lines up to ``[step N]``, call ``then``."""

    def ready() -> None:
        for line in proc.stdout:
            seen.append(line)
            if line.startswith(f"[step {step}]"):
                break
        if then is not None:
            then()
        time.sleep(pause_s)

    return ready


def test_ctrl_c_stops_cleanly_writes_the_trajectory_and_exits_130(
    adb_server, sim_phone, llm_server, tmp_path
):
    llm_server.script([], default=Reply(text=plan_reply("Back"), delay_s=0.6))
    proc = _start("--serial", sim_phone.serial, "--base-url", llm_server.base_url, "--api-key", "k",
                  "--instruction", "Go back forever", "--max-steps", "50", "-o", str(tmp_path),
                  env=_env(adb_server.port))
    out, err, _ = _interrupt(proc, lambda: _wait_for(lambda: len(llm_server.chat_requests) >= 2))
    assert proc.returncode == 130, out + err
    assert "cancelling" in err and "result: cancelled" in out
    assert _final(_trajectory(out))["status"] == "cancelled"


def test_ctrl_c_while_the_model_thinks_exits_without_waiting_for_its_answer(
    adb_server, sim_phone, llm_server, tmp_path
):
    answer = threading.Event()  # the model answers only after the process has exited
    llm_server.script([], default=Reply(text=plan_reply("Back"), hold=answer))
    proc = _start("--serial", sim_phone.serial, "--base-url", llm_server.base_url, "--api-key", "k",
                  "--instruction", "Go back", "-o", str(tmp_path), env=_env(adb_server.port))
    try:  # neither the run nor the process may wait for the answer: it never comes while they run
        out, err, _ = _interrupt(proc, lambda: _wait_for(lambda: bool(llm_server.chat_requests)))
    finally:
        answer.set()
    assert proc.returncode == 130, out + err
    assert _final(_trajectory(out))["status"] == "cancelled"


def test_ctrl_c_during_a_wait_cancels_at_once(adb_server, sim_phone, tmp_path):
    script = tmp_path / "slow.txt"
    script.write_text("Home\nWait (10)\nStop\n", encoding="utf-8")
    proc = _start("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                  env=_env(adb_server.port))
    seen: list[str] = []
    out, err, _ = _interrupt(proc, _after_step(proc, 1, seen))  # step 2 is the 10 s Wait
    assert proc.returncode == 130, "".join(seen) + out + err
    path = _trajectory("".join(seen) + out)
    assert _final(path)["status"] == "cancelled"
    # the Wait itself was cut short by the cancel (a Wait that ran out would say "Waited 10 s"
    # and leave the cancel to the next step)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    wait_step = [x for x in lines if x["type"] == "step"][-1]
    assert wait_step["action_text"] == "Wait (10)" and wait_step["error"]["cause"] == "cancelled"
    assert "during a Wait" in wait_step["error"]["message"]


def test_second_ctrl_c_aborts_at_once_and_says_where_the_trajectory_is(
    adb_server, sim_phone, tmp_path, monkeypatch
):
    script = tmp_path / "slow.txt"
    script.write_text("Home\nBack\nStop\n", encoding="utf-8")
    proc = _start("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"),
                  env=_env(adb_server.port))
    normal = sim_phone.phone.screencap_raw
    release = threading.Event()

    def stuck() -> bytes:  # a phone that stops answering: no cancel event reaches a blocked read
        release.wait()  # until the process has exited: an abort that waited for it never comes
        return normal()

    def hang_the_phone() -> None:  # step 1 is done; the next capture hangs
        monkeypatch.setattr(sim_phone.phone, "screencap_raw", stuck)

    lines: list[str] = []
    # the first Ctrl-C cancels, but the run is blocked in a device read, so the second aborts
    try:
        out, err, _ = _interrupt(proc, _after_step(proc, 1, lines, then=hang_the_phone, pause_s=1.0), signals=2)
    finally:
        release.set()
    assert proc.returncode == 130, "".join(lines) + out + err
    assert "aborted" in err and "Traceback" not in err
    folder = Path(re.search(r"what it wrote so far is in (\S+)", err).group(1))
    records = [json.loads(x) for x in (folder / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()]
    assert records[0]["type"] == "run" and records[1]["type"] == "step" and records[1]["action_text"] == "Home"


def test_progress_names_the_trajectory_folder_absolute(tmp_path, monkeypatch):
    import io
    from types import SimpleNamespace

    from mobile_agent.cli.run import ProgressPrinter

    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    ProgressPrinter(out)(SimpleNamespace(kind="run_started", run_id="r1", step=None,
                                         data={"instruction": "x", "trajectory_dir": "runs/20260101-000000-r1"}))
    assert f"  trajectory: {tmp_path.resolve() / 'runs' / '20260101-000000-r1'}\n" in out.getvalue()

