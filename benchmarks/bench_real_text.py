"""Text localization on real screens, verified by position against ground truth.

1. Rico screens (``rico-dev/targets.json``: real screenshots, boxes from the view hierarchy
   captured with them): for every visible text target, the ``click text`` operation's
   locate result is
   - ``right``: a single tap inside the target's box (or inside a box holding the same text),
   - ``candidates``: candidates, one of them inside the target's box,
   - ``wrong``: a single tap anywhere else, or candidates that all miss it,
   - ``not_found``: refused (not found / too many).
   Overall, by text length and by "occurs once / several times"; time per screen.
2. Mobile-Agent v1 runs (real phone, no boxes): ``click text`` / ``open App`` targets
   found / among candidates / refused.
3. Absent targets: texts from other apps' screens asked on a screen that does not hold
   them (checked against that screen's hierarchy): each should be refused.

The current tree and a baseline tree (``--baseline REV``, default the commit before this
work, extracted with ``git archive``) run the same items, each in its own process, one
after the other; figures are printed side by side with the load average.

4. Speed of the next frame after a small change (simulated phone): OCR reusing the
   unchanged rows vs a full read, in one process.

5. Old OCR settings vs the new defaults (``--part settings``): the Rico screens in one
   process, the two interleaved screen by screen, time per screen and position accuracy.

Run: ``python benchmarks/bench_real_text.py [--baseline REV|none] [--limit N] [--part all|accuracy|speed|settings]`` or
``python -m benchmarks real_text``. Data: ``../shared/reference`` from the repo root,
or ``MOBILE_AGENT_REFERENCE=/path/to/reference``. Prints figures; exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.rico_folds import half_of  # noqa: E402

REFERENCE = Path(os.environ.get("MOBILE_AGENT_REFERENCE", ROOT / ".." / "shared" / "reference"))
RICO = REFERENCE / "rico-dev"
RUNS = REFERENCE / "mobile-agent-v1-runs"
BASELINE = "afa171e"  # main just before the real-screen work (issue 11)
ACTION = re.compile(r"^\s*(click text|open App)\s*\((.*)\)\s*$", re.IGNORECASE)
ABSENT_PER_SOURCE = 14


def _fold(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def _length_bucket(text: str) -> str:
    n = len(text.strip())
    return "1-3" if n <= 3 else "4-10" if n <= 10 else "11-25" if n <= 25 else ">25"


def _image_path(item: dict) -> Path:
    path = RICO / item["image"]
    return path if path.is_file() else RICO / f"{item['screen']}.jpg"


def rico_items() -> dict[str, list[dict]]:
    data = json.loads((RICO / "targets.json").read_text())
    screens: dict[str, list[dict]] = defaultdict(list)
    for item in data["items"]:
        screens[item["screen"]].append(item)
    return dict(sorted(screens.items()))


def _screen_texts(screen: str) -> set[str]:
    """Every text and content-desc of a Rico screen's hierarchy, folded."""
    found: set[str] = set()

    def walk(node: dict) -> None:
        for key in ("text", "content-desc"):
            value = node.get(key)
            if isinstance(value, str) and value.strip():
                found.add(_fold(value))
            elif isinstance(value, list):
                found.update(_fold(v) for v in value if isinstance(v, str))
        for child in node.get("children") or []:
            if isinstance(child, dict):
                walk(child)

    path = RICO / f"{screen}.hierarchy.json"
    if path.is_file():
        tree = json.loads(path.read_text())
        walk(tree.get("activity", {}).get("root", tree))
    return found


def run_steps() -> list[tuple[Path, str]]:
    steps = []
    for data in sorted(RUNS.glob("*/*/data.json")):
        for step, record in json.loads(data.read_text()).items():
            match = ACTION.match(record.get("Action", ""))
            shot = data.parent / f"{step}.jpg"
            if match and shot.is_file():
                steps.append((shot, match.group(2).strip()))
    return steps


def absent_targets(screens: dict[str, list[dict]], steps: list[tuple[Path, str]]) -> list[tuple[str, Path, str]]:
    """(source, screenshot, text) pairs where the text is on another app's screen, not this one."""
    rng = random.Random(11)
    pairs: list[tuple[str, Path, str]] = []
    names = list(screens)
    pool = [(item["app"], item["text"]) for items in screens.values() for item in items if 4 <= len(item["text"]) <= 30]
    for screen in rng.sample(names, len(names)):
        if len([p for p in pairs if p[0] == "rico"]) >= ABSENT_PER_SOURCE:
            break
        app = screens[screen][0]["app"]
        present = _screen_texts(screen)
        for _ in range(50):
            other_app, text = rng.choice(pool)
            folded = _fold(text)
            if other_app != app and folded and not any(folded in t or (t and t in folded) for t in present):
                pairs.append(("rico", _image_path(screens[screen][0]), text))
                break
    by_app: dict[str, set[str]] = defaultdict(set)
    for shot, text in steps:
        by_app[shot.parent.parent.name].add(_fold(text))
    for shot, _ in rng.sample(steps, len(steps)):
        if len(pairs) >= 2 * ABSENT_PER_SOURCE:
            break
        app = shot.parent.parent.name
        others = sorted({t for s, t in steps if s.parent.parent.name != app and _fold(t) not in by_app[app] and len(t) >= 4})
        pairs.append(("runs", shot, rng.choice(others)))
    return pairs


# --- one tree's measurement (runs in a child process) -----------------------------------


def _inside(point, box, slack: float = 0.0) -> bool:
    return box[0] - slack <= point[0] <= box[2] + slack and box[1] - slack <= point[1] <= box[3] + slack


def measure(limit: int | None, save_lines: str | None = None) -> dict:
    import numpy as np
    from PIL import Image

    from perception import LocateStatus, Perception, PerceptionConfig

    perception = Perception(PerceptionConfig(compute_device="cpu"))
    screens = rico_items()
    steps = run_steps()
    if limit:
        screens = dict(list(screens.items())[:limit])
        steps = steps[:limit]
    warm = np.asarray(Image.open(_image_path(next(iter(screens.values()))[0])).convert("RGB"))
    perception.find_text(warm, "warm up")  # load the models outside the timings
    perception.cache.clear()
    results, screen_times, failures = [], [], []
    seen_lines: dict[str, list] = {}
    for screen, items in screens.items():
        image = np.asarray(Image.open(_image_path(items[0])).convert("RGB"))
        started = time.perf_counter()
        for item in items:
            where = perception.find_text(image, item["text"])
            boxes = [item["bbox"], *item.get("duplicates", [])]
            if where.status is LocateStatus.FOUND:
                kind = "right" if any(_inside(where.point, b) for b in boxes) else "wrong"
            elif where.status is LocateStatus.CANDIDATES:
                kind = "candidates" if any(_inside(c.box.center, item["bbox"]) for c in where.candidates) else "wrong"
            else:
                kind = "not_found"
            results.append({"text": item["text"], "kind": kind, "length": _length_bucket(item["text"]),
                            "occurrence": item["occurrence"], "half": half_of(screen)})  # fmt: skip
            if kind not in ("right", "candidates"):
                got = where.point or [c.box.center for c in where.candidates] or where.status.value
                failures.append(f"{screen}: {item['text'][:40]!r} box {[round(v) for v in item['bbox']]} -> {kind} {got}")
        screen_times.append(time.perf_counter() - started)
        if save_lines:
            seen_lines[str(_image_path(items[0]))] = perception.ocr(image)
    run_kinds: dict[str, int] = defaultdict(int)
    run_times, run_failures = [], []
    for shot, target in steps:
        image = np.asarray(Image.open(shot).convert("RGB"))
        started = time.perf_counter()
        where = perception.find_text(image, target)
        run_times.append(time.perf_counter() - started)
        run_kinds[where.status.value] += 1
        if save_lines:
            seen_lines[str(shot)] = perception.ocr(image)
        if where.status not in (LocateStatus.FOUND, LocateStatus.CANDIDATES):
            run_failures.append(f"{shot.relative_to(RUNS)}: {target!r} -> {where.status.value}, closest {where.closest}")
    if save_lines:  # for looking at misses without OCR again
        import pickle

        Path(save_lines).write_bytes(pickle.dumps(seen_lines))
    absent = absent_targets(rico_items(), run_steps())
    refused, absent_failures = 0, []
    for source, shot, text in absent:
        image = np.asarray(Image.open(shot).convert("RGB"))
        where = perception.find_text(image, text)
        if where.status in (LocateStatus.NOT_FOUND, LocateStatus.TOO_MANY):
            refused += 1
        else:
            absent_failures.append(f"{source} {shot.relative_to(REFERENCE)}: {text!r} -> {where.status.value} "
                                   f"{where.point or [c.text for c in where.candidates]}")  # fmt: skip
    return {
        "results": results,
        "failures": failures,
        "screen_times": screen_times,
        "runs": dict(run_kinds),
        "run_times": run_times,
        "run_failures": run_failures,
        "absent": len(absent),
        "refused": refused,
        "absent_failures": absent_failures,
    }


def frame_sequence_speed(repeat: int = 3) -> dict:
    """Full-screen OCR of a new frame vs the next frame of a step that changed a little
    (Airplane mode switched on the simulated phone's Settings), with and without reusing the
    unchanged rows; one process, interleaved."""
    import numpy as np

    from perception import Perception, PerceptionConfig

    try:
        from simphone import Phone
    except ImportError:
        return {}
    phone = Phone()
    phone.run(["monkey", "-p", "com.android.settings", "-c", "android.intent.category.LAUNCHER", "1"])
    first = np.asarray(phone.screenshot().convert("RGB"))
    toggle = next(e for e in phone.ground_truth() if e["description"].startswith("Airplane mode switch"))["box"]
    phone.run(["input", "tap", str((toggle[0] + toggle[2]) // 2), str((toggle[1] + toggle[3]) // 2)])
    second = np.asarray(phone.screenshot().convert("RGB"))
    out: dict[str, list[float]] = {"reuse": [], "full": []}
    configs = {"reuse": PerceptionConfig(compute_device="cpu"),
               "full": PerceptionConfig(compute_device="cpu", ocr_reuse_unchanged=False)}  # fmt: skip
    engines = {name: Perception(config) for name, config in configs.items()}
    for perception in engines.values():
        perception.find_text(first, "warm up")
    for _ in range(repeat):
        for name, perception in engines.items():
            perception.cache.clear()
            perception.find_text(first, "Bluetooth")  # the step's first frame
            started = time.perf_counter()
            perception.find_text(second, "Bluetooth")  # the next step's frame
            out[name].append(time.perf_counter() - started)
    changed = float(np.mean(np.any(first != second, axis=(1, 2))))
    return {"reuse": statistics.median(out["reuse"]), "full": statistics.median(out["full"]), "changed_rows": changed}


# The OCR settings main shipped before the speed work of issue 11 (commit b87e7df).
OLD_SETTINGS = {"ocr_limit_side_len": 1280, "ocr_screen_side_len": 1280, "ocr_rec_batch": 6, "ocr_memory_arena": False}


def settings_timing(limit: int | None, repeat: int = 3) -> dict[str, dict]:
    """Old OCR settings vs the new defaults in one process, interleaved screen by screen
    (so both see the same load): per Rico screen, every target's ``find_text`` from an
    empty cache, the best of ``repeat`` rounds; and each target's result classified."""
    import numpy as np
    from PIL import Image

    from perception import LocateStatus, Perception, PerceptionConfig

    engines = {"old settings": Perception(PerceptionConfig(compute_device="cpu", ocr_reuse_unchanged=False, **OLD_SETTINGS)),
               "new settings": Perception(PerceptionConfig(compute_device="cpu", ocr_reuse_unchanged=False))}  # fmt: skip
    screens = rico_items()
    if limit:
        screens = dict(list(screens.items())[:limit])
    out = {name: {"screen": [], "ocr": [], "kinds": defaultdict(int)} for name in engines}
    warm = np.asarray(Image.open(_image_path(next(iter(screens.values()))[0])).convert("RGB"))
    for perception in engines.values():
        perception.find_text(warm, "warm up")
    for items in screens.values():
        image = np.asarray(Image.open(_image_path(items[0])).convert("RGB"))
        for name, perception in engines.items():
            best, ocr = float("inf"), float("inf")
            for _ in range(repeat):
                perception.cache.clear()
                started = time.perf_counter()
                found = [perception.find_text(image, item["text"]) for item in items]
                best, ocr = min(best, time.perf_counter() - started), min(ocr, perception.timings["ocr"])
            out[name]["screen"].append(best)
            out[name]["ocr"].append(ocr)
            for item, where in zip(items, found, strict=True):
                boxes = [item["bbox"], *item.get("duplicates", [])]
                if where.status is LocateStatus.FOUND:
                    kind = "right" if any(_inside(where.point, b) for b in boxes) else "wrong"
                elif where.status is LocateStatus.CANDIDATES:
                    kind = "candidates" if any(_inside(c.box.center, item["bbox"]) for c in where.candidates) else "wrong"
                else:
                    kind = "not_found"
                out[name]["kinds"][kind] += 1
    return out


def print_settings_timing(limit: int | None) -> None:
    print(f"machine: {_cpu_model()}, {os.cpu_count()} cores; old settings {OLD_SETTINGS} vs new defaults, "
          f"one process, interleaved per screen, best of 3 per screen", flush=True)  # fmt: skip
    load = os.getloadavg()[0]
    figures = settings_timing(limit)
    for name, fig in figures.items():
        kinds = fig["kinds"]
        total = sum(kinds.values())
        print(f"{name}: Rico right or among candidates {_share(kinds['right'] + kinds['candidates'], total)} "
              f"(single tap right {kinds['right']}, candidates {kinds['candidates']}, WRONG {kinds['wrong']}, "
              f"not found {kinds['not_found']}); per screen median {statistics.median(fig['screen']):.3f} s "
              f"(OCR {statistics.median(fig['ocr']):.3f} s), mean {statistics.mean(fig['screen']):.3f} s")  # fmt: skip
    old, new = (statistics.median(f["screen"]) for f in figures.values())
    print(f"new/old per-screen median: {new / old:.2f}; load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f}")


def print_speed() -> None:
    load = os.getloadavg()[0]
    seq = frame_sequence_speed()
    if seq:
        print(f"next frame after a small change ({seq['changed_rows']:.1%} of rows changed, load average {load:.1f}): "
              f"OCR with unchanged rows reused {seq['reuse']:.3f} s vs full read {seq['full']:.3f} s "
              f"= {seq['full'] / seq['reuse']:.1f}x faster (medians of 3)")  # fmt: skip


# --- the parent: run both trees, print side by side ---------------------------------------


def _baseline_tree(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev, "perception"], cwd=ROOT, check=True, capture_output=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".tar") as tar:
        tar.write(archive)
        tar.flush()
        with tarfile.open(tar.name) as tf:
            tf.extractall(into, filter="data")
    return into


def _child(tree: Path, limit: int | None, save_lines: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child"]
    if limit:
        cmd += ["--limit", str(limit)]
    if save_lines:
        cmd += ["--save-lines", save_lines]
    proc = subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cpu_model() -> str:
    """The CPU's name: per-screen seconds differ ~2x between the machines this ran on."""
    try:
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            if row.startswith("model name"):
                return row.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _share(n: int, total: int) -> str:
    return f"{n}/{total} = {n / max(1, total):.1%}"


def report(name: str, fig: dict) -> list[str]:
    res = fig["results"]
    kinds = defaultdict(int)
    for r in res:
        kinds[r["kind"]] += 1
    ok = kinds["right"] + kinds["candidates"]
    out = [f"{name}:",
           f"  Rico visible text targets: right or among candidates {_share(ok, len(res))} "
           f"(single tap right {kinds['right']}, candidates {kinds['candidates']}, "
           f"WRONG {kinds['wrong']}, not found {kinds['not_found']})",
           f"  time per screen: median {statistics.median(fig['screen_times']):.3f} s, "
           f"mean {statistics.mean(fig['screen_times']):.3f} s ({len(fig['screen_times'])} screens)"]  # fmt: skip
    for key in ("length", "occurrence", "half"):  # half: the app split of benchmarks/rico_folds.py
        groups: dict[str, list[str]] = defaultdict(list)
        for r in res:
            if key in r:  # an older tree's child does not say
                groups[r[key]].append(r["kind"])
        if not groups:
            continue
        parts = [f"{g}: {_share(sum(k in ('right', 'candidates') for k in ks), len(ks))} (wrong {ks.count('wrong')})"
                 for g, ks in sorted(groups.items())]  # fmt: skip
        out.append(f"  by {key}: " + "; ".join(parts))
    runs = fig["runs"]
    total = sum(runs.values())
    out.append(f"  Mobile-Agent runs (no boxes): found {runs.get('found', 0)}, candidates {runs.get('candidates', 0)}, "
               f"refused {total - runs.get('found', 0) - runs.get('candidates', 0)} of {total}; "
               f"median {statistics.median(fig['run_times']):.3f} s per step")  # fmt: skip
    out.append(f"  absent targets refused: {fig['refused']}/{fig['absent']}")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with, or 'none'")
    parser.add_argument("--limit", type=int, default=None, help="first N screens / steps only (a quick look)")
    parser.add_argument("--save-lines", help="pickle the new tree's OCR lines per screenshot to this file")
    parser.add_argument("--part", choices=["all", "accuracy", "speed", "settings"], default="all")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)))
        print(json.dumps(measure(args.limit, args.save_lines)))
        return 0
    if args.part == "speed":
        print_speed()
        return 0
    if args.part == "settings":
        print_settings_timing(args.limit)
        return 0
    if not (RICO / "targets.json").is_file():
        print("no Rico targets under", RICO, "(set MOBILE_AGENT_REFERENCE)")
        return 0
    print(f"machine: {_cpu_model()}, {os.cpu_count()} cores", flush=True)
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        order = [("new (this tree)", ROOT)]
        if args.baseline != "none":
            order.insert(0, (f"old ({args.baseline})", _baseline_tree(args.baseline, Path(tmp))))
        for name, tree in order:
            load = os.getloadavg()[0]
            started = time.perf_counter()
            figures[name] = _child(tree, args.limit, args.save_lines if tree == ROOT else None)
            print(f"[{name}: {time.perf_counter() - started:.0f} s, load average at start {load:.2f}]", flush=True)
    for name, fig in figures.items():
        print("\n".join(report(name, fig)))
    new = figures["new (this tree)"]
    if args.part == "all":
        print_speed()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print("new tree, Rico failures:")
    for line in new["failures"]:
        print("  ", line)
    print("new tree, run steps refused:")
    for line in new["run_failures"]:
        print("  ", line)
    print("new tree, absent targets NOT refused:")
    for line in new["absent_failures"]:
        print("  ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
