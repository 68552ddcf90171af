"""PhoneServer's own API: ports, bad arguments, adding phones while running."""

from __future__ import annotations

import pytest

from simphone import Phone
from simphone.adb.protocol import ProtocolError, device_banner, pack_header, parse_header
from simphone.server import PhoneServer


def test_bad_arguments_raise_typed_errors():
    with pytest.raises(ValueError, match="5555-5585"):
        PhoneServer(Phone(), port=5555)
    with pytest.raises(ValueError, match="port"):
        PhoneServer(Phone(), port=70000)
    with pytest.raises(ValueError, match="maxdata"):
        PhoneServer(Phone(), maxdata=16 * 1024 * 1024)
    with pytest.raises(TypeError, match="not a phone"):
        PhoneServer([object()])  # type: ignore[list-item]
    server = PhoneServer(Phone(), port=6200)
    with pytest.raises(ValueError, match="already used"):
        server.add_phone(Phone(), port=6200)
    with pytest.raises(KeyError):
        server.endpoint("127.0.0.1:1")


def test_consecutive_ports_and_emulator_ports_when_allowed():
    server = PhoneServer([Phone(), Phone()], port=6300)
    assert server.serials == ["127.0.0.1:6300", "127.0.0.1:6301"]
    allowed = PhoneServer(Phone(), port=5557, allow_emulator_ports=True)
    assert allowed.serials == ["127.0.0.1:5557"]


def test_phone_added_while_running_is_served(adb_server):
    with PhoneServer(Phone()) as server:
        endpoint = server.add_phone(Phone(width=720, height=1600))
        assert endpoint.listening and endpoint.port != 0
        adb_server.connect(endpoint.serial)
        try:
            size = adb_server.client.device(endpoint.serial).shell("wm size")
            assert "720x1600" in size
        finally:
            adb_server.disconnect(endpoint.serial)
    assert not endpoint.listening


def test_framing_helpers_reject_bad_input():
    with pytest.raises(ValueError):
        device_banner("name;with;semicolons", "model", "device")
    with pytest.raises(ProtocolError, match="magic"):
        parse_header(b"\0" * 24, max_payload=4096)
    with pytest.raises(ProtocolError, match="exceeds"):
        parse_header(pack_header(0x45545257, 1, 1, 8192), max_payload=4096)
    with pytest.raises(ProtocolError, match="short"):
        parse_header(b"CNXN", max_payload=4096)


def test_stopping_while_the_adb_server_is_connected_is_quiet(adb_server, caplog):
    server = PhoneServer(Phone(width=480, height=800)).start()
    serial = server.serials[0]
    try:
        adb_server.connect(serial)
        assert adb_server.client.device(serial).shell("echo up") == "up"
        with caplog.at_level("ERROR"):
            server.stop()  # the adb server still holds its connection
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
        adb_server.wait_state(serial, "offline")
    finally:
        adb_server.disconnect(serial)
        server.stop()
