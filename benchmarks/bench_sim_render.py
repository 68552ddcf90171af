"""Rendering cost of the simulated phone's screens, in process (no adb).

Times, for several screens (home, Settings, Notes editor with keyboard, Weather, Calendar):

* ``render`` - a changed screen: state changed, full Pillow render + ground truth (goal < 100 ms);
* ``render+png`` / ``render+raw`` - the same plus encoding the PNG / the raw framebuffer;
* ``cached png`` / ``cached raw`` - an unchanged screen: the cached bytes (the in-process
  share of the 30 ms adb screencap goal).

Prints medians and the ratio to each goal (ratio <= 1.0 meets it).

    .venv/bin/python benchmarks/bench_sim_render.py [-n 15]
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.rig import medians_ms  # noqa: E402
from simphone import Phone  # noqa: E402

RENDER_GOAL_MS = 100.0
CACHED_GOAL_MS = 30.0


def _tap_text(phone: Phone, text: str) -> None:
    for el in phone.ground_truth():
        if text in (el["text"], el["description"]):
            left, top, right, bottom = el["box"]
            phone.tap((left + right) // 2, (top + bottom) // 2)
            return
    raise SystemExit(f"{text!r} not on screen")


SCREENS = {
    "home": [],
    "settings": ["Settings"],
    "notes-editor+keyboard": ["Notes", "orange plus button: new note"],
    "weather": ["Weather"],
    "calendar": ["Calendar"],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=15)
    args = parser.parse_args()
    print(f"{'screen':24} {'render':>8} {'+png':>8} {'+raw':>8} {'cached png':>11} {'cached raw':>11}  (ms, median of {args.n})")
    worst_render = worst_cached = 0.0
    for name, taps in SCREENS.items():
        phone = Phone()
        for text in taps:
            _tap_text(phone, text)

        def change(phone: Phone = phone) -> None:  # a minute passes: the status-bar clock changes
            phone.set_clock(phone.clock + timedelta(minutes=1))

        def render(phone: Phone = phone) -> None:
            change()
            phone.ground_truth()

        def render_png(phone: Phone = phone) -> None:
            change()
            phone.screencap_png()

        def render_raw(phone: Phone = phone) -> None:
            change()
            phone.screencap_raw()

        changed = medians_ms({"render": render, "png": render_png, "raw": render_raw}, args.n, warmup=0)
        r, rp, rr = changed["render"], changed["png"], changed["raw"]
        cached = medians_ms({"png": phone.screencap_png, "raw": phone.screencap_raw}, args.n * 5, warmup=0)
        cp, cr = cached["png"], cached["raw"]
        worst_render, worst_cached = max(worst_render, r), max(worst_cached, cp, cr)
        print(f"{name:24} {r:8.1f} {rp:8.1f} {rr:8.1f} {cp:11.3f} {cr:11.3f}")
    print(f"changed-screen render: worst {worst_render:.1f} ms, ratio to {RENDER_GOAL_MS:.0f} ms goal "
          f"{worst_render / RENDER_GOAL_MS:.2f}")
    print(f"unchanged screencap (in process): worst {worst_cached:.3f} ms, ratio to {CACHED_GOAL_MS:.0f} ms goal "
          f"{worst_cached / CACHED_GOAL_MS:.3f}")


if __name__ == "__main__":
    main()
