"""Perception-only assertions (mobile_agent.testing.Phone) on a 1080x2400 screen: time per call.

A private adb server and a simulated 1080x2400 phone (benchmarks/rig.py) showing the
Settings app; no model endpoint is configured. Each call is timed whole, as a test pays
for it: the settle detector (at least two captures over ADB), OCR and matching. Cold: a
screen never seen (the per-frame cache cleared, the last frame's OCR not reused: the whole
screen is read every call); "OCR reused": the cache cleared with perception's default reuse
of an unchanged screen's lines; warm: the same frame again (cached). A failing assertion
also saves its screenshot and reads the screen's texts for its message.

Goal: median under 1 s per assertion, cold. Prints the medians and the load average.

Run: ``python benchmarks/bench_assertions.py [--repeat N]`` or ``python -m benchmarks assertions``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.rig import private_adb_server, samples_ms, served_phones  # noqa: E402
from mobile_agent.settings import AdbSettings, AgentSettings, PerceptionSettings, Settings  # noqa: E402

GOAL_MS = 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    from mobile_agent.testing import Phone, ScreenAssertionError

    with private_adb_server() as adb, served_phones(1, width=1080, height=2400) as ([serial], [sim]):
        out = Path(tempfile.mkdtemp(prefix="bench-assert-"))
        settings = Settings(
            adb=AdbSettings(server_port=adb.port, serial=serial),
            agent=AgentSettings(output_dir=out),
            perception=PerceptionSettings(detector="proposals", ranker="heuristic"),
        )
        assert not settings.planner.configured
        from mobile_agent.device import open_device
        from mobile_agent.locate import PerceptionLocator, build_locator, perception_config
        from perception import Perception

        device = open_device(settings.adb, serial)
        # cold: a screen never seen — the per-frame cache cleared and no reuse of the last
        # frame's OCR (perception's ocr_reuse_unchanged), so every call reads the whole screen
        fresh = PerceptionLocator(Perception(replace(perception_config(settings.perception), ocr_reuse_unchanged=False)))
        phone = Phone(settings, device, reader=fresh)
        usual = build_locator(settings)  # the default: an unchanged screen's OCR is reused
        again = Phone(settings, device, reader=usual)
        sim.run(["am", "start", "-n", "com.android.settings/.Settings"])

        def cold(call: Callable[[], object], locator: PerceptionLocator = fresh) -> Callable[[], None]:
            def run() -> None:
                locator.perception.cache.clear()
                call()

            return run

        def failing() -> None:
            try:
                phone.assert_visible("Teleportation options")
            except ScreenAssertionError:
                return
            raise AssertionError("the assertion should have failed")

        calls = {
            "assert_visible (cold)": cold(lambda: phone.assert_visible("Display & brightness")),
            "assert_not_visible (cold)": cold(lambda: phone.assert_not_visible("Teleportation options")),
            "assert_visible failing (cold)": cold(failing),
            "assert_icon (cold)": cold(lambda: phone.assert_icon("blue padlock")),
            "assert_visible (cache cleared, OCR reused)": cold(lambda: again.assert_visible("Display & brightness"), usual),
            "assert_visible (warm)": lambda: again.assert_visible("Display & brightness"),
        }
        times = samples_ms(calls, args.repeat, warmup=1)
    print(f"screen 1080x2400, {args.repeat} calls each, round-robin; perception: {fresh.describe_backends()}")
    worst = 0.0
    for name, values in times.items():
        median = statistics.median(values)
        if "(cold)" in name:
            worst = max(worst, median)
        print(f"  {name:44} median {median:7.1f} ms   min {min(values):7.1f}   max {max(values):7.1f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    verdict = "met" if worst < GOAL_MS else "MISSED"
    print(f"goal: every cold median under {GOAL_MS:.0f} ms: {verdict} (slowest {worst:.1f} ms)")
    return 0 if worst < GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
