"""Screencap of an unchanged 1080x2400 screen through the real adb server; goal <= 30 ms.

Starts the adb binary from the adbutils wheel on a free port (own HOME/TMPDIR), serves one
``simphone.Phone`` with ``PhoneServer``, ``adb connect``s it, then times N captures:

* ``raw``  - ``exec:screencap`` (header + RGBA, ~10 MB) read by a plain socket client of
  the adb server into a preallocated buffer (the fast path a device layer should use);
* ``png``  - ``exec:screencap -p`` the same way;
* ``adbutils-png`` - ``AdbDevice.shell("screencap -p", encoding=None)`` for reference (its
  client adds ~20 ms of its own per call).

Prints the median of each and the ratio to the goal (ratio <= 1.0 meets it).

    .venv/bin/python benchmarks/bench_sim_screencap.py [-n 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

GOAL_MS = 30.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _adb_request(port: int, serial: str, service: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    for request in (f"host:transport:{serial}", service):
        data = request.encode()
        sock.sendall(b"%04x" % len(data) + data)
        status = sock.recv(4, socket.MSG_WAITALL)
        if status != b"OKAY":
            raise RuntimeError(f"adb server refused {request!r}: {status!r}")
    return sock


def _read_all(sock: socket.socket, buffer: bytearray) -> int:
    view = memoryview(buffer)
    filled = 0
    while True:
        if filled == len(buffer):
            buffer.extend(bytes(len(buffer)))
            view = memoryview(buffer)
        got = sock.recv_into(view[filled:])
        if not got:
            return filled
        filled += got


def _time(fn, n: int) -> list[float]:
    fn()  # warm-up: render and cache
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="captures per variant (default 20)")
    args = parser.parse_args()

    adb_port = _free_port()
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
    import adbutils

    from simphone import Phone
    from simphone.server import PhoneServer

    adb = str(Path(adbutils.__file__).parent / "binaries" / "adb")
    home = tempfile.mkdtemp(prefix="bench-adb-")
    env = dict(os.environ, HOME=home, TMPDIR=home)
    subprocess.run([adb, "-P", str(adb_port), "start-server"], env=env, check=True, capture_output=True)
    phone = Phone(width=1080, height=2400)
    server = PhoneServer(phone).start()
    serial = server.serials[0]
    try:
        client = adbutils.AdbClient(host="127.0.0.1", port=adb_port)
        client.connect(serial, timeout=15)
        deadline = time.monotonic() + 15
        while not any(d.serial == serial and d.state == "device" for d in client.list()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{serial} did not come online")
            time.sleep(0.05)
        device = client.device(serial)
        expected_raw = len(phone.screencap_raw())
        expected_png = len(phone.screencap_png())
        buffer = bytearray(expected_raw + 64)

        def raw() -> None:
            with _adb_request(adb_port, serial, "exec:screencap") as sock:
                got = _read_all(sock, buffer)
            if got != expected_raw:
                raise RuntimeError(f"raw screencap returned {got} bytes, expected {expected_raw}")

        def png() -> None:
            with _adb_request(adb_port, serial, "exec:screencap -p") as sock:
                got = _read_all(sock, buffer)
            if got != expected_png:
                raise RuntimeError(f"png screencap returned {got} bytes, expected {expected_png}")

        def adbutils_png() -> None:
            data = device.shell("screencap -p", encoding=None)
            if len(data) != expected_png:
                raise RuntimeError(f"adbutils screencap returned {len(data)} bytes")

        raw()
        if bytes(buffer[:expected_raw]) != phone.screencap_raw():
            raise RuntimeError("raw screencap bytes differ from the phone's frame")
        png()
        if bytes(buffer[:expected_png]) != phone.screencap_png():
            raise RuntimeError("png screencap bytes differ from the phone's PNG")

        print(f"screencap of an unchanged 1080x2400 screen via the adb server, median of {args.n}")
        print(
            f"  raw frame {expected_raw / 1e6:.1f} MB, png {expected_png / 1e3:.0f} kB; goal {GOAL_MS:.0f} ms"
        )
        for label, fn in (("raw", raw), ("png", png), ("adbutils-png", adbutils_png)):
            samples = _time(fn, args.n)
            median = statistics.median(samples)
            print(
                f"  {label:13s} median {median:7.2f} ms  (min {min(samples):6.2f}, max {max(samples):6.2f})"
                f"  ratio to goal {median / GOAL_MS:.2f}"
            )
    finally:
        server.stop()
        subprocess.run([adb, "-P", str(adb_port), "kill-server"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
