"""Rendering cost of the content apps' screens (Chrome, Gmail, Maps, Play Store, Amazon
Music, YouTube, TikTok, Alibaba.com), in process (no adb).

For each screen, reached by the taps and typing a person would do: ``render`` - a changed
screen (the clock moves a minute), full Pillow render + ground truth - against the same
100 ms goal as bench_sim_render; ``step`` - one whole input command through `Phone.run`
that changes the app's state (a search submitted with ENTER, a like ...) followed by the
new frame's ground truth.

Prints medians and the ratio to the goal (ratio <= 1.0 meets it).

    .venv/bin/python benchmarks/bench_sim_apps.py [-n 15]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.rig import medians_ms  # noqa: E402
from simphone import Phone  # noqa: E402

RENDER_GOAL_MS = 100.0


def tap(phone: Phone, text: str) -> None:
    for el in phone.ground_truth():
        if text in (el["text"], el["description"]):
            left, top, right, bottom = el["box"]
            phone.run(["input", "tap", str((left + right) // 2), str((top + bottom) // 2)])
            return
    raise SystemExit(f"{text!r} not on screen")


def typed(text: str) -> Callable[[Phone], None]:
    return lambda phone: phone.run(["input", "text", text.replace(" ", "%s")])


def enter(phone: Phone) -> None:
    phone.run(["input", "keyevent", "66"])


def back(phone: Phone) -> None:
    phone.run(["input", "keyevent", "4"])


def swipe(y1: int, y2: int) -> Callable[[Phone], None]:
    return lambda phone: phone.run(["input", "swipe", "540", str(y1), "540", str(y2), "300"])


def tapping(text: str) -> Callable[[Phone], None]:
    return lambda phone: tap(phone, text)


def search_again(phone: Phone) -> None:
    tap(phone, "Search or type web address search bar")
    typed("Taylor Swift")(phone)
    enter(phone)


# screen name -> (steps to reach it: a text to tap or a callable, the input steps timed in turn:
# each changes the screen from the one before)
SCREENS: dict[str, tuple[list, list[Callable[[Phone], None]]]] = {
    "chrome results": (["Chrome app icon", "Search or type web address", typed("Lakers game today"), enter],
                       [search_again]),
    "gmail inbox": (["Gmail app icon"], [tapping("Sent"), tapping("Inbox")]),
    "gmail compose+keyboard": (["Gmail app icon", "Compose"], [typed("a")]),
    "maps gas stations": (["Google Maps app icon", "Search here", typed("gas station"), enter],
                          [tapping("Directions"), back]),
    "play store results": (["Play Store app icon", "Search apps & games", typed("WhatsApp"), enter],
                           [tapping("Install"), lambda p: p.uninstall("com.whatsapp")]),
    "music home": (["Amazon Music app icon"], [tapping("Relaxing Piano"), tapping("Home")]),
    "youtube video": (["YouTube app icon", "search, magnifier", typed("Stephen Curry"), enter,
                       "Stephen Curry Top Plays"], [tapping("thumbs up"), tapping("thumbs up, liked")]),
    "tiktok feed": (["TikTok app icon"], [swipe(1800, 600)]),
    "alibaba home": (["Alibaba.com app icon"], [swipe(1800, 900), swipe(900, 1800)]),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=15)
    args = parser.parse_args()
    print(f"{'screen':26} {'render':>8} {'step':>8}  (ms, median of {args.n})")
    worst = 0.0
    for name, (steps, changes) in SCREENS.items():
        phone = Phone()
        for step in steps:
            step(phone) if callable(step) else tap(phone, step)

        def render(phone: Phone = phone) -> None:
            phone.set_clock(phone.clock + timedelta(minutes=1))
            phone.ground_truth()

        turns = itertools.cycle(changes)

        def step(phone: Phone = phone, turns=turns) -> None:
            next(turns)(phone)
            phone.ground_truth()

        timed = medians_ms({"render": render, "step": step}, args.n, warmup=0)
        r, s = timed["render"], timed["step"]
        worst = max(worst, r)
        print(f"{name:26} {r:8.1f} {s:8.1f}")
    print(f"changed-screen render: worst {worst:.1f} ms, ratio to {RENDER_GOAL_MS:.0f} ms goal {worst / RENDER_GOAL_MS:.2f}")


if __name__ == "__main__":
    main()
