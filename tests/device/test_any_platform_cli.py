"""The command line pins a script's or a flow's phone by its app ids, as REST does
(``mobile_agent.apps.platforms.PinnedApps``, tests/service/test_any_platform_script.py):
``mobile-agent test --device any`` takes an iPhone for a flow that opens an iPhone's bundle id,
and ``mobile-agent run --script`` / ``mobile-agent test --serial`` refuse a phone of the other
platform with REST's words (its 422 ``unroutable`` / ``platforms_mixed``), exit 2, nothing run.
The simulated Android phone over the real adb server beside the simulated iPhone's WDA
(``front``), each command a `mobile-agent` subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobile_agent.device.ios import WdaClient
from simphone.ios import WdaFrontEnd
from tests.agent_helpers import cli, cli_env
from tests.usbmux_fake import USB_SERIAL, FakeUsbmuxd

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

IOS_FLOW = "name: iPhone settings\nsteps:\n  - do: Open App (com.apple.Preferences)\n"
ANDROID_FLOW = "name: Android settings\nsteps:\n  - do: Open App (com.android.settings)\n"


def _env(adb_server, front: WdaFrontEnd) -> dict[str, str]:
    # USB discovery off: a real iPhone plugged into the machine must not join the listed one
    return cli_env(adb_server.port, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-c": front.url}), MOBILE_AGENT_IOS__USB="false")


def test_device_any_takes_the_iphone_for_a_flow_opening_an_iphone_app(adb_server, sim_phone, front: WdaFrontEnd,
                                                                        tmp_path: Path) -> None:
    env = _env(adb_server, front)
    flow = tmp_path / "iphone.yaml"
    flow.write_text(IOS_FLOW, encoding="utf-8")
    proc = cli("test", str(flow), "--device", "any", "--output", str(tmp_path / "runs"), env=env, timeout=240)
    said = proc.stdout + proc.stderr
    # before: the first ready Android phone, where the bundle id opens nothing (exit 1)
    assert proc.returncode == 0, said[-3000:]
    assert "running 1 flow on ios:sim-c" in said
    assert WdaClient(front.url, timeout_s=20).active_app() == "com.apple.Preferences"
    assert sim_phone.phone.state()["foreground"] != "com.android.settings"


def test_device_any_takes_a_usb_iphone_for_a_flow_opening_an_iphone_app(adb_server, sim_phone, usb_iphone: FakeUsbmuxd,
                                                                         front: WdaFrontEnd, tmp_path: Path) -> None:
    """The same with the iPhone on a USB cable (usbmuxd: ``tests/usbmux_fake.py``), no ios.devices."""
    env = cli_env(adb_server.port, MOBILE_AGENT_IOS__USBMUXD=str(usb_iphone.path))
    flow = tmp_path / "iphone.yaml"
    flow.write_text(IOS_FLOW, encoding="utf-8")
    proc = cli("test", str(flow), "--device", "any", "--output", str(tmp_path / "runs"), env=env, timeout=240)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said[-3000:]
    assert f"running 1 flow on {USB_SERIAL}" in said
    assert WdaClient(front.url, timeout_s=20).active_app() == "com.apple.Preferences"


def test_a_phone_of_the_other_platform_is_refused_in_rests_words(adb_server, sim_phone, front: WdaFrontEnd,
                                                                 tmp_path: Path) -> None:
    env = _env(adb_server, front)
    before = WdaClient(front.url, timeout_s=20).active_app()
    script = tmp_path / "android.txt"
    script.write_text("Open App (com.android.settings)\nStop\n", encoding="utf-8")
    ran = cli("run", "--script", str(script), "--serial", "ios:sim-c", "--output", str(tmp_path / "run"), env=env)
    assert ran.returncode == 2, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert ran.stderr.strip().splitlines()[-1] == ("mobile-agent run: the script opens com.android.settings (an Android app): "
                                  "device 'ios:sim-c' is not an Android phone"), ran.stderr
    assert not (tmp_path / "run").exists()

    flow = tmp_path / "android.yaml"
    flow.write_text(ANDROID_FLOW, encoding="utf-8")
    tested = cli("test", str(flow), "--serial", "ios:sim-c", "--output", str(tmp_path / "test"), env=env)
    assert tested.returncode == 2, tested.stdout[-2000:] + tested.stderr[-2000:]
    assert tested.stderr.strip().splitlines()[-1] == ("mobile-agent test: the flow opens com.android.settings (an Android app): "
                                     "device 'ios:sim-c' is not an Android phone"), tested.stderr
    assert not (tmp_path / "test").exists()
    varied = tmp_path / "varied.yaml"  # the id in a variable: the flow's vars:, then --var, as the run fills them
    varied.write_text("name: by variable\nvars: {pkg: Settings}\nsteps:\n  - do: Open App ({{pkg}})\n", encoding="utf-8")
    by_var = cli("test", str(varied), "--serial", "ios:sim-c", "--var", "pkg=com.android.settings",
                 "--output", str(tmp_path / "by-var"), env=env)
    assert by_var.returncode == 2, by_var.stdout[-2000:] + by_var.stderr[-2000:]
    assert "the flow opens com.android.settings (an Android app): device 'ios:sim-c'" in by_var.stderr
    assert WdaClient(front.url, timeout_s=20).active_app() == before  # nothing was opened on the iPhone

    ios_script = tmp_path / "iphone.txt"
    ios_script.write_text("Open App (com.apple.Preferences)\n", encoding="utf-8")
    on_android = cli("run", "--script", str(ios_script), "--serial", sim_phone.serial, "--output", str(tmp_path / "a"),
                     env=env)
    assert on_android.returncode == 2, on_android.stderr[-2000:]
    assert (f"the script opens com.apple.Preferences (an iPhone app): device '{sim_phone.serial}' "
            "is not an iPhone") in on_android.stderr

    ios_flow = tmp_path / "iphone.yaml"
    ios_flow.write_text(IOS_FLOW, encoding="utf-8")
    no_iphone = cli("test", str(ios_flow), "--device", "any", "--output", str(tmp_path / "none"),
                    env=cli_env(adb_server.port, MOBILE_AGENT_IOS__USB="false"))  # only the Android phones
    assert no_iphone.returncode == 2, no_iphone.stdout[-2000:] + no_iphone.stderr[-2000:]
    assert no_iphone.stderr.strip().splitlines()[-1] == ("mobile-agent test: the flow opens com.apple.Preferences (an iPhone app): "
                                        "no phone of platform 'ios' is attached and ready"), no_iphone.stderr
    mixed = cli("test", str(flow), str(ios_flow), "--device", "any", "--output", str(tmp_path / "mixed"), env=env)
    assert mixed.returncode == 2, mixed.stderr[-2000:]
    assert mixed.stderr.strip().splitlines()[-1] == (
        "mobile-agent test: the flows open apps of several platforms: com.android.settings (an Android app), "
        "com.apple.Preferences (an iPhone app); a task runs on one phone"), mixed.stderr


def test_no_serial_and_an_iphone_script_takes_the_one_ready_iphone(adb_server, sim_phone, front: WdaFrontEnd,
                                                                   tmp_path: Path) -> None:
    """With no --serial, a run takes the only attached Android phone; a script that opens an
    iPhone's app by its id takes the one ready iPhone instead (before: the Android phone, refused
    or, with several attached, 'several devices')."""
    env = _env(adb_server, front)
    script = tmp_path / "iphone.txt"
    script.write_text("Open App (com.apple.Preferences)\nStop\n", encoding="utf-8")
    ran = cli("run", "--script", str(script), "--output", str(tmp_path / "run"), env=env, timeout=240)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert WdaClient(front.url, timeout_s=20).active_app() == "com.apple.Preferences"
    header = json.loads(next((tmp_path / "run").glob("*/trajectory.jsonl")).read_text(encoding="utf-8").splitlines()[0])
    assert "ios:sim-c" in json.dumps(header), header

    two = cli_env(adb_server.port, MOBILE_AGENT_IOS__DEVICES=json.dumps({"sim-c": front.url, "sim-d": front.url}))
    several = cli("run", "--script", str(script), "--output", str(tmp_path / "two"), env=two)
    assert several.returncode == 2, several.stdout[-2000:] + several.stderr[-2000:]
    assert "several iPhones are ready (ios:sim-c, ios:sim-d): choose one with --serial" in several.stderr
