"""`mobile-agent eval mobile-eval` takes each phone's lease for the whole evaluation, as
`mobile-agent run` does (docs/security.md, "One phone, one run"; review8 #8): a phone that a REST
task, an MCP session or another run holds is refused (exit 3, naming the holder), never driven
and reset in the middle of that run. Before, the evaluation ran its tasks there (exit 0). The
real adb server and the simulated phone; the test holds the lease as a REST task would."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.device import PhoneLease
from mobile_agent.settings import AdbSettings
from tests.agent_helpers import cli, cli_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TASK = ("--script-reference", "--app", "Settings", "--level", "1", "--task", "settings-1")


def test_eval_refuses_a_phone_another_run_holds_and_leases_it_while_it_runs(adb_server, sim_phone,
                                                                           tmp_path: Path) -> None:
    env = cli_env(adb_server.port)
    adb = AdbSettings(server_port=adb_server.port)
    lease = PhoneLease(adb, sim_phone.serial, "REST task 7 of alice")
    lease.acquire()
    foreground = sim_phone.phone.state()["foreground"]
    try:
        held = cli("eval", "mobile-eval", "--device", sim_phone.serial, *TASK, "-o", str(tmp_path / "held"),
                   env=env, timeout=300)
    finally:
        lease.release()
    assert held.returncode == 3, (held.stdout, held.stderr)
    assert "busy" in held.stderr and "REST task 7 of alice" in held.stderr, held.stderr
    assert not (tmp_path / "held" / "results.jsonl").exists() or not (tmp_path / "held" / "results.jsonl").read_text()
    assert sim_phone.phone.state()["foreground"] == foreground  # nothing was run or reset on it

    free = cli("eval", "mobile-eval", "--device", sim_phone.serial, *TASK, "-o", str(tmp_path / "free"),
               env=env, timeout=500)
    assert free.returncode == 0, (free.stdout[-2000:], free.stderr[-2000:])
    after = PhoneLease(adb, sim_phone.serial, "the test again")  # released when the evaluation ended
    after.acquire()
    after.release()
