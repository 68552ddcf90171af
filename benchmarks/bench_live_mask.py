"""The cost of masking a live frame (``mobile_agent.agent.mask.mask_live_frame``).

A private adb server and a simulated 1080x2400 phone, as the tests use. One live frame is
what ``GET /v1/tasks/{id}/live`` and the farm's relay take: ``AdbDeviceSource.screenshot(serial,
"jpeg")`` (capture, mask, downscale to 720, JPEG). Measured without a run's mask and with one
of three boxes (a password field, two secret lines), and the fill alone. For scale, what
reading the screen again for each frame would cost instead: the accessibility dump that finds
password fields (``password_boxes``).

Goal: a masked live frame costs at most 10% more than a plain one. The fill copies the frame
(the capture is read-only), but that copy is the one the JPEG encoder makes anyway (a
contiguous array from the RGBA buffer's RGB view), so the boxes themselves are what it adds.
Prints medians of one run.

Run: ``python benchmarks/bench_live_mask.py [--repeat N]`` or ``python -m benchmarks live_mask``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.rig import medians_ms, private_adb_server, served_phones  # noqa: E402
from mobile_agent.agent.mask import LiveMask, mask_live_frame, masking_live_frames, password_boxes  # noqa: E402
from mobile_agent.device import open_device  # noqa: E402
from mobile_agent.settings import AdbSettings, load_settings  # noqa: E402
from server.devices import AdbDeviceSource  # noqa: E402

BOXES = [(60, 900, 1020, 1040), (80, 1200, 700, 1260), (80, 1300, 900, 1360)]  # screen pixels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    with private_adb_server() as adb, served_phones(1, width=1080, height=2400) as ([serial], _):
        source = AdbDeviceSource(load_settings(overrides={"adb.server_port": adb.port}))
        device = open_device(AdbSettings(server_port=adb.port), serial=serial)
        pixels = device.screenshot().pixels
        mask = LiveMask()
        mask.set(BOXES)
        if mask_live_frame(serial, pixels) is not pixels:
            print("ERROR: a mask applies with no run on the phone")
            return 1

        def masked_frame() -> bytes:
            with masking_live_frames(serial, mask):
                return source.screenshot(serial, "jpeg")

        def fill() -> object:
            with masking_live_frames(serial, mask):
                return mask_live_frame(serial, pixels)

        with masking_live_frames(serial, mask):
            if not (mask_live_frame(serial, pixels)[900:1040, 60:1020] == 0).all():
                print("ERROR: the registered mask was not applied")
                return 1
        timed = medians_ms({  # round-robin: the shared machine's load drifts over all alike
            "frame": lambda: source.screenshot(serial, "jpeg"),
            "masked frame": masked_frame,
            "fill alone": fill,
            "dump": lambda: password_boxes(device),
        }, args.repeat)  # fmt: skip
        plain = timed["frame"]
        masked, filled, dump = timed["masked frame"], timed["fill alone"], timed["dump"]
        print(f"screen 1080x2400, {len(BOXES)} boxes; median of {args.repeat} runs")
        print(f"live frame, no run's mask        {plain:8.2f} ms")
        print(f"live frame, masked               {masked:8.2f} ms")
        print(f"the fill alone (copy + 3 boxes)  {filled:8.2f} ms  (the copy replaces the encoder's own)")
        print(f"a dump per frame instead         {dump:8.2f} ms  (password_boxes, the simulated phone)")
        ok = masked <= 1.1 * plain
        print(f"masked / plain {masked / plain:.2f}; goal (<= 1.10): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
