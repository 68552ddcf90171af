"""`mobile-agent devices` and `mobile-agent doctor` against the real adb server, the
simulated phones and the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import socket

import pytest

from mobile_agent.cli import main
from simphone import Phone
from simphone.server import PhoneServer
from tests.llm_server import ScriptedLLMServer


@pytest.fixture
def cli_env(adb_server, monkeypatch: pytest.MonkeyPatch):
    for key in ("MOBILE_AGENT_CONFIG", "MOBILE_AGENT_PLANNER__BASE_URL", "MOBILE_AGENT_PLANNER__API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    return monkeypatch


def test_devices_json(cli_env, sim_phone, capsys) -> None:
    assert main(["devices", "--json"]) == 0
    rows = {row["serial"]: row for row in json.loads(capsys.readouterr().out)}
    row = rows[sim_phone.serial]
    assert row["state"] == "device"
    assert row["screen"] == f"{sim_phone.phone.width}x{sim_phone.phone.height}"
    assert row["model"]


def test_devices_table_shows_unauthorized(cli_env, sim_phone, sim_phones, capsys) -> None:
    (locked,) = sim_phones(1, unauthorized=True)
    assert main(["devices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["PLATFORM", "SERIAL", "STATE", "MODEL", "SCREEN"]
    by_serial = {line.split()[1]: line.split() for line in lines[1:]}
    assert by_serial[locked.serial][:3] == ["android", locked.serial, "unauthorized"]
    assert by_serial[sim_phone.serial][:3] == ["android", sim_phone.serial, "device"]


def test_devices_connect(cli_env, adb_server, capsys) -> None:
    server = PhoneServer(Phone(width=720, height=1600)).start()
    serial = server.serials[0]
    try:
        assert main(["devices", "--json", "--connect", serial]) == 0
        rows = {row["serial"]: row for row in json.loads(capsys.readouterr().out)}
        assert rows[serial]["state"] in ("device", "offline")  # the handshake may still be on its way
        adb_server.wait_state(serial, "device")
        assert main(["devices", "--json"]) == 0
        rows = {row["serial"]: row for row in json.loads(capsys.readouterr().out)}
        assert rows[serial]["screen"] == "720x1600"
    finally:
        adb_server.disconnect(serial)
        server.stop()


def test_devices_connect_bad_address(cli_env, capsys) -> None:
    assert main(["devices", "--connect", "not an address"]) == 3
    assert "invalid address" in capsys.readouterr().err


def test_doctor_all_good(cli_env, sim_phone, sim_phones, capsys) -> None:
    (with_keyboard,) = sim_phones(1, adb_keyboard=True)
    with ScriptedLLMServer() as llm:
        cli_env.setenv("MOBILE_AGENT_PLANNER__BASE_URL", llm.base_url)
        cli_env.setenv("MOBILE_AGENT_PLANNER__API_KEY", "sk-test")
        cli_env.setenv("MOBILE_AGENT_PLANNER__MODEL", llm.model)
        code = main(["doctor", "--json"])
        assert any(r.path.endswith("/models") and r.authorization == "Bearer sk-test" for r in llm.requests)
    checks = json.loads(capsys.readouterr().out)
    by_name = {c["name"]: c for c in checks}
    assert code == 0, checks
    assert by_name["adb"]["status"] == "ok" and "version" in by_name["adb"]["detail"].lower()
    assert by_name["adb server"]["status"] == "ok"
    assert by_name[f"device {sim_phone.serial}"]["status"] == "ok"
    assert by_name[f"{sim_phone.serial} screen"]["detail"] == "1080x2400"
    assert by_name[f"{sim_phone.serial} ADB Keyboard"]["status"] == "warn"
    assert "senzhk/ADBKeyBoard" in by_name[f"{sim_phone.serial} ADB Keyboard"]["fix"]
    assert by_name[f"{with_keyboard.serial} ADB Keyboard"]["status"] == "ok"
    assert by_name["planner"]["status"] == "ok"
    assert by_name["perception"]["status"] == "ok", by_name["perception"]
    assert "ocr=rapidocr" in by_name["perception"]["detail"] and "OCR reads a drawn 'doctor'" in by_name["perception"]["detail"]
    assert "not loaded yet" not in by_name["perception"]["detail"]  # described after the OCR probe loaded it
    assert "adb.serial" not in by_name  # none configured


def test_doctor_fails_when_the_configured_serial_is_not_attached(cli_env, sim_phone, capsys) -> None:
    cli_env.setenv("MOBILE_AGENT_ADB__SERIAL", "R58M123ABC")
    assert main(["doctor", "--json"]) == 1
    check = {c["name"]: c for c in json.loads(capsys.readouterr().out)}["adb.serial"]
    assert check["status"] == "fail"
    assert "'R58M123ABC' is not attached" in check["detail"] and sim_phone.serial in check["detail"]
    assert "MOBILE_AGENT_ADB__SERIAL" in check["fix"]


def test_doctor_reports_failures_with_fixes(cli_env, sim_phones, capsys) -> None:
    (locked,) = sim_phones(1, unauthorized=True)
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    cli_env.setenv("MOBILE_AGENT_PLANNER__BASE_URL", f"http://127.0.0.1:{dead}/v1")
    code = main(["doctor", "--planner-timeout", "2"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"[fail] device {locked.serial}: unauthorized" in out
    assert "RSA prompt" in out
    assert "[fail] planner" in out


def test_doctor_without_endpoint_skips_planner(cli_env, sim_phone, capsys) -> None:
    main(["doctor"])
    out = capsys.readouterr().out
    assert "[warn] planner: no endpoint configured (skipped)" in out


def test_doctor_says_when_the_ocr_backend_cannot_load(cli_env, sim_phone, capsys) -> None:
    cli_env.setenv("MOBILE_AGENT_PERCEPTION__OCR_BACKEND", "paddleocr")  # no PP-OCR model folders configured
    assert main(["doctor", "--json"]) == 1
    by_name = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert by_name["perception"]["status"] == "fail"
    assert "paddle_det_dir" in by_name["perception"]["fix"]


def test_doctor_warns_when_the_endpoint_does_not_serve_the_model(cli_env, sim_phone, capsys) -> None:
    with ScriptedLLMServer() as llm:
        cli_env.setenv("MOBILE_AGENT_PLANNER__BASE_URL", llm.base_url)
        cli_env.setenv("MOBILE_AGENT_PLANNER__MODEL", "no-such-model")
        main(["doctor", "--json"])
    planner = {c["name"]: c for c in json.loads(capsys.readouterr().out)}["planner"]
    assert planner["status"] == "warn"
    assert "no-such-model" in planner["detail"] and llm.model in planner["detail"]
