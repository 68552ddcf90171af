"""`mobile-agent test --device any` takes a ready phone that no other run holds: with the first
ready phone leased (a REST task, an MCP session, `mobile-agent run` on it), the flows run on
another free one instead of stopping at the busy one (one phone, one run: docs/security.md)."""

from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path

from mobile_agent.cli import main
from mobile_agent.device import PhoneLease, list_devices
from mobile_agent.settings import AdbSettings

FLOW = Path(__file__).resolve().parents[1] / "flows" / "green" / "home-screen.yaml"


def test_device_any_skips_a_phone_another_run_holds(adb_server, sim_phones, tmp_path, capsys, monkeypatch) -> None:
    sim_phones(2)
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    adb = AdbSettings(server_port=adb_server.port)
    ready = [d.serial for d in list_devices(adb) if d.state == "device"]
    assert len(ready) >= 2, ready
    with PhoneLease(adb, ready[0], "REST task 7 of alice"):  # the first ready phone, as --device any lists them
        code = main(["test", str(FLOW), "--device", "any", "--output", str(tmp_path / "runs")])
        captured = capsys.readouterr()
    said = captured.out + captured.err
    assert code == 0, said
    (serial,) = re.findall(r"running 1 flow on (\S+)", said)
    assert serial != ready[0] and serial in ready, said

    with ExitStack() as held:  # every ready phone held: a clear refusal, nothing run
        for serial in ready:
            held.enter_context(PhoneLease(adb, serial, "REST task 8 of bob"))
        code = main(["test", str(FLOW), "--device", "any", "--output", str(tmp_path / "busy")])
    assert code == 3 and "busy" in capsys.readouterr().err
    assert not (tmp_path / "busy").exists()
