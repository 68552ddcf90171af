"""What masking a typed secret adds to each planner frame (``mobile_agent.agent.mask.SecretMask``).

A private adb server and a simulated 1080x2400 phone with a secret typed into a note's title
(it shows on the screen). One planner frame is what a step does before the model call: the
capture over adb, the masking step, and the JPEG the planner sends (``encode_image``, 1024
px long side). Timed round-robin in one run:

- **no secret**: no secret configured, the masking step does nothing;
- **secret, cold**: a secret typed (``arm``): the frame is read by the masking step itself (OCR
  of a frame perception has not seen: a fresh per-frame cache each time) plus the phone's dump;
  this is the frame's own perception result, which the step's operations then find cached;
- **secret, warm**: the frame's OCR was made already (by the step that settled on it): the
  dump, the matching and the fill are what masking adds.

Prints median and p95 of each, the ratios to "no secret" (one run, one machine) and the load
average. No goal is enforced: the cold figure is an OCR moved before the model call, which a
plain step runs during it (``agent.prefetch_perception``).

Run: ``python benchmarks/bench_secret_mask.py [--repeat N]`` or ``python -m benchmarks secret_mask``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.rig import private_adb_server, samples_ms, served_phones  # noqa: E402
from mobile_agent.agent.mask import SecretMask  # noqa: E402
from mobile_agent.device import Device, open_device  # noqa: E402
from mobile_agent.locate import PerceptionLocator, build_locator, perception_config  # noqa: E402
from mobile_agent.planner.images import encode_image  # noqa: E402
from mobile_agent.settings import AdbSettings, PerceptionSettings  # noqa: E402
from perception import Perception  # noqa: E402

SECRET = "Quokka7731Zz"


def _tap(device: Device, element: dict[str, Any]) -> None:
    left, top, right, bottom = element["box"]
    device.tap((left + right) // 2, (top + bottom) // 2)


def _ground_truth(device: Device) -> list[dict[str, Any]]:
    return list(json.loads(device.run(["cmd", "simphone", "ground-truth"]).stdout))


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    with private_adb_server() as adb, served_phones(1, width=1080, height=2400) as ([serial], _):
        device = open_device(AdbSettings(server_port=adb.port), serial=serial)
        device.launch_app("com.google.android.keep")
        time.sleep(0.5)
        (plus,) = [e for e in _ground_truth(device) if "plus" in str(e.get("description", "")).lower()][:1]
        _tap(device, plus)
        time.sleep(0.5)
        device.type_text(SECRET)
        time.sleep(0.5)

        perception = PerceptionSettings(detector="proposals", ranker="heuristic")
        warm_locator = build_locator(perception)
        plain = SecretMask([], lambda: warm_locator)
        warm = SecretMask([SECRET], lambda: warm_locator)
        warm.arm(device, None, 1080)
        config = perception_config(perception)

        def step(mask: SecretMask) -> object:
            frame = device.screenshot()
            return encode_image(mask.masked(frame.pixels, device), 1024, 80)

        def cold() -> object:  # a perception that has not read this frame: the OCR is the masking step's
            locator = PerceptionLocator(Perception(config))
            mask = SecretMask([SECRET], lambda: locator)
            mask.arm(device, None, 1080)
            return step(mask)

        frame = device.screenshot()
        boxes = warm.boxes(frame.pixels, device)
        if not boxes:
            print("ERROR: the typed secret was not found on the screen")
            return 1
        samples = samples_ms({
            "no secret": lambda: step(plain),
            "secret, cold": cold,
            "secret, warm": lambda: step(warm),
        }, args.repeat)  # fmt: skip
        load = os.getloadavg()
        base = statistics.median(samples["no secret"])
        print(f"screen 1080x2400, a typed secret on screen ({len(boxes)} boxes); {args.repeat} frames each, round-robin")
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
        for name, times in samples.items():
            median, p95 = statistics.median(times), _p95(times)
            added = median - base
            print(f"{name:14s} median {median:8.1f} ms  p95 {p95:8.1f} ms  added {added:+8.1f} ms  ratio {median / base:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
