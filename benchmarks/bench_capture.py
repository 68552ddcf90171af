"""Screenshot capture and tap round trip: this project's device layer vs adbutils.

A private adb server (the adbutils wheel's binary, its own port and HOME) and a
simulated 1080x2400 phone served over ADB on loopback, exactly as the tests do. Three
ways to get the screen as RGB pixels:

- ``ours``: ``Device.screenshot()`` (raw framebuffer, one connection, recv_into);
- ``adbutils``: ``AdbDevice.screenshot()`` (``screencap -p``) + ``np.asarray``;
- ``raw socket``: the same framebuffer bytes read from a plain socket, no decoding
  (the floor for any client).

Goals: ours >= 3x faster than adbutils, and within 2x of the raw socket. Also ``tap``
vs adbutils' ``click``. Prints medians and ratios of one run.

Run: ``python benchmarks/bench_capture.py [--repeat N]`` or ``python -m benchmarks capture``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.rig import medians_ms, open_service, private_adb_server, served_phones  # noqa: E402
from mobile_agent.device import open_device  # noqa: E402
from mobile_agent.settings import AdbSettings  # noqa: E402


def raw_socket_read(serial: str) -> int:
    """Read the whole ``exec:screencap`` stream from a plain socket into one preallocated
    buffer (the transport's floor: no protocol layer, no decoding); returns its size."""
    with open_service(serial, "exec:screencap") as sock:
        buf = bytearray(RAW_BUFFER_BYTES)
        view = memoryview(buf)
        got = 0
        while True:
            n = sock.recv_into(view[got:])
            if n == 0:
                return got
            got += n


RAW_BUFFER_BYTES = 16 + 1080 * 2400 * 4 + 1  # one spare byte so EOF is seen by recv_into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    with private_adb_server() as adb, served_phones(1, width=1080, height=2400) as ([serial], [phone]):
        device = open_device(AdbSettings(server_port=adb.port), serial=serial)
        theirs = adb.client.device(serial)

        ours_px = device.screenshot().pixels
        their_px = np.asarray(theirs.screenshot().convert("RGB"))
        if ours_px.shape != their_px.shape or not np.array_equal(ours_px, their_px):
            print("ERROR: the two capture paths disagree on the pixels")
            return 1
        print(f"screen {ours_px.shape[1]}x{ours_px.shape[0]}, "
              f"raw stream {raw_socket_read(serial) / 1e6:.1f} MB, "
              f"PNG {len(phone.screencap_png()) / 1e3:.0f} kB; median of {args.repeat} runs")  # fmt: skip

        capture = medians_ms(
            {
                "ours": lambda: device.screenshot(),
                "adbutils": lambda: np.asarray(theirs.screenshot().convert("RGB")),
                "raw": lambda: raw_socket_read(serial),
            },
            args.repeat,
        )
        ours, adbu, raw = capture["ours"], capture["adbutils"], capture["raw"]
        print(f"capture  ours (raw framebuffer -> RGB view)   {ours:8.2f} ms")
        print(f"capture  adbutils screenshot() + np.asarray   {adbu:8.2f} ms")
        print(f"capture  raw socket recv_into, no decode      {raw:8.2f} ms")
        speedup = adbu / ours
        overhead = ours / raw
        print(f"ratio    adbutils / ours   = {speedup:5.1f}x  (goal >= 3x: {'met' if speedup >= 3 else 'NOT met'})")
        print(f"ratio    ours / raw socket = {overhead:5.2f}x  (goal <= 2x: {'met' if overhead <= 2 else 'NOT met'})")

        taps = medians_ms({"ours": lambda: device.tap(540, 1200), "adbutils": lambda: theirs.click(540, 1200)}, args.repeat)
        tap_ours, tap_adbu = taps["ours"], taps["adbutils"]
        print(f"tap      ours Device.tap                       {tap_ours:8.2f} ms")
        print(f"tap      adbutils click                        {tap_adbu:8.2f} ms")
        print(f"ratio    adbutils click / ours tap = {tap_adbu / tap_ours:5.1f}x")
        return 0


if __name__ == "__main__":
    sys.exit(main())
