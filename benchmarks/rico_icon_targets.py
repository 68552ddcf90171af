"""Build ``benchmarks/data/rico_icon_targets.json``: icon targets on real Rico screens.

How the set is made (run ``python benchmarks/rico_icon_targets.py`` to rebuild it):

1. Every screen under ``../shared/reference/rico-dev`` (Rico traces redistributed by the
   Screen2Vec repository, commit 729fc4a): walk its ``*.hierarchy.json``.
2. Keep nodes that are ``clickable`` and ``visible-to-user``, carry no text of their own,
   and are icon-sized: both sides 48..260 px in the hierarchy's 1440x2560 space. Also keep
   the action bar's "…, Navigate up" home-as-up group (a LinearLayout whose clickable box
   holds the up chevron, the app icon and the title: tapping any of it navigates up).
3. Scale bounds by screenshot width / 1440 (the README's rule).
4. Describe each one as a planner would, from how it looks on the screenshot: the
   ``VISUAL`` table below maps the node's ``content-desc`` (or, lacking one, its
   ``resource-id``) to a phrase written while looking at the crops (drawn with their box,
   2x, one sheet per 16 targets). Where one id draws two pictures on different screens
   (Stardoll's ``action_draw`` is a hamburger on top-level screens and a back chevron on
   detail screens), ``PER_SCREEN`` says which picture that screen shows.
5. Position words come from the box centre on a 3x3 grid of the screen (thirds): row
   top/center/bottom, column left/center/right, as "top right", "center left"...;
   the middle cell is "center".

Left out by eye: the channel logos of NBC Sports' schedule rows (``logo_area``: a brand
picture, not a control a planner would call an icon).

6. Row icons (``kind: "row"``): an icon-sized ``ImageView`` that is not clickable itself but
   sits in a clickable row (a drawer entry, a settings line, a schedule row): the planner
   sees a glyph, the phone acts on the row. The right box is the row: the clickable
   ancestor when it is at most 3x the icon's height, else the largest ancestor under it
   that is (a ListView clickable as a whole still has one row per entry), else the icon.
   Each is described by eye in ``ROW_VISUAL`` (keyed by screen and the icon's
   hierarchy-space top-left corner, as many rows share one id). Left out: the browser's
   favicon and lock, a dialog's X and the hamburger's bars (their clickable parent is
   already a target: "globe with a lock", "red X", "white hamburger menu"),
   the action bar's up/home pictures (the Navigate-up group is one), brand logos and
   thumbnails, app-icon tiles with their label under them (reached by text), and a
   20-px badge.

May import: the standard library and PIL.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RICO = REPO.parent / "shared" / "reference" / "rico-dev"
OUT = HERE / "data" / "rico_icon_targets.json"

# content-desc or resource-id -> how the icon looks, as a planner would name it
VISUAL: dict[str, str] = {
    "Previous month": "black left chevron",
    "Next month": "black right chevron",
    "More options": "three vertical dots",
    "Navigate up": "back arrow",
    "Add": "grey plus in a circle",
    "android:id/button1@295": "white list icon",  # dialog action drawn as three stacked bars
    "android:id/button1@357": "red X",
    "Rescan": "white refresh arrows",
    "Page info": "globe with a lock",
    "Page manager": "white stack of tabs",
    "Back": "white back arrow",
    "Switch between entering text and numbers": "white dial pad of dots",
    "Cast": "cast icon",
    "air.com.nbcuni.com.nbcsports.liveextra:id/menu_btn": "white hamburger menu",
    "Stop page load": "white X",
    "air.com.stardoll.access:id/action_draw": "purple three lines",
    "air.com.stardoll.access:id/action_cancel": "purple X",
    "air.com.tinychat.mobile:id/signinf_facebook_action": "white Facebook f",
    "air.com.tinychat.mobile:id/signinf_twitter_action": "white Twitter bird",
}
# screen -> {key: phrase} where one id draws a different picture on that screen
PER_SCREEN: dict[str, dict[str, str]] = {
    "air.com.stardoll.access/trace_0/215.jpg": {"air.com.stardoll.access:id/action_draw": "purple back chevron"},
    "air.com.stardoll.access/trace_0/2791.jpg": {"air.com.stardoll.access:id/action_draw": "purple back chevron"},
    "air.com.stardoll.access/trace_0/2962.jpg": {"air.com.stardoll.access:id/action_draw": "purple back chevron"},
}
LEFT_OUT = {"air.com.nbcuni.com.nbcsports.liveextra:id/logo_area"}
# row icons: "screen@left,top" (hierarchy space) -> how the glyph looks
_MVP = "afzkl.development.mVideoPlayer/trace_0"
_NBC = "air.com.nbcuni.com.nbcsports.liveextra/trace_0"
_SD = "air.com.stardoll.access/trace_0"
ROW_VISUAL: dict[str, str] = {
    f"{_MVP}/2606.jpg@77,280": "grey magnifier",
    f"{_MVP}/2606.jpg@77,450": "grey picture icon",
    f"{_MVP}/2606.jpg@77,620": "grey play triangle in a square",
    f"{_MVP}/2606.jpg@77,790": "grey wrench",
    f"{_MVP}/295.jpg@213,710": "blue folder",
    f"{_MVP}/357.jpg@4,339": "grey folder",
    f"{_MVP}/747.jpg@572,2252": "white play triangle",
    f"{_NBC}/32.jpg@1142,1464": "white check mark in a circle",
    f"{_NBC}/32.jpg@1142,1667": "white check mark in a circle",
    **{f"{_NBC}/868.jpg@52,{top}": "yellow play button" for top in (865, 1167, 1469, 1771, 2073, 2375)},
    **{f"{_NBC}/95.jpg@25,{top}": "yellow play circle" for top in (531, 1269, 2007)},
    **{f"{_SD}/{n}.jpg@35,{top}": phrase for n in (1123, 2432) for top, phrase in (
        (503, "white gear"), (630, "white i in a circle"), (757, "white speech bubble"),
        (884, "white envelope"), (1011, "white person outline"))},
}

_ROWS = ("top", "center", "bottom")
_COLUMNS = ("left", "center", "right")


def position_words(box: list[int], width: int, height: int) -> str:
    """'top right', 'center left', 'center'... from the box centre on a 3x3 grid."""
    cx = (box[0] + box[2]) / 2 / width
    cy = (box[1] + box[3]) / 2 / height
    row = _ROWS[min(2, int(cy * 3))]
    column = _COLUMNS[min(2, int(cx * 3))]
    if row == column == "center":
        return "center"
    return f"{row} {column}"


def _nodes(node: dict | None):
    if node is None:
        return
    yield node
    for child in node.get("children") or []:
        yield from _nodes(child)


def _first(value):
    return value[0] if isinstance(value, list) and value else value


def _is_target(node: dict) -> bool:
    if not (node.get("clickable") and node.get("visible-to-user")):
        return False
    left, top, right, bottom = node["bounds"]
    desc = _first(node.get("content-desc")) or ""
    if desc.endswith("Navigate up"):
        return right > left and bottom > top
    return 48 <= right - left <= 260 and 48 <= bottom - top <= 260 and not (node.get("text") or "").strip()


def _row_icons(root: dict) -> list[tuple[dict, list[int]]]:
    """(icon node, row bounds) for icon-sized, unclickable images in a clickable row (step 6)."""
    found = []

    def walk(node: dict | None, ancestors: list[dict]) -> None:
        if node is None:
            return
        left, top, right, bottom = node["bounds"]
        if (
            node.get("visible-to-user") and "Image" in (node.get("class") or "") and not node.get("clickable")
            and 48 <= right - left <= 260 and 48 <= bottom - top <= 260
        ):  # fmt: skip
            clickable = [i for i, a in enumerate(ancestors) if a.get("clickable")]
            if clickable:
                limit = 3 * (bottom - top)
                under = ancestors[clickable[-1]:]
                rows = [a["bounds"] for a in under if a["bounds"][3] - a["bounds"][1] <= limit]
                found.append((node, rows[0] if rows else node["bounds"]))
        for child in node.get("children") or []:
            walk(child, [*ancestors, node])

    walk(root, [])
    return found


def build(rico: Path = RICO) -> list[dict]:
    items = []
    for shot in sorted(rico.glob("*/*/*.jpg")):
        rel = shot.relative_to(rico).as_posix()
        hierarchy = json.loads(shot.with_suffix(".hierarchy.json").read_text())
        width, height = Image.open(shot).size
        scale = width / 1440
        for node, row in _row_icons(hierarchy["activity"]["root"]):
            phrase = ROW_VISUAL.get(f"{rel}@{node['bounds'][0]},{node['bounds'][1]}")
            if phrase is None:
                continue  # left out by eye (step 6)
            box = [round(v * scale) for v in row]
            icon = [round(v * scale) for v in node["bounds"]]
            items.append(
                {
                    "image": rel,
                    "box": box,
                    "icon_box": icon,
                    "description": phrase,
                    "position": position_words(icon, width, height),
                    "kind": "row",
                    "content_desc": _first(node.get("content-desc")),
                    "resource_id": node.get("resource-id"),
                    "class": node.get("class"),
                }
            )
        for node in _nodes(hierarchy["activity"]["root"]):
            if not _is_target(node):
                continue
            desc = _first(node.get("content-desc"))
            rid = node.get("resource-id")
            if rid in LEFT_OUT:
                continue
            key = "Navigate up" if desc and desc.endswith("Navigate up") else desc or rid
            screen_key = f"{rid}@{shot.stem}"
            phrase = PER_SCREEN.get(rel, {}).get(key) or VISUAL.get(screen_key) or VISUAL.get(key)
            if phrase is None:
                raise SystemExit(f"no visual description for {key!r} on {rel}: look at it and add one to VISUAL")
            box = [round(v * scale) for v in node["bounds"]]
            items.append(
                {
                    "image": rel,
                    "box": box,
                    "description": phrase,
                    "position": position_words(box, width, height),
                    "kind": "control",
                    "content_desc": desc,
                    "resource_id": rid,
                    "class": node.get("class"),
                }
            )
    return items


def main() -> int:
    items = build()
    OUT.parent.mkdir(exist_ok=True)
    document = {
        "source": "Rico traces (Screen2Vec repository, commit 729fc4a, UI_embedding/dataset/data), "
        "screens in ../shared/reference/rico-dev; boxes from the view hierarchy scaled to the screenshot",
        "how": "built by benchmarks/rico_icon_targets.py: clickable, visible, text-less, icon-sized nodes "
        "(+ action-bar Navigate-up groups) and icons in clickable rows (box: the row); descriptions written by looking at each crop (VISUAL table); "
        "position = box centre on a 3x3 grid",
        "images_root": "../shared/reference/rico-dev (relative to the repository root)",
        "fields": {
            "image": "screenshot path relative to images_root",
            "box": "[left, top, right, bottom] in screenshot pixels: a tap inside it is right",
            "description": "what a planner would call the icon",
            "position": "where a planner would say it is",
            "kind": "control (a clickable icon) or row (an icon in a clickable row; box is the row)",
            "icon_box": "row targets: the icon's own box",
        },
        "items": items,
    }
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(items)} icon targets on {len({i['image'] for i in items})} screens -> {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
