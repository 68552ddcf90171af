"""The pytest plugin (mobile_agent.testing.pytest_plugin), run with pytest's own pytester:
a user's test file with the ``phone`` / ``agent`` fixtures against the simulated phone
(``--phone SERIAL`` behind this session's adb server, ``--simphone`` as its own process);
a failure carries the screenshot and the report path in the terminal and in --junitxml."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.timeout(300)]

# the plugin by its module, whether or not the installed entry point already loaded it
PLUGIN = ("-p", "no:mobile_agent", "-p", "mobile_agent.testing.pytest_plugin")

USER_TESTS = '''
from pydantic import BaseModel


def test_settings_lists_wifi(phone):
    phone.device.launch_app("com.android.settings")
    phone.assert_visible("Wi-Fi")


def test_a_text_that_is_not_there(phone):
    phone.assert_visible("Teleportation options")


class Forecast(BaseModel):
    city: str


def test_extract_the_city(agent):
    agent.phone.device.launch_app("com.weather.Weather")
    assert agent.extract("the city", schema=Forecast).city == "Hangzhou"
'''


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=USER_TESTS)
    return pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning", *args)


def test_fixtures_and_failure_evidence_in_output_and_junit(pytester, adb_server, sim_phone, llm_server, tmp_path, monkeypatch):
    llm_server.script(['{"city": "Hangzhou"}'])
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    monkeypatch.setenv("MOBILE_AGENT_PLANNER__BASE_URL", llm_server.base_url)
    monkeypatch.setenv("MOBILE_AGENT_PLANNER__API_KEY", "test-key")
    monkeypatch.setenv("MOBILE_AGENT_PLANNER__MODEL", llm_server.model)
    junit = tmp_path / "junit.xml"
    out = tmp_path / "evidence-runs"
    result = _run(pytester, "--phone", sim_phone.serial, f"--junitxml={junit}", "--mobile-agent-output", str(out))
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "'Teleportation options' is not on the screen" in text
    section = text[text.index("mobile-agent"):]
    shot = Path(re.search(r"screenshot: (\S+\.png)", section).group(1))
    report = Path(re.search(r"report: (\S+report\.html)", section).group(1))
    assert shot.is_file() and report.is_file() and out in shot.parents
    assert "Teleportation options" in report.read_text()  # the report holds the failure
    import xmlschema

    xsd = Path(__file__).resolve().parents[1] / "fixtures" / "junit" / "junit-10.xsd"
    xmlschema.XMLSchema(str(xsd)).validate(str(junit))  # the evidence keeps pytest's XML valid for CI
    failure = ET.parse(junit).getroot().find(".//testcase[@name='test_a_text_that_is_not_there']/failure")
    assert failure is not None
    assert f"screenshot: {shot}" in failure.text and f"report: {report}" in failure.text
    assert len(llm_server.requests) == 1  # only the extraction asked the model


@pytest.mark.slow
def test_simphone_starts_a_simulated_phone_of_its_own(pytester, adb_server, monkeypatch):
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    pytester.makepyfile(test_sim='''
def test_home_screen(phone):
    assert phone.serial.startswith("127.0.0.1:")
    phone.device.key("home")
    phone.assert_visible("Play Store")
''')
    before = {info.serial for info in adb_server.client.list()}
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "--simphone")
    result.assert_outcomes(passed=1)
    assert {info.serial for info in adb_server.client.list()} == before  # its phone is disconnected after the session


def test_the_phone_fixture_holds_the_phone_and_a_busy_phone_fails_clearly(pytester, adb_server, sim_phone, monkeypatch):
    """One phone, one driver: while a test holds ``phone``, the phone's lease is taken (a REST
    task or ``mobile-agent run`` would be refused); a phone someone else holds fails the test
    at set-up naming the holder, and the lease is free again after the session."""
    from mobile_agent.device import PhoneLease, lease_holder
    from mobile_agent.settings import AdbSettings

    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    adb = AdbSettings(server_port=adb_server.port)
    seen = pytester.path / "holder.txt"
    pytester.makepyfile(test_lease=f'''
from mobile_agent.device import lease_holder
from mobile_agent.settings import AdbSettings


def test_holds_it(phone):
    holder = lease_holder(AdbSettings(server_port={adb_server.port}), phone.serial)
    open({str(seen)!r}, "w").write(str(holder))
''')
    args = (*PLUGIN, "-p", "no:cacheprovider", "--phone", sim_phone.serial)
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    assert "pytest test_lease.py::test_holds_it" in seen.read_text()  # held while the test ran
    assert lease_holder(adb, sim_phone.serial) is None  # and given back after it

    with PhoneLease(adb, sim_phone.serial, "REST task 7 (alice)"):
        result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    assert f"phone {sim_phone.serial} is busy: REST task 7 (alice) holds it" in text
    assert "Traceback" not in text
