"""Webhooks that cannot be turned against the network (server.webhooks, docs/security.md).

Property tests over generated addresses (every refused class, in every spelling a resolver
takes), a property test that ``verify_signature`` answers False and never raises for anything
malformed, and the service on real uvicorn: a loopback receiver is never hit unless
``server.webhook_allow`` lists it (refused at submission for a literal host, at delivery,
recorded on the task, for a name), every delivery carries its id, and a receiver answering
300 MB costs the sender almost nothing.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_agent.settings import load_settings
from server.webhooks import (
    WebhookSender,
    address_refusal,
    callback_refusal,
    literal_address,
    sign,
    verify_signature,
)

SECRET = "webhook-secret-for-ssrf-tests"

REFUSED_V4 = ["127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
              "224.0.0.0/4", "0.0.0.0/8", "240.0.0.0/4", "198.18.0.0/15", "192.0.0.0/24"]
REFUSED_V6 = ["::1/128", "fe80::/10", "fc00::/7", "ff00::/8", "::/128"]


def _v4_spellings(address: ipaddress.IPv4Address) -> list[str]:
    """The ways a URL may spell an IPv4 address that a resolver (inet_aton) takes."""
    octets = address.packed
    return [
        str(address),
        str(int(address)),  # decimal: 2130706433
        ".".join(f"0{b:o}" for b in octets),  # octal: 0177.0.0.01
        hex(int(address)),  # 0x7f000001
        f"{octets[0]}.{int.from_bytes(octets[1:], 'big')}",  # 127.1 style
    ]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(REFUSED_V4).flatmap(lambda net: st.ip_addresses(network=net)))
def test_every_inside_ipv4_address_is_refused_in_every_spelling(address: ipaddress.IPv4Address) -> None:
    assert address_refusal(address) is not None
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(address) << 80))
    nat64 = ipaddress.IPv6Address(f"64:ff9b::{address}")
    for carrier in (mapped, six_to_four, nat64):
        assert address_refusal(carrier) is not None, carrier
    for spelling in _v4_spellings(address):
        assert literal_address(spelling) == address, spelling
        assert callback_refusal(f"http://{spelling}:8080/hook") is not None, spelling
    assert callback_refusal(f"http://[{mapped}]/hook") is not None


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(REFUSED_V6).flatmap(lambda net: st.ip_addresses(network=net)))
def test_every_inside_ipv6_address_is_refused(address: ipaddress.IPv6Address) -> None:
    assert address_refusal(address) is not None
    assert callback_refusal(f"https://[{address}]:443/x") is not None


@settings(max_examples=300, deadline=None)
@given(st.ip_addresses(v=4))
def test_a_public_ipv4_address_passes_and_an_allowed_network_opens_its_addresses(address: ipaddress.IPv4Address) -> None:
    inside = any(address in ipaddress.ip_network(net) for net in REFUSED_V4)
    if not inside and address.is_global:
        assert address_refusal(address) is None
        assert callback_refusal(f"http://{address}/hook") is None
    assert callback_refusal(f"http://{address}/hook", allow=[f"{address}/32"]) is None


def test_the_named_classes_and_what_they_are_called() -> None:
    cases = {
        "127.0.0.1": "loopback", "169.254.169.254": "link-local", "10.1.2.3": "private", "192.168.1.1": "private",
        "100.64.0.1": "CGNAT", "224.0.0.1": "multicast", "0.0.0.0": "unspecified", "::": "unspecified",
        "::ffff:127.0.0.1": "loopback", "2002:7f00:1::": "loopback", "fe80::1": "link-local", "ff02::1": "multicast",
        "2001:0:4136:e378:8000:63bf:80ff:fffe": "loopback",  # Teredo: the client 127.0.0.1 (obfuscated)
    }
    for text, word in cases.items():
        refusal = address_refusal(ipaddress.ip_address(text))
        assert refusal is not None and word in refusal, (text, refusal)
    assert address_refusal(ipaddress.ip_address("8.8.8.8")) is None
    assert literal_address("hooks.example.com") is None and literal_address("0x7f.1") == ipaddress.ip_address("127.0.0.1")
    assert callback_refusal("http://localhost:5432/") is None  # a name: checked where it resolves, at delivery


_TEXT = st.one_of(st.text(max_size=40), st.text(alphabet="0123456789²①٣", max_size=20),
                  st.integers(min_value=0, max_value=10**40).map(str), st.just("9" * 5000))
_HEADERS = st.one_of(
    st.none(), st.integers(), st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.sampled_from(["X-Mobile-Agent-Timestamp", "X-Mobile-Agent-Signature", "x"]),
                    st.one_of(_TEXT, st.none(), st.integers(), st.binary(max_size=10)), max_size=3),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_HEADERS, st.one_of(st.binary(max_size=50), st.text(max_size=5), st.none()))
def test_verify_signature_answers_false_for_anything_malformed_and_never_raises(headers: Any, body: Any) -> None:
    assert verify_signature(SECRET, headers, body) is False


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=290))
def test_verify_signature_takes_a_fresh_signature_and_nothing_else(body: bytes, age: int) -> None:
    timestamp = str(int(time.time()) - age)
    good = {"X-Mobile-Agent-Timestamp": timestamp, "X-Mobile-Agent-Signature": sign(SECRET, timestamp, body)}
    assert verify_signature(SECRET, good, body)
    assert not verify_signature(SECRET, good, body + b"x")
    assert not verify_signature("another secret", good, body)
    stale = str(int(time.time()) - 1000)
    assert not verify_signature(SECRET, {**good, "X-Mobile-Agent-Timestamp": stale}, body)


class Receiver:
    """A loopback HTTP receiver that records what reaches it."""

    def __init__(self) -> None:
        self.hits: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.hits.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_loopback_receiver_is_never_hit_unless_allowed(service, sim_phones, tmp_path: Path) -> None:
    receiver = Receiver()
    try:
        (phone,) = sim_phones(1, width=540, height=1200)
        live = service([phone], **{"server.webhook_secret": SECRET, "server.webhook_backoff_s": 0.05})
        for host in ("127.0.0.1", "2130706433", "0x7f.1", "[::ffff:127.0.0.1]", "169.254.169.254", "10.0.0.7"):
            refused = live.client.post("/v1/tasks", json={"script": "Wait (0.1)",
                                                           "callback_url": f"http://{host}:{receiver.port}/hook"})
            assert refused.status_code == 422, (host, refused.text)
            assert refused.json()["detail"][0]["type"] == "callback_not_allowed"
        # a name that resolves inside: accepted, refused at delivery, said on the task, not retried
        task = live.submit("by name", script="Wait (0.1)", callback_url=f"http://localhost:{receiver.port}/hook")
        live.wait_task(task["id"])
        _wait_for(lambda: live.state.store.last_event(task["id"], "webhook_refused") is not None)
        refusal = live.state.store.last_event(task["id"], "webhook_refused")
        assert refusal is not None and "loopback" in refusal.data["reason"]
        time.sleep(0.3)  # a retry would come after the 0.05 s backoff
        assert receiver.hits == []
        live.stop()

        allowed = service([phone], **{"server.webhook_secret": SECRET, "server.webhook_allow": ["127.0.0.1/32"]})
        task = allowed.submit("allowed", script="Wait (0.1)", callback_url=f"http://127.0.0.1:{receiver.port}/hook")
        allowed.wait_task(task["id"])
        _wait_for(lambda: len(receiver.hits) == 1)
        headers, body = receiver.hits[0]
        assert verify_signature(SECRET, headers, body)
        assert json.loads(body)["delivery_id"] == headers["X-Mobile-Agent-Delivery"] and len(headers["X-Mobile-Agent-Delivery"]) == 32
    finally:
        receiver.close()


def _huge_receiver(size: int) -> tuple[socket.socket, threading.Thread, list[int]]:
    """A receiver that answers every request with ``size`` bytes of body (streamed as it is
    written, never held), counting what it managed to send."""
    listener = socket.create_server(("127.0.0.1", 0))
    sent: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    def answer(conn: socket.socket) -> None:
        total = 0
        try:
            conn.recv(65536)
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nContent-Type: text/plain\r\n\r\n".encode())
            chunk = b"x" * 65536
            while total < size:
                conn.sendall(chunk)
                total += len(chunk)
        except OSError:
            pass
        finally:
            sent.append(total)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread, sent


def _rss_peak_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc/self/clear_refs")
def test_three_receivers_answering_300_mb_each_cost_the_sender_under_20_mb(tmp_path: Path) -> None:
    listener, _, sent = _huge_receiver(300 * 1024 * 1024)
    try:
        settings = load_settings(overrides={"server.webhook_secret": SECRET, "server.webhook_attempts": 1,
                                            "server.webhook_allow": ["127.0.0.1"],
                                            "agent.output_dir": str(tmp_path)})
        sender = WebhookSender(settings)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from now
        before = _rss_peak_kb()
        threads = [sender.send(url, "task_finished", {"task_id": i, "status": "completed"}) for i in range(3)]
        for thread in threads:
            assert thread is not None
            thread.join(30)
            assert not thread.is_alive()
        grown_mb = (_rss_peak_kb() - before) / 1024
        _wait_for(lambda: len(sent) == 3)
        assert grown_mb < 20, f"the sender's peak memory grew {grown_mb:.1f} MB"
        assert max(sent) < 300 * 1024 * 1024  # the sender hung up: it did not read it all
    finally:
        listener.close()


def test_an_allowed_name_is_reached_at_the_address_checked_with_the_name_in_the_host_header(tmp_path: Path) -> None:
    receiver = Receiver()
    try:
        settings = load_settings(overrides={"server.webhook_secret": SECRET, "server.webhook_allow": ["localhost"],
                                            "agent.output_dir": str(tmp_path)})
        sender = WebhookSender(settings)
        thread = sender.send(f"http://localhost:{receiver.port}/hook", "task_finished", {"task_id": 1})
        assert thread is not None
        thread.join(30)
        (headers, body), = receiver.hits
        assert headers["Host"] == f"localhost:{receiver.port}"  # the name rides along; 127.0.0.1 was dialled
        assert verify_signature(SECRET, headers, body)
        # the same name without the allowance: refused where it resolves, never sent
        refused: list[tuple[int, str, dict[str, Any]]] = []
        strict = WebhookSender(load_settings(overrides={"server.webhook_secret": SECRET,
                                                        "agent.output_dir": str(tmp_path)}),
                               report=lambda task_id, kind, data: refused.append((task_id, kind, data)))
        again = strict.send(f"http://localhost:{receiver.port}/hook", "task_finished", {"task_id": 2})
        assert again is not None
        again.join(30)
        assert len(receiver.hits) == 1 and refused and refused[0][:2] == (2, "webhook_refused")
    finally:
        receiver.close()
