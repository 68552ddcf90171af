"""The adb binary and server: find it, start it when it is not running, list and
connect devices.

May import: adbutils, the standard library, ``mobile_agent.errors``/``settings`` and
the sibling modules of this package.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import adbutils

from mobile_agent.device.adb_protocol import AdbHost
from mobile_agent.device.validation import validate_address
from mobile_agent.errors import (
    AdbNotFoundError,
    AdbServerError,
    DeviceError,
)
from mobile_agent.ports import quiet_port
from mobile_agent.settings import AdbSettings

__all__ = [
    "NO_PERMISSIONS_HINT",
    "DeviceInfo",
    "adb_version",
    "connect",
    "ensure_server",
    "find_adb",
    "list_devices",
    "reconnect_remembered",
    "start_private_server",
]

log = logging.getLogger(__name__)

# `adb devices` lists a USB phone that the user may not open as "no permissions (REASON);
# see [URL]", REASON one of AOSP diagnose_usb.cpp's: "user in plugdev group; are your udev
# rules wrong?", "user NAME is not in the plugdev group", "verify udev rules".
NO_PERMISSIONS_HINT = (
    "this user may not open the phone's USB device: add a udev rule for it, e.g. "
    "`echo 'SUBSYSTEM==\"usb\", ATTR{idVendor}==\"18d1\", MODE=\"0660\", GROUP=\"plugdev\"' | "
    "sudo tee /etc/udev/rules.d/51-android.rules` with the vendor id from `lsusb`, or install "
    "Debian's `android-sdk-platform-tools-common` (its rules cover the known vendors); then "
    "`sudo udevadm control --reload-rules`, `sudo usermod -aG plugdev $USER`, log in again, "
    "replug the phone and `adb kill-server`"
)

# The adb server forgets every `adb connect` phone when it dies; these are the addresses
# this process connected, per server, to connect again after the server is restarted.
_connected: dict[tuple[str, int], set[str]] = {}
_connected_lock = threading.Lock()

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
_DEVICE_KEYS = ("product", "model", "device", "transport_id", "usb")
_KEY_RE = re.compile(r"\s(" + "|".join(_DEVICE_KEYS) + r"):(\S+)")


@dataclass(frozen=True)
class DeviceInfo:
    """One line of ``adb devices -l``. ``state``: device / offline / unauthorized / …"""

    serial: str
    state: str
    model: str | None = None
    product: str | None = None
    transport_id: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"serial": self.serial, "state": self.state, "model": self.model, "product": self.product}


def find_adb(settings: AdbSettings) -> Path:
    """The adb binary: ``settings.adb_path``, then ``PATH``, then the adbutils wheel's."""
    if settings.adb_path is not None:
        path = Path(settings.adb_path)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise AdbNotFoundError(
            f"adb_path {path} is not an executable file: fix `adb.adb_path` or unset it",
            adb_path=str(path),
        )
    found = shutil.which("adb")
    if found:
        return Path(found)
    try:
        bundled = Path(str(importlib.resources.files("adbutils.binaries") / "adb"))
    except (ModuleNotFoundError, TypeError):
        bundled = None
    if bundled is not None and bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    raise AdbNotFoundError(
        "no adb binary found: install Android platform-tools (`apt install adb`) or set adb.adb_path"
    )


def adb_version(settings: AdbSettings) -> str:
    """First line of ``adb version`` (e.g. ``Android Debug Bridge version 1.0.41``)."""
    adb = find_adb(settings)
    try:
        out = subprocess.run([str(adb), "version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AdbNotFoundError(f"{adb} does not run: {exc}", adb_path=str(adb)) from exc
    text = out.stdout.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else f"{adb} (unknown version)"


def ensure_server(settings: AdbSettings, *, timeout_s: float | None = None) -> AdbHost:
    """The adb server of ``settings``, started with the adb binary if it is not running; its
    calls (the version check here too) wait ``timeout_s`` for an answer (default
    ``adb.command_timeout_s``)."""
    host = AdbHost(settings.server_host, settings.server_port, timeout_s or settings.command_timeout_s)
    if host.reachable():
        _check_speaks_adb(host)
        return host
    if settings.server_host not in _LOCAL_HOSTS:
        raise AdbServerError(
            f"adb server at {settings.server_host}:{settings.server_port} is not answering: start it there "
            "(`adb start-server`) or fix adb.server_host/server_port",
            host=settings.server_host,
            port=settings.server_port,
        )
    _start_server(settings, host)
    reconnect_remembered(settings)
    return host


def _run_start_server(
    adb: str | Path, port: int, *, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``adb -P PORT start-server``, its output kept; ``AdbServerError`` when it does not run."""
    try:
        return subprocess.run(
            [str(adb), "-P", str(port), "start-server"],
            env=env,
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AdbServerError(f"`{adb} -P {port} start-server` failed: {exc}", port=port) from exc


def _start_server(settings: AdbSettings, host: AdbHost) -> None:
    proc = _run_start_server(find_adb(settings), settings.server_port, timeout=30)
    if not host.reachable():
        detail = _startup_failure((proc.stderr or b"") + (proc.stdout or b""))
        raise AdbServerError(
            f"adb server would not start on port {settings.server_port}: {detail or 'no output'} "
            "(is the port taken? try `adb kill-server`)",
            port=settings.server_port,
            exit_code=proc.returncode,
        )


_PORT_TAKEN = "address already in use"


def start_private_server(
    adb: str | Path, *, env: dict[str, str] | None = None, attempts: int = 3, avoid: tuple[int, ...] = ()
) -> int:
    """Start an adb server of one's own (``adb -P PORT start-server``) on a fresh loopback
    port and return the port: the quick start's, the smoke checks' and the benchmarks' way.

    The port is picked below the ephemeral range (``mobile_agent.ports.quiet_port``). Should it
    still be taken by the time the server binds it ("Address already in use"), another port is
    tried, ``attempts`` in all. Any other failure raises ``AdbServerError`` at once, with the
    telling lines of adb's output (its server log's fatal line)."""
    detail = ""
    tried: list[int] = []
    for _ in range(max(1, attempts)):
        port = quiet_port(avoid=(*avoid, *tried))
        tried.append(port)
        proc = _run_start_server(adb, port, timeout=60, env=env)
        output = (proc.stderr or b"") + (proc.stdout or b"")
        if proc.returncode == 0:
            if AdbHost("127.0.0.1", port, 5.0).reachable():
                return port
            # it said it started: whatever runs there is not an answering server; stop it
            subprocess.run([str(adb), "-P", str(port), "kill-server"], env=env, capture_output=True, timeout=30,
                           check=False, stdin=subprocess.DEVNULL)  # fmt: skip
            raise AdbServerError(f"adb start-server exited 0 but nothing answers on port {port}", port=port)
        detail = _startup_failure(output) or f"exit code {proc.returncode}, no output"
        if _PORT_TAKEN not in output.decode("utf-8", "replace").lower():
            raise AdbServerError(f"adb server would not start on port {port}: {detail}", port=port)
        log.info("adb server port %d was taken before the server bound it; trying another", port)
    raise AdbServerError(
        f"adb server would not start on ports {', '.join(map(str, tried))}: {detail}", port=tried[-1]
    )


def reconnect_remembered(settings: AdbSettings) -> list[str]:
    """``adb connect`` again the addresses of ``settings.connect`` and those this process
    connected to this server before (after a restart the server knows none of them).
    Returns the addresses connected; one that fails is logged, not raised."""
    with _connected_lock:
        addresses = set(settings.connect) | _connected.get((settings.server_host, settings.server_port), set())
    done = []
    for address in sorted(addresses):
        try:
            connect(address, settings, _ensure=False)
            done.append(address)
        except DeviceError as exc:
            log.warning("could not reconnect %s after the adb server restarted: %s", address, exc.message)
    return done


def _check_speaks_adb(host: AdbHost) -> None:
    """Something listens on the port: make sure it is an adb server, not another program."""
    try:
        host.server_version()
    except (DeviceError, ValueError) as exc:
        if isinstance(exc.__cause__, TimeoutError):  # it took the call and said nothing
            raise AdbServerError(
                f"the adb server at {host.host}:{host.port} accepts connections but did not answer within "
                f"{host.timeout_s:g} s: it is wedged or stopped (restart it: `adb kill-server`)",
                host=host.host,
                port=host.port,
            ) from exc
        raise AdbServerError(
            f"{host.host}:{host.port} accepts connections but is not an adb server "
            f"({exc.message if isinstance(exc, DeviceError) else exc}): pick another adb.server_port",
            host=host.host,
            port=host.port,
        ) from exc


def _startup_failure(output: bytes) -> str:
    """The telling lines of a failed ``adb start-server`` (fatal log lines, errors)."""
    lines = [ln.strip() for ln in output.decode("utf-8", "replace").splitlines() if ln.strip()]
    fatal = [ln.split(": ", 1)[-1] for ln in lines if " F adb " in ln]
    errors = [ln for ln in lines if ln.lower().startswith("error:")]
    picked = fatal + errors or lines[-1:]
    return "; ".join(picked)[:500]


def parse_devices_l(text: str) -> list[DeviceInfo]:
    """Parse the answer of ``host:devices-l``."""
    infos = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line.strip() or line.startswith("List of devices"):
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        serial, rest = parts
        match = _KEY_RE.search(" " + rest)
        state = (" " + rest)[: match.start()].strip() if match else rest.strip()
        keys = dict(_KEY_RE.findall(" " + rest))
        tid = keys.get("transport_id")
        infos.append(
            DeviceInfo(
                serial=serial,
                state=state,
                model=keys.get("model"),
                product=keys.get("product"),
                transport_id=int(tid) if tid and tid.isdigit() else None,
            )
        )
    return infos


def list_devices(settings: AdbSettings) -> list[DeviceInfo]:
    """Attached devices with state and model (``adb devices -l``). A silent adb server (wedged,
    or stopped) is given up on after ``adb.list_timeout_s``, not ``adb.command_timeout_s``."""
    host = ensure_server(settings, timeout_s=min(settings.list_timeout_s, settings.command_timeout_s))
    return parse_devices_l(host.query("host:devices-l"))


def _state_of(client: adbutils.AdbClient, serial: str) -> str | None:
    return next((info.state for info in client.list() if info.serial == serial), None)


def _forget(client: adbutils.AdbClient, address: str) -> None:
    """After a failed ``adb connect``, the adb server keeps listing the address as offline
    (and retries it) until told to disconnect: a target that never answered is not a device."""
    try:
        client.disconnect(address, raise_error=False)
    except adbutils.AdbError:
        pass


def connect(address: str, settings: AdbSettings, *, _ensure: bool = True) -> str:
    """``adb connect host:port``; returns the server's answer, raises when it failed
    (a phone that asks for authorization is connected: it shows as unauthorized).
    The address is remembered, to connect it again if the adb server restarts."""
    address = validate_address(address)
    if _ensure:
        ensure_server(settings)
    client = adbutils.AdbClient(settings.server_host, settings.server_port, socket_timeout=settings.command_timeout_s)
    try:
        answer: str = client.connect(address, timeout=settings.command_timeout_s)
        if answer.startswith("already connected") and _state_of(client, address) == "offline":
            # adb keeps an address it once knew listed as offline and answers "already
            # connected" for it: only a fresh connect says whether the phone is there.
            client.disconnect(address, raise_error=False)
            answer = client.connect(address, timeout=settings.command_timeout_s)
    except adbutils.AdbError as exc:
        _forget(client, address)
        raise DeviceError(f"adb connect {address} failed: {exc}", serial=address) from exc
    if "connected to" in answer and "unable" not in answer and "failed" not in answer or "authenticate" in answer:
        with _connected_lock:
            _connected.setdefault((settings.server_host, settings.server_port), set()).add(address)
    if "authenticate" in answer:
        # Connected, but the phone waits for its RSA prompt: it is listed as unauthorized,
        # which open_device reports with what to do.
        return answer.strip()
    if "connected to" not in answer or "unable" in answer or "failed" in answer:
        _forget(client, address)
        raise DeviceError(
            f"adb connect {address}: {answer.strip()} (is `adb tcpip` enabled on the phone and the port open?)",
            serial=address,
            answer=answer.strip(),
        )
    return answer.strip()
