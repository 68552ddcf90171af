"""A WDA URL of ``ios.devices`` may carry a ``user:password@`` part (a WDA behind an
authenticating proxy: httpx sends it as Basic auth). The password never leaves the process:
the listing (``mobile-agent devices --json``, MCP ``list_devices``, the REST pool's logs), the
errors of an iPhone that does not answer and ``doctor``'s checks name the URL without it,
while the client still talks to the URL as configured."""

from __future__ import annotations

import pytest

from mobile_agent.device import list_iphones, open_phone
from mobile_agent.device.ios.wda import WdaClient, WdaError, shown_url
from mobile_agent.errors import DeviceError, DeviceOfflineError
from mobile_agent.settings import IosSettings, Settings
from tests.ports import free_port

SECRET = "s3cret-Pa55"


def _url() -> str:
    return f"http://alice:{SECRET}@127.0.0.1:{free_port()}"  # nothing listens: each ask fails at once


def test_shown_url_drops_the_credentials_query_and_fragment() -> None:
    # one function for WDA and the planner's endpoints (mobile_agent.urls; the planner's key may
    # be in the query: ?api-key=)
    assert shown_url(f"http://alice:{SECRET}@10.0.0.5:8100/wda") == "http://10.0.0.5:8100/wda"
    assert shown_url("https://bob@phone.example:443") == "https://phone.example:443"
    assert shown_url("http://127.0.0.1:8100") == "http://127.0.0.1:8100"
    assert shown_url(f"https://llm.example/v1?api-key={SECRET}#x") == "https://llm.example/v1"
    assert shown_url(f"http://u:{SECRET}@[::1]:8100") == "http://[::1]:8100"


def test_evals_iphone_shell_names_the_url_without_its_password() -> None:
    """eval's reset of a real iPhone (IphoneShell: WDA's terminate) and its state reads name
    the WDA they failed to reach, never its password (review3's finding)."""
    from eval.mobile_eval.environment import IphoneShell

    shell = IphoneShell(_url(), timeout_s=2)
    answer = shell.run(["dumpsys", "window"])
    assert answer.exit_code == 127 and SECRET not in answer.stderr.decode()
    with pytest.raises(DeviceError) as lost:
        shell.force_stop("com.apple.Preferences")
    assert "127.0.0.1" in str(lost.value) and SECRET not in str(lost.value)


def test_the_listing_and_the_errors_name_the_url_without_its_password() -> None:
    url = _url()
    settings = IosSettings(devices={"iphone-1": url}, usb=False)
    (listing,) = list_iphones(settings)
    assert not listing.ready and SECRET not in str(listing.to_dict())
    assert listing.to_dict()["url"] == shown_url(url)

    client = WdaClient(url, timeout_s=5)
    try:
        assert client.base_url == url  # the client still uses the credentials
        with pytest.raises(WdaError) as failed:
            client.status()
        assert SECRET not in failed.value.message and shown_url(url) in failed.value.message
    finally:
        client.close()

    with pytest.raises(DeviceOfflineError) as offline:
        open_phone(Settings(ios=settings), "ios:iphone-1")
    assert SECRET not in offline.value.message and "ios:iphone-1" in offline.value.message


def test_doctor_names_the_url_without_its_password() -> None:
    from mobile_agent.cli.doctor import ios_checks

    checks = ios_checks(Settings(ios=IosSettings(devices={"iphone-1": _url()}, usb=False)))
    assert [c.status for c in checks] == ["fail"]
    assert SECRET not in repr(checks) and "ios:iphone-1" in checks[0].name
