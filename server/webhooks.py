"""Task webhooks: a task's ``callback_url`` hears when the task waits for its person
(``waiting_for_user``) and when it ends (``task_finished``).

Each delivery is a JSON POST signed with HMAC-SHA256 over ``"{timestamp}.{body}"`` with
``server.webhook_secret`` (the scheme Stripe and GitHub use, so receivers know it):

    X-Mobile-Agent-Event: waiting_for_user
    X-Mobile-Agent-Delivery: 5f0c…  (the same on every attempt of one delivery; also in the body)
    X-Mobile-Agent-Timestamp: 1764000000
    X-Mobile-Agent-Signature: sha256=<hex digest>

``verify_signature`` is the receiver's side; it answers False for anything malformed, never
raises. A receiver drops a ``delivery_id`` it has seen (a replay, or a retry it already took).

A webhook can never be turned against the server's network (docs/security.md). The host is
resolved at delivery time and every address it resolves to must be public: loopback,
link-local, private, CGNAT (100.64/10), multicast, unspecified and reserved addresses, IPv4 and
IPv6 alike, and IPv6 forms that carry an IPv4 address (``::ffff:a.b.c.d``, 6to4, NAT64,
Teredo) are refused unless ``server.webhook_allow`` lists the network or the host name. The
connection goes to the address that was checked (the URL's name rides in the Host header and
TLS's SNI), so a DNS answer that changes between check and connect (rebinding) reaches nothing
new. No redirect is followed; at most ``MAX_RESPONSE_BYTES`` of a response are read (raw, not
decompressed); each attempt has one total deadline. A host given as an address (including
decimal, octal and hex IPv4 forms) is refused at submission (a 422, ``callback_refusal``); one
that resolves inside is refused at delivery, recorded on its task, and not tried again.

The address classes come from the standard ``ipaddress`` module (its ``is_private``,
``is_global``, ``ipv4_mapped``, ``sixtofour``, ``teredo`` follow IANA's special-purpose
registries), and the legacy IPv4 spellings from ``socket.inet_aton``: no extra dependency, and
nothing hand-written about which ranges are special.

A failed delivery (an error, a status other than 2xx) is tried again after
``webhook_backoff_s``, doubled each time, up to ``webhook_attempts`` tries, on a daemon thread:
a slow receiver never holds up a run. Without a secret nothing is sent (``create_task``
refuses a callback_url then).

May import: httpx, the standard library, ``mobile_agent`` (settings, redaction, ``inside_paths``).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import httpx

from mobile_agent.agent import Redactor, inside_paths
from mobile_agent.settings import Settings

__all__ = [
    "MAX_RESPONSE_BYTES",
    "AddressPolicy",
    "WebhookSender",
    "address_refusal",
    "callback_refusal",
    "literal_address",
    "sign",
    "verify_signature",
]

log = logging.getLogger(__name__)
_TIMEOUT_S = 10.0  # one attempt, all of it: resolve, connect, send, the response's head and its first bytes
MAX_RESPONSE_BYTES = 4096  # of a receiver's answer: nobody reads it, a huge one must cost nothing
_MAX_TIMESTAMP_DIGITS = 12

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# IETF protocol assignments: ``ipaddress`` of some Python versions calls parts of it global
# (192.0.0.8, the IPv4 dummy address); a webhook has no business there, so all of it is refused
_IETF_PROTOCOL = ipaddress.ip_network("192.0.0.0/24")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
Report = Callable[[int, str, dict[str, Any]], object]


def sign(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(secret: str, headers: Any, body: bytes, *, max_age_s: float = 300.0) -> bool:
    """True when ``headers`` carry a valid, fresh signature of ``body``; False for anything else
    (a missing or malformed header, a timestamp that is not plain ASCII digits, a stale one)."""
    try:
        timestamp = headers.get("X-Mobile-Agent-Timestamp") or ""
        signature = headers.get("X-Mobile-Agent-Signature") or ""
    except Exception:  # headers of any shape: a receiver passes what its framework gives it
        return False
    if not isinstance(timestamp, str) or not isinstance(signature, str) or not isinstance(body, bytes | bytearray):
        return False
    # str.isdigit() is true for "²" and "①", which int() refuses; and a 5,000-digit number is no time
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= _MAX_TIMESTAMP_DIGITS):
        return False
    if abs(time.time() - int(timestamp)) > max_age_s:
        return False
    expected = sign(secret, timestamp, bytes(body)).encode("ascii")
    return hmac.compare_digest(expected, signature.encode("utf-8", "replace"))


def _embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one carries, which a network may route to (mapped, 6to4,
    NAT64, Teredo's client and server)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found = [v4 for v4 in (address.ipv4_mapped, address.sixtofour) if v4 is not None]
    if address.teredo is not None:
        found += list(address.teredo)
    if address in _NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def address_refusal(address: IPAddress) -> str | None:
    """Why a webhook may not go to ``address`` (which class it is in), or None for a public one."""
    for inner in _embedded_ipv4(address):
        refusal = address_refusal(inner)
        if refusal is not None:
            return f"{refusal} (inside {address})"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a CGNAT (shared) address"
    if address.is_private or (isinstance(address, ipaddress.IPv4Address) and address in _IETF_PROTOCOL):
        return "a private address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global:
        return "not a public address"
    return None


def literal_address(host: str) -> IPAddress | None:
    """The address a URL's host spells, in any form a resolver takes as an address (``[::1]``,
    ``127.0.0.1``, ``2130706433``, ``0177.0.0.1``, ``0x7f.1``), else None (a name)."""
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    if not text or not all(c in "0123456789abcdefxABCDEFX." for c in text) or not text[0].isdigit():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


class AddressPolicy:
    """``server.webhook_allow``: networks ("10.0.0.0/8", "fd00::/8", "127.0.0.1") and host
    names ("hooks.internal") a webhook may reach although they are not public."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.hosts: set[str] = set()
        for entry in allow:
            try:
                self.networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                self.hosts.add(entry.strip().lower().rstrip("."))

    def refusal(self, host: str, address: IPAddress) -> str | None:
        if host.lower().rstrip(".") in self.hosts or any(address in network for network in self.networks):
            return None
        refusal = address_refusal(address)
        if refusal is None:
            return None
        return f"{host} is {refusal} ({address}); server.webhook_allow may list it"


def callback_refusal(url: str, allow: Iterable[str] = ()) -> str | None:
    """Why ``url`` cannot be a callback_url, seen from the URL alone (a host given as an
    address that is not public, no host, a port that is not a number); None otherwise. A
    name is checked again at each delivery, where it resolves."""
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port
    except ValueError as exc:
        return f"not a URL: {exc}"
    if parts.scheme not in ("http", "https") or not host:
        return "give an http(s) URL with a host"
    address = literal_address(host)
    if address is None:
        return None
    return AddressPolicy(allow).refusal(host, address)


# how long a stopping process (the service, a farm worker) waits for the webhooks under way, its
# interrupted runs' among them: their daemon threads end with it. A first retry (after the default
# 1 s backoff) fits; a receiver that is down does not hold a container's stop past docker's 10 s
# grace (the runs' own stop comes first)
STOP_WAIT_S = 5.0


class _Refused(Exception):
    """The receiver's host is not one a webhook may reach (not retried)."""


class WebhookSender:
    """Sends a task's webhooks (see the module docstring). ``report(task_id, kind, data)``
    records a refused delivery on its task (the store's ``add_event``)."""

    def __init__(self, settings: Settings, *, report: Report | None = None) -> None:
        server = settings.server
        self.secret = server.webhook_secret.get_secret_value() if server.webhook_secret is not None else ""
        self.attempts = server.webhook_attempts
        self.backoff_s = server.webhook_backoff_s
        self.policy = AddressPolicy(server.webhook_allow)
        self.redact = Redactor.from_settings(settings)
        self.report = report
        self.timeout_s = _TIMEOUT_S
        self.deliveries: list[threading.Thread] = []

    def send(self, url: str | None, event: str, payload: dict[str, Any]) -> threading.Thread | None:
        """Deliver ``payload`` in the background; the thread, or None when nothing is sent."""
        if not url or not self.secret:
            return None
        delivery = uuid.uuid4().hex
        body = json.dumps(self.redact({"event": event, "delivery_id": delivery, **payload}), ensure_ascii=False,
                          default=str).encode()
        task_id = payload.get("task_id")
        thread = threading.Thread(target=self._deliver, args=(url, event, body, delivery, task_id),
                                  name=f"webhook-{event}", daemon=True)
        thread.start()
        self.deliveries = [t for t in self.deliveries if t.is_alive()] + [thread]
        return thread

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the deliveries under way (a process about to exit, whose
        daemon threads would end with it); True when none is left."""
        deadline = time.monotonic() + timeout_s
        for thread in list(self.deliveries):
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self.deliveries)

    def _deliver(self, url: str, event: str, body: bytes, delivery: str, task_id: Any) -> None:
        delay = self.backoff_s
        shown = _receiver(url)
        for attempt in range(1, self.attempts + 1):
            timestamp = str(int(time.time()))
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "mobile-agent-webhook",
                "X-Mobile-Agent-Event": event,
                "X-Mobile-Agent-Delivery": delivery,
                "X-Mobile-Agent-Timestamp": timestamp,
                "X-Mobile-Agent-Signature": sign(self.secret, timestamp, body),
                "X-Mobile-Agent-Attempt": str(attempt),
            }
            try:
                status = self.post(url, body, headers)
                if 200 <= status < 300:
                    return
                problem = f"HTTP {status}"
            except _Refused as exc:
                log.warning("webhook %s not sent: %s", event, exc)
                if self.report is not None and isinstance(task_id, int):
                    self.report(task_id, "webhook_refused", {"event": event, "delivery_id": delivery,
                                                             "reason": str(exc)})
                return
            except (httpx.HTTPError, OSError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < self.attempts:
                log.info("webhook %s to %s failed (%s); trying again in %.1f s", event, shown, problem, delay)
                time.sleep(delay)
                delay *= 2
            else:
                log.warning("webhook %s to %s failed %d times, giving up: %s", event, shown, attempt, problem)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """One attempt: the status the receiver answered. Raises ``_Refused`` for a host that
        resolves to an address it may not reach, ``httpx.HTTPError`` / ``OSError`` otherwise."""
        deadline = time.monotonic() + self.timeout_s
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        address = self._checked_address(host, port)
        netloc = f"[{address}]" if address.version == 6 else str(address)
        target = parts._replace(netloc=f"{netloc}:{port}").geturl()
        default_port = port == (443 if parts.scheme == "https" else 80)
        headers = {**headers, "Host": host if default_port else f"{host}:{port}"}
        if ":" in host:
            headers["Host"] = f"[{host}]" if default_port else f"[{host}]:{port}"
        left = max(0.1, deadline - time.monotonic())
        with httpx.Client(timeout=httpx.Timeout(left), follow_redirects=False, trust_env=False) as client:
            request = client.build_request("POST", target, content=body, headers=headers,
                                           extensions={"sni_hostname": host})
            response = client.send(request, stream=True)
            try:
                read = 0
                for chunk in response.iter_raw(1024):  # raw: a compressed answer is never inflated
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES or time.monotonic() > deadline:
                        break
            finally:
                response.close()
            return response.status_code

    def _checked_address(self, host: str, port: int) -> IPAddress:
        """The first address ``host`` resolves to, when every one is allowed (a name with one
        address inside is refused whole: a resolver may hand out either)."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
        if not addresses:
            raise httpx.ConnectError(f"{host} resolves to no address")
        for address in addresses:
            refusal = self.policy.refusal(host, address)
            if refusal is not None:
                raise _Refused(refusal)
        return addresses[0]


def _receiver(url: str) -> str:
    """The receiver as the log names it: scheme, host and port. Its path, query and user:password
    stay out, where many receivers keep their secret (a Slack hook's last path part, ?token=)."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "a receiver whose URL does not parse"
    host = parts.hostname or ""
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{port}"


def task_finished(task_id: int, status: str, *, result: Any = None, error: Any = None) -> dict[str, Any]:
    """The payload of the ``task_finished`` webhook, the same whether the run ended or the
    task was cancelled before it ran. No path of the server leaves in it (``mobile_agent.agent.paths``)."""
    return {"task_id": task_id, "status": status, "result": inside_paths(result, None),
            "error": inside_paths(error, None),
            "links": {"task": f"/v1/tasks/{task_id}"}}
