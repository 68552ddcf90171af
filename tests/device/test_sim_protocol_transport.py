"""The ADB transport itself: framing, flow control, bad input, auth, several phones, loss."""

from __future__ import annotations

import socket
import struct
import threading

import adbutils
import pytest

from simphone.adb.protocol import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_VERSION_MIN,
    A_WRTE,
    HEADER,
    pack_header,
)

HOST_BANNER = b"host::features=shell_v2,cmd,stat_v2,ls_v2"


class RawHost:
    """A hand-written adb host end, to look at what the device sends byte by byte."""

    def __init__(self, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"", *, check: int = 0) -> None:
        self.sock.sendall(pack_header(command, arg0, arg1, len(data), check) + data)

    def recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            part = self.sock.recv(n - len(buf))
            if not part:
                raise ConnectionError("closed by the device")
            buf += part
        return bytes(buf)

    def recv(self) -> tuple[int, int, int, bytes, int]:
        command, arg0, arg1, length, check, magic = HEADER.unpack(self.recv_exact(HEADER.size))
        assert magic == command ^ 0xFFFFFFFF
        return command, arg0, arg1, self.recv_exact(length) if length else b"", check

    def handshake(self, maxdata: int = 1024 * 1024, version: int = A_VERSION) -> bytes:
        self.send(A_CNXN, version, maxdata, HOST_BANNER)
        command, arg0, _arg1, banner, _ = self.recv()
        assert command == A_CNXN and arg0 == version
        return banner

    def is_closed(self, timeout: float = 3.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw_host(sim_phone):
    hosts: list[RawHost] = []

    def make() -> RawHost:
        host = RawHost(sim_phone.server.endpoint(sim_phone.serial).port)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


def test_banner_carries_product_properties_and_features(raw_host, sim_phone):
    banner = raw_host().handshake().decode()
    assert banner.startswith("device::")
    assert not banner.endswith("\0")
    assert f"ro.product.model={sim_phone.phone.model};" in banner
    features = banner.rsplit("features=", 1)[1].split(",")
    assert {"shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir"} <= set(features)
    assert "sendrecv_v2" not in features and "delayed_ack" not in features


def test_output_is_chunked_to_the_hosts_maxdata_and_waits_for_okay(raw_host, sim_phone):
    host = raw_host()
    host.handshake(maxdata=4096)
    host.send(A_OPEN, 7, 0, b"exec:screencap\0")
    command, local_id, remote_id, _, _ = host.recv()
    assert (command, remote_id) == (A_OKAY, 7)

    command, arg0, arg1, first, _ = host.recv()
    assert (command, arg0, arg1, len(first)) == (A_WRTE, local_id, 7, 4096)
    # No OKAY yet: the device must not send more.
    host.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        host.sock.recv(1)
    host.sock.settimeout(5)

    received = bytearray(first)
    host.send(A_OKAY, 7, local_id)
    while True:
        command, arg0, arg1, data, _ = host.recv()
        if command == A_CLSE:
            assert (arg0, arg1) == (local_id, 7)
            break
        assert command == A_WRTE and len(data) <= 4096
        received += data
        host.send(A_OKAY, 7, local_id)
    assert bytes(received) == sim_phone.phone.screencap_raw()


def test_old_protocol_version_gets_checksums(raw_host):
    host = raw_host()
    host.handshake(version=A_VERSION_MIN)
    host.send(A_OPEN, 1, 0, b"shell:echo checksum\0", check=sum(b"shell:echo checksum\0"))
    assert host.recv()[0] == A_OKAY
    command, _, _, data, check = host.recv()
    assert (command, data) == (A_WRTE, b"checksum\n")
    assert check == sum(data)


def test_shell_v2_packets_and_exit_code(raw_host):
    host = raw_host()
    host.handshake()
    host.send(A_OPEN, 3, 0, b"shell,v2,raw:echo out; no-such-cmd; exit 5\0")
    _, local_id, _, _, _ = host.recv()
    stream = bytearray()
    while True:
        command, _, _, data, _ = host.recv()
        if command == A_CLSE:
            break
        stream += data
        host.send(A_OKAY, 3, local_id)
    packets = []
    while stream:
        kind, length = struct.unpack_from("<BI", stream)
        packets.append((kind, bytes(stream[5 : 5 + length])))
        del stream[: 5 + length]
    assert packets == [
        (1, b"out\n"),
        (2, b"/system/bin/sh: no-such-cmd: not found\n"),
        (3, b"\x05"),
    ]


def _read_stream(host: RawHost, host_id: int) -> bytes:
    command, local_id, remote_id, _, _ = host.recv()
    assert (command, remote_id) == (A_OKAY, host_id)
    out = bytearray()
    while True:
        command, _, _, data, _ = host.recv()
        if command == A_CLSE:
            return bytes(out)
        out += data
        host.send(A_OKAY, host_id, local_id)


def test_abb_exec_runs_cmd_with_nul_separated_arguments(raw_host, sim_phone):
    host = raw_host()
    host.handshake()
    host.send(A_OPEN, 4, 0, b"abb_exec:simphone\0ground-truth\0")
    expected = sim_phone.phone.run(["cmd", "simphone", "ground-truth"])
    assert expected.exit_code == 0
    assert _read_stream(host, 4) == expected.stdout + expected.stderr


def test_unknown_service_is_refused_with_clse(raw_host, sim_phone):
    host = raw_host()
    host.handshake()
    host.send(A_OPEN, 9, 0, b"jdwp:1234\0")
    assert host.recv()[:3] == (A_CLSE, 0, 9)
    host.send(A_OPEN, 10, 0, b"shell:echo next\0")  # the connection is still good
    assert host.recv()[0] == A_OKAY
    assert host.recv()[3] == b"next\n"


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00" * 24,  # bad magic
        pack_header(0x12345678, 0, 0, 0),  # unknown command, correct magic
        pack_header(A_WRTE, 1, 1, 16 * 1024 * 1024),  # oversized payload
    ],
    ids=["bad-magic", "unknown-command", "oversized"],
)
def test_malformed_message_closes_only_that_connection(raw_host, sim_phone, garbage):
    bystander = raw_host()
    bystander.handshake()
    victim = raw_host()
    victim.handshake()
    victim.sock.sendall(garbage)
    assert victim.is_closed()
    assert not bystander.is_closed(timeout=0.2)
    bystander.send(A_OPEN, 1, 0, b"shell:echo ok\0")
    assert bystander.recv()[0] == A_OKAY
    assert sim_phone.device.shell("echo via adb") == "via adb"


def test_open_before_the_handshake_closes_the_connection(raw_host):
    host = raw_host()
    host.send(A_OPEN, 1, 0, b"shell:id\0")
    assert host.is_closed()


def test_unauthorized_phone_shows_unauthorized_and_refuses_commands(sim_phones, adb_server):
    (phone,) = sim_phones(1, unauthorized=True)
    listing = adb_server.run("devices").stdout
    assert f"{phone.serial}\tunauthorized" in listing
    with pytest.raises(adbutils.AdbError):
        phone.device.shell("echo never")
    result = adb_server.run("-s", phone.serial, "shell", "echo never")
    assert result.returncode != 0
    assert "unauthorized" in result.stderr


def test_unauthorized_phone_keeps_asking_for_auth(sim_phones):
    (phone,) = sim_phones(1, unauthorized=True)
    host = RawHost(phone.server.endpoint(phone.serial).port)
    try:
        host.send(A_CNXN, A_VERSION, 1024 * 1024, HOST_BANNER)
        command, kind, _, token, _ = host.recv()
        assert (command, kind, len(token)) == (A_AUTH, 1, 20)
        host.send(A_AUTH, 2, 0, b"\x01" * 256)  # a signature: rejected, asked again
        command, kind, _, _, _ = host.recv()
        assert (command, kind) == (A_AUTH, 1)
        host.send(A_OPEN, 1, 0, b"shell:id\0")  # not online: dropped
        assert host.is_closed()
    finally:
        host.close()


def test_several_phones_at_once_are_independent(sim_phones):
    phones = sim_phones(3)
    assert len({p.serial for p in phones}) == 3
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            handle = phones[index]
            for _ in range(5):
                handle.device.shell(f"echo {index} > /sdcard/who.txt")
                assert handle.device.shell("echo $?") == "0"
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    for index, handle in enumerate(phones):
        assert handle.phone.fs.read_file("/sdcard/who.txt") == f"{index}\n".encode()
        assert handle.device.sync.read_bytes("/sdcard/who.txt") == f"{index}\n".encode()


def test_many_streams_on_one_phone_at_once(sim_phone):
    png = sim_phone.phone.screencap_png()
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for _ in range(3):
                if index % 2:
                    conn = sim_phone.device.shell("screencap -p", stream=True)
                    assert conn.read_until_close(encoding=None) == png
                else:
                    assert sim_phone.device.shell(f"echo {index}") == str(index)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []


def test_killed_phone_goes_offline_and_comes_back_after_reconnect(sim_phones, adb_server):
    first, second = sim_phones(2)
    first.kill()  # waits until the adb server shows it offline
    assert adb_server.state(first.serial) == "offline"
    with pytest.raises(adbutils.AdbError):
        first.device.shell("echo lost")
    assert second.device.shell("echo unaffected") == "unaffected"
    first.revive(reconnect=True)
    assert adb_server.state(first.serial) == "device"
    assert first.device.shell("echo back") == "back"


@pytest.mark.slow
def test_killed_phone_is_reconnected_by_the_adb_server_itself(sim_phones, adb_server):
    (phone,) = sim_phones(1)
    phone.kill()
    phone.revive(reconnect=False, timeout=30)  # the adb server retries on its own
    assert phone.device.shell("echo auto") == "auto"


def test_interactive_adb_shell_reads_commands_from_stdin(sim_phone, adb_server):
    result = adb_server.run(
        "-s", sim_phone.serial, "shell", input="echo one\necho two; false\nexit 4\necho never\n"
    )
    assert result.stdout == "one\ntwo\n"  # stdin is not a terminal: no prompt
    assert result.returncode == 4


def test_input_to_a_service_that_never_reads_it_does_not_pile_up(raw_host, sim_phone):
    host = raw_host()
    host.handshake(maxdata=4096)
    host.send(A_OPEN, 7, 0, b"exec:screencap\0")
    command, local_id, _, _, _ = host.recv()
    assert command == A_OKAY
    command, _, _, first, _ = host.recv()  # the first chunk; the device now waits for our OKAY
    assert command == A_WRTE
    for _ in range(64):  # 4 MiB the command never reads (its stdin), each write acknowledged
        host.send(A_WRTE, 7, local_id, b"x" * 65536)
        assert host.recv()[:3] == (A_OKAY, local_id, 7)
    ours = host.sock.getsockname()
    (connection,) = [
        c for c in sim_phone.server.endpoint(sim_phone.serial)._connections if c.writer.get_extra_info("peername") == ours
    ]
    stream = connection.streams[local_id]
    assert stream.inbox.qsize() == 0 and not stream.buffer
    received = bytearray(first)
    host.send(A_OKAY, 7, local_id)
    while True:  # and the output still arrives whole
        command, _, _, data, _ = host.recv()
        if command == A_CLSE:
            break
        received += data
        host.send(A_OKAY, 7, local_id)
    assert bytes(received) == sim_phone.phone.screencap_raw()
