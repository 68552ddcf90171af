"""Grounded taps that land: right-element tap rate per dialect, with and without snapping.

On the simulated phone's screens (launcher, every app, each scrolled once), every
clickable text or icon is a target. A scripted grounding model (tests/grounding_model.py)
aims at the ground-truth centre of the target plus a drift, and writes the tap in the
dialect's own reply format and coordinate space, for the image size that dialect sends
(``planner.geometry``: Qwen's ``smart_resize``, a 0-999 grid...). The agent's dialect
parser reads the reply and maps the point back to the screen (the real code path of
``Planner.parse``); then the point is tapped as given, or snapped
(``perception.snapping`` on ``Perception.snap_targets``: RapidOCR lines and UI-element
proposals of the frame).

Snapping as the agent does it also learns the model's habit over the taps (a
``DriftTracker`` per run: the offset most taps agree on is taken off before snapping); the
targets come in a shuffled order across the screens, one long run per cell. The table
shows the tap as given, snapped tap by tap, and snapped with the learned drift.

A tap is right when the phone's own hit test sends it to the same tap target as the
target's true centre (the simulator's ``target_at``: a settings row's icon, title and
subtitle are one target). Position-verified, not "something was found".

Drifts: constant vertical offsets of 0-5% of the screen height (down), random noise (a
Gaussian of 1% of the height on both axes), and both (3% down plus the noise). Goal: at 3% vertical drift, >= 98% with
snapping, per dialect.

Run: ``python benchmarks/bench_dialects.py [--drifts 0,1,2,3,4,5] [--noise 1.0] [--limit N]``
or ``python -m benchmarks dialects``. Prints figures; exits 0 (goals are reported, not asserted).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mobile_agent.operations.coordinates import DRIFT_TOLERANCE  # noqa: E402
from mobile_agent.planner.dialects import dialect_for  # noqa: E402
from mobile_agent.planner.geometry import viewport_for  # noqa: E402
from mobile_agent.settings import PlannerSettings  # noqa: E402
from perception import Perception, PerceptionConfig  # noqa: E402
from perception.snapping import DriftTracker, snap_point  # noqa: E402
from tests.grounding_model import Step, render  # noqa: E402

# (label, served model name: its profile picks dialect, space and image rule)
MODELS = [
    ("ui_tars (UI-TARS-1.5, image px)", "ByteDance-Seed/UI-TARS-1.5-7B"),
    ("ui_tars (UI-TARS 1.0, 0-999)", "bytedance-research/UI-TARS-7B-SFT"),
    ("mobile_use (Qwen2.5-VL, image px)", "Qwen/Qwen2.5-VL-7B-Instruct"),
    ("mobile_use (Qwen3-VL, 0-999)", "Qwen/Qwen3-VL-8B-Instruct"),
    ("autoglm (AutoGLM-Phone, 0-999)", "zai-org/AutoGLM-Phone-9B"),
]
SNAP_MAX_DISTANCE = PlannerSettings().snap_max_distance  # the default setting, a share of the height


def _screens():
    """(name, RGB frame, ground truth, tap-target boxes) for a spread of simulated screens."""
    from simphone import Phone

    phone = Phone()
    screens = []

    def grab(name: str) -> None:
        frame = np.asarray(phone.screenshot().convert("RGB"))
        truth = phone.ground_truth()
        # the hit test of this frame, frozen: targets by box
        with phone.lock:
            targets = [tuple(t.box) for t in phone._ensure_frame().targets]
        screens.append((name, frame, truth, targets))

    grab("home")
    listing = phone.run(["cmd", "package", "query-activities", "-a", "android.intent.action.MAIN",
                         "-c", "android.intent.category.LAUNCHER"]).stdout.decode()  # fmt: skip
    for package in sorted(set(re.findall(r"packageName=(\S+)", listing))):
        phone.run(["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"])
        short = package.rsplit(".", 1)[-1]
        grab(short)
        phone.run(["input", "swipe", "540", "1700", "540", "700", "300"])
        grab(short + "+scrolled")
        phone.run(["input", "keyevent", "KEYCODE_HOME"])
    seen, unique = set(), []
    for item in screens:
        key = item[1].tobytes()[::997]
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _target_at(targets: list[tuple[int, int, int, int]], x: float, y: float):
    for box in reversed(targets):  # topmost first, as the simulator's hit test
        if box[0] <= x < box[2] and box[1] <= y < box[3]:
            return box
    return None


def _cases(screens, limit: int | None):
    """(screen index, element centre, its tap target) for every clickable text or icon."""
    cases = []
    for index, (_name, frame, truth, targets) in enumerate(screens):
        height = frame.shape[0]
        for element in truth:
            if element["kind"] not in ("text", "icon") or not element.get("clickable"):
                continue
            left, top, right, bottom = element["box"]
            if bottom - top < 12 or top < 0.04 * height:  # a clipped sliver; the status bar
                continue
            cx, cy = (left + right) / 2, (top + bottom) / 2
            target = _target_at(targets, cx, cy)
            if target is not None:
                cases.append((index, (cx, cy), target))
    random.Random(11).shuffle(cases)
    return cases[:limit] if limit else cases


def run(drifts: list[float], noise: float, limit: int | None) -> None:
    started = time.perf_counter()
    screens = _screens()
    cases = _cases(screens, limit)
    perception = Perception(PerceptionConfig(detector="proposals", ranker="heuristic"))
    snap_targets = [perception.snap_targets(frame) for _n, frame, _t, _g in screens]
    prep_s = time.perf_counter() - started
    print(
        f"{len(screens)} screens, {len(cases)} targets (clickable texts and icons); OCR + proposals {prep_s:.1f} s"
    )
    conditions = [(f"{d:g}% down", (0.0, d / 100), 0.0) for d in drifts]
    if noise:
        conditions.append((f"noise {noise:g}%", (0.0, 0.0), noise / 100))
        conditions.append((f"3% down + noise {noise:g}%", (0.0, 0.03), noise / 100))
    header = "| dialect | " + " | ".join(c[0] for c in conditions) + " |"
    print(
        "\nright-element tap rate: as given / snapped per tap / snapped with the drift learned over the taps (the agent's way)\n"
    )
    print(header)
    print("| --- " * (len(conditions) + 1) + "|")
    worst: dict[str, tuple[float, float, float]] = {}
    for label, model in MODELS:
        dialect, profile = dialect_for(PlannerSettings(model=model))
        space = profile.space.kind
        cells = []
        for cname, drift, sigma in conditions:
            rng = random.Random(5)
            plain = snapped = learned = 0
            tracker = None
            for index, (cx, cy), target in cases:
                frame = screens[index][1]
                height, width = frame.shape[:2]
                vp = viewport_for(width, height, dialect.image_rule(profile.image), profile.space)
                fx = cx / width + drift[0] + (rng.gauss(0, sigma) * height / width if sigma else 0.0)
                fy = cy / height + drift[1] + (rng.gauss(0, sigma) if sigma else 0.0)
                reply = render(dialect.name, Step("tap", (fx, fy)), space, (vp.image_width, vp.image_height))
                action = dialect.parse(reply, vp).action
                point = (action.params.x, action.params.y)
                targets = screens[index][3]
                plain += _target_at(targets, *point) == target
                snap = snap_point(point, snap_targets[index], max_distance=SNAP_MAX_DISTANCE * height)
                snapped += _target_at(targets, *snap.point) == target
                tracker = tracker or DriftTracker(
                    tolerance=DRIFT_TOLERANCE * height
                )  # one run's worth of taps
                snap = tracker.snap(point, snap_targets[index], max_distance=SNAP_MAX_DISTANCE * height)
                learned += _target_at(targets, *snap.point) == target
            n = len(cases)
            cells.append(f"{plain / n:.1%} / {snapped / n:.1%} / **{learned / n:.1%}**")
            seen = worst.get(cname, (1.0, 1.0, 1.0))
            worst[cname] = (min(seen[0], plain / n), min(seen[1], snapped / n), min(seen[2], learned / n))
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    for cname, (plain_r, snapped_r, learned_r) in worst.items():
        print(f"worst dialect at {cname}: as given {plain_r:.1%} / snapped per tap {snapped_r:.1%} / "
              f"snapped with the learned drift {learned_r:.1%}")
    print(f"\n{len(cases)} targets per cell; snapping max distance {SNAP_MAX_DISTANCE:.0%} of the screen height; "
          f"total {time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.2f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drifts", default="0,1,2,3,4,5", help="vertical drifts, %% of the screen height")
    parser.add_argument(
        "--noise", type=float, default=1.0, help="Gaussian noise, %% of the screen height (0: none)"
    )
    parser.add_argument("--limit", type=int, default=None, help="at most N targets (a quick look)")
    args = parser.parse_args(argv)
    run([float(d) for d in args.drifts.split(",") if d.strip()], args.noise, args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
