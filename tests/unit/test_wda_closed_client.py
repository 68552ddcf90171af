"""A WDA client its owner closed while another thread still held the phone (the REST pool's
probe replaces and closes the phone a screenshot of the live view or of
``GET /v1/devices/{serial}/screenshot`` took a moment before): the call is a ``WdaError``, a
``DeviceError`` the routes answer with their typed error, not httpx's RuntimeError (a 500)."""

from __future__ import annotations

import pytest

from mobile_agent.device.ios.wda import WdaClient, WdaError
from mobile_agent.errors import DeviceError
from tests.ports import free_port


def test_a_call_on_a_closed_client_is_a_device_error() -> None:
    client = WdaClient(f"http://alice:pw@127.0.0.1:{free_port()}", timeout_s=5)
    client.close()
    with pytest.raises(WdaError) as closed:
        client.status()
    assert isinstance(closed.value, DeviceError) and closed.value.error == "unreachable"
    assert "was closed" in closed.value.message and "pw@" not in closed.value.message
