"""Build ``benchmarks/data/fresh_icon_targets.json``: a fresh held-back icon set (issue 30).

Written by heldout4 (session 4) before any locator or ranker was run on it, and committed
before the measurement (``benchmarks/bench_fresh_icons.py``): its commit is the proof. Nobody
tuned perception on these screens' icons. Two sources, both real; neither was used for icon
targets with ground truth before:

1. ``mobile-agent-v1-runs`` (``../shared/reference/mobile-agent-v1-runs``; X-PLUG/MobileAgent
   commit 69efcb1, ``results/``, MIT): 18 runs of the original Mobile-Agent (GPT-4V) on a real
   ColorOS phone, 540x1170 screenshots. Every ``click icon (description, position)`` step (17)
   is either a target or excluded with its reason (``V1_EXCLUDED``). Description and position
   are the agent's own words, split from its verbatim ``Action`` by the product's parser
   (``mobile_agent.operations.parse_action``): the figures measure what the product would be
   asked. The intended target of each step was read from the agent's ``Thought`` and the next
   step's screenshot; its box was labelled by eye on that step's screenshot (zoomed crops
   with a 10 px grid; glyph extents checked by thresholding against the local background).
   Caveat: ``bench_perception.py --part real`` has printed where the locator taps on these
   steps since round 1 (no ground truth there); nobody labelled them, and nothing in
   perception names them.

   **Box rule** (a right tap is one inside the tappable control, not a tight glyph box):
   - a toolbar / action icon: a square of 48 dp (Material's touch target; a toolbar action's
     size) centred on the glyph, 72 px here (1.5 px per dp: the 1080-wide 3x phone at half
     size; YouTube's cast, bell and magnifier sit exactly 72 px apart), clipped to the screen;
   - a floating action button: its visible circle;
   - a segmented pill button (YouTube's like): its segment, up to the divider;
   - a home-screen app: the launcher's tile and its label, 4 px around (both launch it).

2. ``rico-dev`` (``../shared/reference/rico-dev``; Rico traces from Screen2Vec, commit
   729fc4a): the 8 screens that ``rico_icon_targets.json`` does not use. Nodes are selected by
   ``rico_icon_targets``' own selection functions (imported, not copied: ``_is_target`` for
   controls, ``_row_icons`` for icons in clickable rows, ``position_words`` for the position,
   from the icon's box as that script does). Each description was written by eye from the
   screenshot (colour and shape words), never from content-desc or resource-id. What the
   rules give, screen by screen, is in ``RICO_SCREENS``. Two departures, both said in the
   JSON: (a) Fisher-Price 516's hierarchy is in its root's own 411x683 space (dp), not the
   README's 1440x2560: it is rescaled to 1440 before the size rules and scaled by
   screenshot width / 411 for the boxes (its toolbar buttons then match the picture); (b)
   Daily Reflections 88's six share-sheet app tiles, which ``rico_icon_targets`` step 6
   leaves out by eye ("app-icon tiles with their label under them, reached by text"), are
   kept as kind ``tile``, because a real planner does click app tiles by icon (source 1's
   Play Store and Settings steps); they are reported apart so they can be dropped.

Run: ``python benchmarks/fresh_icon_targets.py`` (needs ``../shared/reference``); it checks
every box against its screenshot and every v1 item against its run's ``data.json``.

May import: the standard library, PIL, benchmarks.rico_icon_targets, benchmarks.rico_folds,
mobile_agent.operations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from benchmarks.rico_folds import half_of  # noqa: E402
from benchmarks.rico_icon_targets import _first, _is_target, _nodes, _row_icons, position_words  # noqa: E402
from mobile_agent.operations import parse_action  # noqa: E402

REFERENCE = REPO.parent / "shared" / "reference"
RUNS = "mobile-agent-v1-runs"
RICO = "rico-dev"
OUT = HERE / "data" / "fresh_icon_targets.json"
DEV_SET = HERE / "data" / "rico_icon_targets.json"

# --- source 1: Mobile-Agent v1 runs ----------------------------------------------------------
# "<App>/<run>/<step>": (box [l, t, r, b] in screenshot pixels, kind, what the target is and how the box was drawn)
V1_TARGETS: dict[str, tuple[list[int], str, str]] = {
    "Google_Play/2/1": ([415, 628, 504, 745], "tile",
                        "the Play Store app on the home screen (Thought: open the Google Play Store); tile 422-497 x "
                        "632-707, label to y 741. The agent's 'bottom' is off: the tile is in the middle third"),
    "Notes/1/2": ([426, 942, 510, 1026], "control", "the yellow new-note button (circle, plus); its visible circle"),
    "Notes/1/4": ([455, 85, 527, 157], "control",
                  "the editor's save check mark (glyph 478-505 x 112-130); 72 px square on its centre"),
    "Notes/1/7": ([12, 84, 84, 156], "control", "the editor's back arrow (glyph 33-63 x 107-133); 72 px square"),
    "Notes/2/4": ([426, 942, 510, 1026], "control", "the yellow new-note button; its visible circle"),
    "Notes/2/6": ([455, 85, 527, 157], "control", "the editor's save check mark; 72 px square on its centre"),
    "Notes/3/2": ([426, 942, 510, 1026], "control", "the yellow new-note button (a white plus on it); its circle"),
    "Notes/3/4": ([455, 85, 527, 157], "control", "the editor's save check mark; 72 px square on its centre"),
    "Settings/2/1": ([39, 112, 122, 226], "tile",
                     "the Settings app on the home screen (a white gear on a dark grey tile, 43-118 x 116-192, label "
                     "to y 222). The agent's 'center' is off: it is at the top left"),
    "YouTube/1/2": ([468, 68, 540, 140], "control",
                    "YouTube's search button (glyph 489-519 x 89-118); 72 px square, clipped at the screen edge"),
    "YouTube/2/2": ([468, 68, 540, 140], "control", "YouTube's search button; 72 px square, clipped at the edge"),
    "YouTube/2/9": ([466, 611, 538, 683], "control",
                    "the comment's send button (paper plane glyph 486-515 x 633-660), right of the text field "
                    "(ends at x 462); 72 px square. The agent's 'center' is the middle row, right column"),
    "YouTube/3/2": ([468, 68, 540, 140], "control", "YouTube's search button; 72 px square, clipped at the edge"),
    "YouTube/3/7": ([15, 552, 130, 600], "control",
                    "the video's like button: the left segment of the like/dislike pill (15-192 x 552-600, "
                    "divider at x 130). The agent's 'bottom center' is off: it is the middle row, left"),
}  # fmt: skip
V1_EXCLUDED: dict[str, str] = {
    "Notes/1/5": "no check mark at the top right: the note was already saved (step 4), the toolbar shows share and "
    "three dots; the only check is the checklist tool's circled check at the bottom left, which is not what the "
    "agent meant (its Observation says 'the top right corner shows a checkmark icon')",
    "Notes/1/6": "the same screen as step 5 (share and three dots at the top right, no check mark): the described "
    "icon is not on the screen",
    "Notes/2/1": "the description is wrong: the agent meant the Notes app (Thought: launch the Notes app), whose "
    "tile is orange with a white pencil, not 'white background with orange'; it tapped Weather. No box is right "
    "for the words",
}

# --- source 2: the Rico screens the development set does not use ----------------------------
# screen -> what the selection rules give on it (written after running them, before any locator)
RICO_SCREENS: dict[str, str] = {
    "aa.apps.dailyreflections/trace_1/124.jpg": "none: a settings dialog; its two check boxes are CheckBox nodes, "
    "not images, in a list clickable as a whole",
    "aa.apps.dailyreflections/trace_1/88.jpg": "6 row icons: the share sheet's app tiles (kept as kind 'tile')",
    "adidas.app3/trace_0/89.jpg": "none: the logo is 719 px wide, LOG IN's arrow is 47 px and not clickable",
    "afzkl.development.mVideoPlayer/trace_0/21.jpg": "none: a What's New dialog; its 'i' is not clickable",
    "air.com.nbcuni.com.nbcsports.liveextra/trace_0/28.jpg": "none: one Next button with text",
    "air.com.nbcuni.com.nbcsports.liveextra/trace_0/42.jpg": "none: its check circles are not visible-to-user",
    "air.com.nbcuni.com.nbcsports.liveextra/trace_0/49.jpg": "none: the switches are rows with their team's text",
    "air.fisherprice.com.shapesAndColors/trace_0/516.jpg": "4 toolbar controls once its 411-wide hierarchy is "
    "rescaled; the heart's button holds the text '0' and is left out by the text-less rule",
}
# "screen@left,top" (the node's bounds in the hierarchy's own space) -> the description, written by eye
_DR88 = "aa.apps.dailyreflections/trace_1/88.jpg"
_FP516 = "air.fisherprice.com.shapesAndColors/trace_0/516.jpg"
RICO_VISUAL: dict[str, str] = {
    f"{_DR88}@138,1598": "blue square with a white f",
    f"{_DR88}@470,1598": "orange Cruise Critic badge with a blue band",
    f"{_DR88}@802,1598": "yellow smiley holding a GPS handset",
    f"{_DR88}@1134,1598": "green Android robot head",
    f"{_DR88}@138,2023": "blue circle with a white Bluetooth rune",
    f"{_DR88}@470,2023": "green speech bubble with a smiling face",
    f"{_FP516}@0,24": "red feather",
    f"{_FP516}@36,24": "white magnifier",
    f"{_FP516}@307,24": "white gift box",
    f"{_FP516}@375,24": "three white horizontal lines",
}


def v1_items(reference: Path = REFERENCE) -> tuple[list[dict], list[dict]]:
    """(targets, excluded) for every ``click icon`` step of the v1 runs."""
    items, excluded, seen = [], [], set()
    for data in sorted((reference / RUNS).glob("*/*/data.json")):
        run = data.parent.relative_to(reference / RUNS).as_posix()
        for step, record in sorted(json.loads(data.read_text()).items(), key=lambda kv: int(kv[0])):
            action = record.get("Action", "")
            if not action.lower().startswith("click icon"):
                continue
            key = f"{run}/{step}"
            seen.add(key)
            source = f"{RUNS}/{run}/data.json step {step}"
            if key in V1_EXCLUDED:
                excluded.append({"source": source, "action": action, "why": V1_EXCLUDED[key]})
                continue
            if key not in V1_TARGETS:
                raise SystemExit(f"{key}: {action!r} is neither labelled nor excluded: look at it")
            parsed = parse_action(action).params.model_dump()
            box, kind, note = V1_TARGETS[key]
            image = f"{RUNS}/{run}/{step}.jpg"
            width, height = Image.open(reference / image).size
            items.append({
                "image": image, "box": box, "description": parsed["icon"], "position": parsed["position"],
                "kind": kind, "source": source, "action": action, "size": [width, height],
                "grid_position": position_words(box, width, height), "note": note,
            })  # fmt: skip
    missing = (set(V1_TARGETS) | set(V1_EXCLUDED)) - seen
    if missing:
        raise SystemExit(f"labelled steps that are not click icon steps: {sorted(missing)}")
    return items, excluded


def rico_items(reference: Path = REFERENCE) -> list[dict]:
    """Targets on the Rico screens that the development set does not use, by its rules."""
    used = {item["image"] for item in json.loads(DEV_SET.read_text())["items"]}
    items = []
    for shot in sorted((reference / RICO).glob("*/*/*.jpg")):
        rel = shot.relative_to(reference / RICO).as_posix()
        if rel in used:
            continue
        if rel not in RICO_SCREENS:
            raise SystemExit(f"{rel}: a Rico screen outside the dev set that RICO_SCREENS does not name")
        items.extend(_screen_items(rel, shot))
    return items


def _screen_items(rel: str, shot: Path) -> list[dict]:
    root = json.loads(shot.with_suffix(".hierarchy.json").read_text())["activity"]["root"]
    space = root["bounds"][2] if root["bounds"][:2] == [0, 0] else 1440  # 516: 411 (dp); else 1440
    width, height = Image.open(shot).size
    _rescale(root, 1440 / space)  # the size rules read the README's 1440 space
    scale = width / 1440
    found = [(node, row, "tile", node["bounds"]) for node, row in _row_icons(root)]
    found += [(node, node["bounds"], "control", None) for node in _nodes(root) if _is_target(node)]
    items = []
    for node, bounds, kind, icon_bounds in found:
        original = node["_bounds"]
        phrase = RICO_VISUAL.get(f"{rel}@{original[0]},{original[1]}")
        if phrase is None:
            raise SystemExit(f"{rel}: node at {original} has no description by eye in RICO_VISUAL")
        box = [round(v * scale) for v in bounds]
        icon = [round(v * scale) for v in icon_bounds] if icon_bounds else None
        items.append({
            "image": f"{RICO}/{rel}", "box": box, "description": phrase,
            "position": position_words(icon or box, width, height), "kind": kind,
            "source": f"{RICO}/{rel}: hierarchy node {node.get('class')} at {original} "
                      f"(hierarchy space {space} wide); Rico via Screen2Vec 729fc4a",
            "size": [width, height], "half": half_of(rel),
            "content_desc": _first(node.get("content-desc")), "resource_id": node.get("resource-id"),
            "class": node.get("class"), **({"icon_box": icon} if icon else {}),
        })  # fmt: skip
    return items


def _rescale(root: dict, factor: float) -> None:
    """Every node's bounds times ``factor`` (the original kept as ``_bounds``)."""
    for node in _nodes(root):
        node["_bounds"] = list(node["bounds"])
        node["bounds"] = [v * factor for v in node["bounds"]]


def check(items: list[dict], reference: Path = REFERENCE) -> None:
    for item in items:
        width, height = Image.open(reference / item["image"]).size
        left, top, right, bottom = item["box"]
        inside = 0 <= left < right <= width and 0 <= top < bottom <= height
        if [width, height] != item["size"] or not inside:
            raise SystemExit(f"{item['source']}: box {item['box']} outside its {width}x{height} image")


def main() -> int:
    v1, excluded = v1_items()
    rico = rico_items()
    items = v1 + rico
    check(items)
    document = {
        "source": "mobile-agent-v1-runs (X-PLUG/MobileAgent 69efcb1 results/, MIT) and the rico-dev screens not in "
        "rico_icon_targets.json (Rico via Screen2Vec 729fc4a); both in ../shared/reference",
        "how": "built by benchmarks/fresh_icon_targets.py (its docstring: who, when, the box rule, the departures); "
        "v1 items: the agent's verbatim click icon action, box labelled by eye; rico items: rico_icon_targets' "
        "selection rules, description by eye, position = icon box centre on a 3x3 grid",
        "images_root": "../shared/reference (relative to the repository root)",
        "fields": {
            "image": "screenshot path relative to images_root",
            "box": "[left, top, right, bottom] in screenshot pixels: a tap inside it is right",
            "description": "what the planner called the icon (v1: the agent's words; rico: written by eye)",
            "position": "where the planner said it is (v1: the agent's words, even where they are off)",
            "kind": "control (a clickable icon), tile (an app's icon with its label: launcher or share sheet; "
            "the box holds both)",
            "source": "where the item comes from (run folder and step, or screen and hierarchy node)",
            "action": "v1 items: the agent's Action, verbatim",
            "size": "[width, height] of the screenshot",
            "grid_position": "v1 items: the box centre on the 3x3 grid (compare with the agent's position)",
            "half": "rico items: the fold half of the app (benchmarks/rico_folds.py)",
            "icon_box": "tile items from a hierarchy row: the icon's own box",
        },
        "excluded": excluded,
        "rico_screens": RICO_SCREENS,
        "items": items,
    }
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(items)} targets ({len(v1)} v1-runs, {len(rico)} rico-dev) on {len({i['image'] for i in items})} "
          f"screens, {len(excluded)} v1 steps excluded -> {OUT.relative_to(REPO)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
