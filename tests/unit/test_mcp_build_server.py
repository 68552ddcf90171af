"""``build_server(settings, service)``: the MCP server is built over a ``PhoneService`` its
caller owns and closes once the server has stopped (``mobile-agent mcp`` closes its own). Built
without one, it made a service that nobody closed (the phones its tools opened: an iPhone's WDA
connections, a USB iPhone's forward); now that is a call error, not a leak."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("mcp")

from mobile_agent.mcp_server.phone import PhoneService  # noqa: E402
from mobile_agent.mcp_server.tools import build_server  # noqa: E402
from mobile_agent.settings import load_settings  # noqa: E402


def test_the_mcp_server_is_built_over_the_service_its_caller_closes() -> None:
    settings = load_settings(overrides={})
    with pytest.raises(TypeError, match="service"):
        build_server(settings)  # before: a PhoneService of its own, never closed
    service = PhoneService(settings)
    try:
        server = build_server(settings, service)
        names = {tool.name for tool in anyio.run(server.list_tools)}
        assert {"list_devices", "screenshot", "open_app", "run_instruction"} <= names, names
    finally:
        service.close()
