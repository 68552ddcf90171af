"""Icon localization on a fresh held-back set (``benchmarks/data/fresh_icon_targets.json``, issue 30).

The set (``benchmarks/fresh_icon_targets.py``: who wrote it, the box rule, the sources) was
committed before any locator ran on it; it is measured once, after the ranker is frozen.
The locate call and the scoring are ``bench_real_icons``' own (imported, not copied): the same
``Perception`` configuration, ``find_icon(image, description, position, hierarchy)``, and
``outcome``: a right tap lies inside the box, "among candidates" has a candidate's centre
inside it, a tap elsewhere is a wrong tap.

Figures are printed in all and by group: source (``mobile-agent-v1-runs``: a real planner's
words on a real ColorOS phone; ``rico-dev``: Rico screens the development set does not use),
kind (``control``, ``tile``), app, fold half (Rico apps), and for the v1 steps whether the
agent's position words agree with the box (``position agrees`` / ``position off``: the agent
said "center" for an icon at the top left).

``--tree``: also the CPU path with the accessibility source on, for the Rico screens only (each
fed its own view hierarchy, as ``bench_real_icons --tree`` does; Fisher-Price 516's is in its
root's 411-wide space and is scaled by that). The v1 runs recorded no hierarchy.

The second held-back set (``--targets benchmarks/data/fresh2_icon_targets.json``, issue 30,
heldout5): 64 icons on published phone screenshots of 9 open-source apps the project has never
seen, in ``benchmarks/data/fresh2/`` (sources and licences there). Its items' source is
``fresh2``; they are grouped by app, placement (toolbar, row, fab, bottom-nav, panel) and
whether the position words agree with the box; they carry no hierarchy (``--tree`` skips them).
The third (``--targets benchmarks/data/fresh3_icon_targets.json``, heldout6) has the same shape and
groups, source ``fresh3``: 59 icons on screenshots of 8 other such apps, in ``benchmarks/data/fresh3/``.
The fourth (``--targets benchmarks/data/fresh4_icon_targets.json``, heldout7) likewise, source ``fresh4``:
52 icons on screenshots of 8 further apps, in ``benchmarks/data/fresh4/``. The fifth and sixth
(``fresh5``, ``fresh6``; session 6) and the seventh to thirteenth (``fresh7`` to ``fresh13``; session 7)
are read the same way.

Run: ``python benchmarks/bench_fresh_icons.py [--backend cpu] [--tree] [--verbose]``;
``--targets FILE --limit N`` runs it on another set of the same shape (to try the script
without looking at the held-back one). ``--check`` only loads the file and checks it (every
screenshot opens at its recorded size, every box lies inside it); no locator runs. Prints
figures; exits 0 (goals are reported, not asserted); ``--check`` exits 1 on a problem.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_real_icons import OUTCOMES, Tally, outcome, report, rico_nodes  # noqa: E402
from benchmarks.rico_folds import half_of  # noqa: E402
from perception import Perception, PerceptionConfig  # noqa: E402
from perception.accessibility import AccessibilityNode  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGETS = REPO / "benchmarks" / "data" / "fresh_icon_targets.json"
# The held-back sets built by a data-only engineer each: published screenshots of open-source apps.
BUILT_SETS = ("fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13")
SOURCES = ("mobile-agent-v1-runs", "rico-dev", *BUILT_SETS)


def load_targets(path: Path) -> tuple[Path, list[dict]]:
    document = json.loads(path.read_text())
    return (REPO / document["images_root"].split(" ")[0]).resolve(), document["items"]


def source_of(item: dict) -> str:
    first = item["image"].split("/", 1)[0]
    return first if first in SOURCES else "rico-dev"  # rico_icon_targets.json's paths start at the app


def groups_of(item: dict) -> list[str]:
    source = source_of(item)
    image = item["image"].removeprefix(f"{source}/")
    groups = [source, f"kind {item.get('kind', 'control')}"]
    if source in BUILT_SETS:
        agrees = set(item["position"].split()) <= set(item["grid_position"].split())
        return groups + [
            f"app {item['app']}",
            f"placement {item['placement']}",
            "position agrees" if agrees else "position off",
        ]
    if source == "rico-dev":
        groups += [f"app {image.split('/', 1)[0]}", f"half {half_of(image)}"]
    else:
        groups.append(f"app v1 {image.split('/', 1)[0]}")
        said = set((item["position"] or "").split())
        groups.append(
            "v1 position agrees" if said <= set(item["grid_position"].split()) else "v1 position off"
        )
    return groups


def hierarchy_for(images_root: Path, item: dict, width: int) -> list[AccessibilityNode] | None:
    """The screen's own Rico view hierarchy as accessibility nodes; None for a v1 step (none recorded)."""
    if source_of(item) != "rico-dev":
        return None
    path = (images_root / item["image"]).with_suffix(".hierarchy.json")
    bounds = json.loads(path.read_text())["activity"]["root"]["bounds"]
    space = bounds[2] if bounds[:2] == [0, 0] else 1440  # rico_nodes scales by width / 1440
    return rico_nodes(path, round(width * 1440 / space))


def check(images_root: Path, items: list[dict[str, Any]]) -> list[str]:
    """What is wrong with a target file's items: a screenshot that does not open at its recorded
    size, a box not inside it. Runs no locator."""
    problems = []
    for item in items:
        try:
            with Image.open(images_root / item["image"]) as image:
                size = list(image.size)
                image.load()
        except (OSError, ValueError) as error:
            problems.append(f"{item['image']}: does not open ({error})")
            continue
        left, top, right, bottom = item["box"]
        if item.get("size", size) != size:
            problems.append(f"{item['image']}: recorded size {item['size']}, the file is {size}")
        if not (0 <= left < right <= size[0] and 0 <= top < bottom <= size[1]):
            problems.append(f"{item['image']}: box {item['box']} is not inside {size}")
    return problems


def measure(perception: Perception, images_root: Path, items: list[dict], tree: bool = False) -> Tally:
    """``bench_real_icons.run``'s loop (the same call and scoring), with this set's groups."""
    tally = Tally()
    seen: set[str] = set()
    for item in items:
        image = np.asarray(Image.open(images_root / item["image"]).convert("RGB"))
        started = time.perf_counter()
        hierarchy = hierarchy_for(images_root, item, image.shape[1]) if tree else None
        where = perception.find_icon(image, item["description"], item["position"], hierarchy)
        took = time.perf_counter() - started
        (tally.cached_frame if item["image"] in seen else tally.new_frame).append(took)
        seen.add(item["image"])
        result = outcome(where, item["box"])
        tally.counts[result] += 1
        for group in groups_of(item):
            tally.groups.setdefault(group, dict.fromkeys(OUTCOMES, 0))[result] += 1
        if result != "right tap":
            got = where.point if where.point else [c.box.center for c in where.candidates]
            tally.misses.append(
                f"{item['image']}: {item['description']!r} ({item['position']}) truth {item['box']} -> {result} {got}"
            )
    return tally


def cpu(accessibility: bool = False) -> Perception:
    """``bench_real_icons``' CPU configuration (its ``main``), the tree on or off."""
    return Perception(
        PerceptionConfig(
            detector="proposals",
            ranker="heuristic",
            compute_device="cpu",
            cache_size=64,
            accessibility=accessibility,
        )
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["cpu"], default="cpu")
    parser.add_argument("--targets", type=Path, default=TARGETS)
    parser.add_argument("--limit", type=int, default=0, help="only the first N targets (0: all)")
    parser.add_argument(
        "--tree", action="store_true", help="also the CPU path with the Rico screens' own trees"
    )
    parser.add_argument("--verbose", action="store_true", help="print every target that was not a right tap")
    parser.add_argument("--check", action="store_true", help="only load and check the file; no locator runs")
    args = parser.parse_args(argv)
    images_root, items = load_targets(args.targets)
    if args.limit:
        items = items[: args.limit]
    if args.check:
        problems = check(images_root, items)
        print("\n".join(problems) or f"{args.targets.name}: {len(items)} targets on "
              f"{len({i['image'] for i in items})} screens; every screenshot opens, every box is inside it")  # fmt: skip
        return 1 if problems else 0
    missing = sorted({i["image"] for i in items if not (images_root / i["image"]).is_file()})
    if missing:
        print(
            f"fresh icon targets: {len(missing)} screenshots missing under {images_root} (e.g. {missing[0]})"
        )
        return 0
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "perception"], cwd=REPO, capture_output=True, text=True
    )
    print(f"fresh icon targets: {len(items)} on {len({i['image'] for i in items})} screens ({args.targets.name}); "
          f"HEAD {head}{' (perception/ has uncommitted changes)' if dirty.stdout.strip() else ''}; "
          f"load average {' / '.join(f'{v:.2f}' for v in os.getloadavg())}")  # fmt: skip
    report("cpu (OpenCV proposals + heuristic ranker)", measure(cpu(), images_root, items), args.verbose)
    if args.tree:
        rico = [i for i in items if source_of(i) == "rico-dev"]
        report(f"cpu + accessibility tree (the {len(rico)} Rico targets, each screen's own hierarchy; "
               "the v1 runs recorded none)", measure(cpu(True), images_root, rico, tree=True), args.verbose)  # fmt: skip
    print(f"load average at the end {' / '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
