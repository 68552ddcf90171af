"""Perception-only assertions (mobile_agent.testing.Phone) on a 1080x2400 screen: time per call.

A private adb server and a simulated 1080x2400 phone (benchmarks/rig.py) showing the
Settings app; no model endpoint is configured. Each call is timed whole, as a test pays
for it: the settle detector (at least two captures over ADB), OCR and matching. Cold:
the perception cache is cleared before every call (what a test sees on a new screen);
warm: the same frame again (OCR cached per frame). A failing assertion also saves its
screenshot and reads the screen's texts for its message.

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
        phone = Phone.open(settings)
        sim.run(["am", "start", "-n", "com.android.settings/.Settings"])
        cache = phone.reader.cache  # the perception facade's per-frame OCR cache

        def cold(call: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                cache.clear()
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
            "assert_visible (warm)": lambda: phone.assert_visible("Display & brightness"),
        }
        times = samples_ms(calls, args.repeat, warmup=1)
    print(f"screen 1080x2400, {args.repeat} calls each, round-robin; perception: {phone.reader.describe_backends()}")
    worst = 0.0
    for name, values in times.items():
        median = statistics.median(values)
        if "(cold)" in name:
            worst = max(worst, median)
        print(f"  {name:32} median {median:7.1f} ms   min {min(values):7.1f}   max {max(values):7.1f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    verdict = "met" if worst < GOAL_MS else "MISSED"
    print(f"goal: every cold median under {GOAL_MS:.0f} ms: {verdict} (slowest {worst:.1f} ms)")
    return 0 if worst < GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
