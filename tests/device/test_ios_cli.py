"""iPhones in `mobile-agent devices` and `mobile-agent doctor` (issue 33): the iPhones of
``ios.devices`` (the simulated iPhone behind ``simphone.ios.WdaFrontEnd``, and a URL where no
WDA answers) beside the Android phones of the real adb server; and `doctor` where no adb
phone (no adb at all) is there, only iPhones."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli, cli_env
from tests.ports import free_port


def _dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def test_devices_lists_iphones_beside_android_phones(adb_server, sim_phone, front: WdaFrontEnd) -> None:
    env = cli_env(adb_server.port, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-1": front.url, "gone": _dead_url()}))
    table = cli("devices", env=env, timeout=120)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    header = lines[0]
    assert header.split() == ["PLATFORM", "SERIAL", "STATE", "MODEL", "SCREEN"]
    state_at, model_at = header.index("STATE"), header.index("MODEL")
    rows = {line.split()[1]: line for line in lines[1:] if len(line.split()) >= 4 and line.split()[0] in ("android", "ios")}
    assert rows[sim_phone.serial].split()[0] == "android"
    assert rows["ios:sim-1"].split()[0] == "ios"
    assert rows["ios:sim-1"][state_at:model_at].strip() == "ready"
    assert rows["ios:gone"][state_at:model_at].strip() == "not answering"
    assert any(line.startswith("ios:gone: ") and "did not answer" in line for line in lines), table.stdout

    listed = cli("devices", "--json", env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    by_serial = {row["serial"]: row for row in json.loads(listed.stdout)}
    assert by_serial[sim_phone.serial]["platform"] == "android" and by_serial[sim_phone.serial]["state"] == "device"
    sim = by_serial["ios:sim-1"]
    assert (sim["platform"], sim["state"], sim["url"], sim["model"], sim["os"]) == (
        "ios", "ready", front.url, "iphone", "iOS 17.0")
    gone = by_serial["ios:gone"]
    assert (gone["platform"], gone["state"]) == ("ios", "not answering") and "did not answer" in gone["problem"]


def _no_adb(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A machine with no adb at all: the adb binary named does not exist, no server on the port."""
    return cli_env(free_port(), MOBILE_AGENT_ADB__ADB_PATH=str(tmp_path / "no-adb"), **extra)


def test_devices_without_adb_lists_the_iphones(tmp_path: Path, front: WdaFrontEnd) -> None:
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-2": front.url}))
    listed = cli("devices", "--json", env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [(r["serial"], r["state"]) for r in json.loads(listed.stdout)] == [("ios:sim-2", "ready")]
    assert "no Android phones" in listed.stderr
    # with no iPhone configured, no adb is the error it always was
    alone = cli("devices", env=_no_adb(tmp_path), timeout=120)
    assert alone.returncode != 0 and "no-adb" in alone.stderr


def test_doctor_with_only_iphones_checks_their_wda(tmp_path: Path, front: WdaFrontEnd) -> None:
    env = _no_adb(tmp_path, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-3": front.url}))
    doctor = cli("doctor", "--json", env=env, timeout=180)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode == 0, checks
    assert "no device attached" not in doctor.stdout
    assert checks["adb server"]["status"] == "warn"  # no Android phone can be driven: not a failure with iPhones
    assert checks["ios:sim-3"]["status"] == "ok" and front.url in checks["ios:sim-3"]["detail"]
    assert not [c for c in checks.values() if c["status"] == "fail"]
    # (a WDA that does not answer is a failed check: tests/device/test_ios_simphone.py, ios_checks)


def test_doctor_with_no_phone_at_all_still_fails(tmp_path: Path) -> None:
    doctor = cli("doctor", "--json", env=_no_adb(tmp_path), timeout=180)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode == 1 and checks["adb server"]["status"] == "fail"


def test_doctor_with_an_adb_server_but_only_iphones(adb_server, tmp_path: Path, front: WdaFrontEnd) -> None:
    """adb installed, its server up (doctor starts it, as for any user), no Android phone: the
    iPhones are the phones, so no "no device attached" failure."""
    port = free_port()
    env = cli_env(port, MOBILE_AGENT_ADB__ADB_PATH=str(adb_server.adb_path),
                  MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-4": front.url}), HOME=str(tmp_path), TMPDIR=str(tmp_path))
    try:
        doctor = cli("doctor", "--json", env=env, timeout=180)
    finally:
        subprocess.run([str(adb_server.adb_path), "-P", str(port), "kill-server"], env=env, capture_output=True, timeout=30)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode == 0, checks
    assert checks["adb server"]["status"] == "ok"
    assert checks["devices"]["status"] == "ok" and "ios:sim-4" in checks["devices"]["detail"]
    assert checks["ios:sim-4"]["status"] == "ok"
