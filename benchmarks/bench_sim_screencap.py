"""Screencap of an unchanged 1080x2400 screen through the real adb server; goal <= 30 ms.

Starts the adb binary from the adbutils wheel on a free port (own HOME/TMPDIR), serves one
``simphone.Phone`` with ``PhoneServer``, ``adb connect``s it (benchmarks/rig.py), then times N captures of each, round-robin:

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
import socket
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.rig import open_service, private_adb_server, samples_ms, served_phones  # noqa: E402

GOAL_MS = 30.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="captures per variant (default 20)")
    args = parser.parse_args()

    with private_adb_server() as adb, served_phones(1, width=1080, height=2400) as ([serial], [phone]):
        device = adb.client.device(serial)
        expected_raw = len(phone.screencap_raw())
        expected_png = len(phone.screencap_png())
        buffer = bytearray(expected_raw + 64)

        def raw() -> None:
            with open_service(serial, "exec:screencap") as sock:
                got = _read_all(sock, buffer)
            if got != expected_raw:
                raise RuntimeError(f"raw screencap returned {got} bytes, expected {expected_raw}")

        def png() -> None:
            with open_service(serial, "exec:screencap -p") as sock:
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
        variants = {"raw": raw, "png": png, "adbutils-png": adbutils_png}
        for label, samples in samples_ms(variants, args.n, warmup=1).items():
            median = statistics.median(samples)
            print(
                f"  {label:13s} median {median:7.2f} ms  (min {min(samples):6.2f}, max {max(samples):6.2f})"
                f"  ratio to goal {median / GOAL_MS:.2f}"
            )


if __name__ == "__main__":
    main()
