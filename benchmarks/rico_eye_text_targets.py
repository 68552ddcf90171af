"""Build ``benchmarks/data/rico_eye_text_targets.json``: text targets written by eye.

The Rico text set (``rico-dev/targets.json``) takes every target from the view
hierarchy's own texts, so a locator that reads the same hierarchy finds them by
construction. These are written the way a planner writes them: by looking at each
screenshot (drawn 440 px wide, four to a sheet) and naming what it shows, in the case and
spelling it shows (``CANCEL`` where the button says CANCEL, ``Rocket League® - Dropshot
Trailer``), without opening the hierarchy. Only then is the hierarchy read, for the
ground truth: the visible nodes whose text or content-desc is the phrase (folded: case,
spaces and punctuation aside; or a rapidfuzz ratio >= 90 against it), and each one's
clickable ancestor (a tap there does the same). A phrase the tree does not hold is kept
with no truth and counted apart ("not in the tree": a WebView, a canvas), so the table
shows what the tree misses.

Phrases the tree does not hold (a WebView's page, a calendar drawn on a canvas, an
input's hint), or holds only in a panel-sized node (an empty list's message), get their
truth by hand in ``HAND``: the box
around the words on the screenshot (taken from an OCR read, then each checked by eye on
its crop; two boxes where the screen shows the words twice, as Walmart's "Cheerios" link
under its picture). Those the tree does not hold are marked ``in_tree: false``.

Left out by eye: the Walmart pages still loading (screens 177 and 442: only a URL bar),
and the Fisher-Price screen (an ad's text only).

Run ``python benchmarks/rico_eye_text_targets.py`` to rebuild. May import: the standard
library, rapidfuzz, PIL.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image
from rapidfuzz import fuzz

HERE = Path(__file__).resolve().parent
RICO = HERE.parent.parent / "shared" / "reference" / "rico-dev"
OUT = HERE / "data" / "rico_eye_text_targets.json"

_D, _M, _N, _S, _W = ("aa.apps.dailyreflections/trace_1", "afzkl.development.mVideoPlayer/trace_0",
                      "air.com.nbcuni.com.nbcsports.liveextra/trace_0", "air.com.stardoll.access/trace_0",
                      "air.com.readysquare.scsm/trace_0")  # fmt: skip
# screen -> what a planner would name on it, read off the screenshot
EYE: dict[str, tuple[str, ...]] = {
    f"{_D}/124.jpg": ("Text Size", "Window Transparency", "Enable Reminders", "Sobriety Time", "Notifications"),
    f"{_D}/35.jpg": ("CANCEL", "OK", "April 2017", "17"),
    f"{_D}/88.jpg": ("Facebook", "Bluetooth", "Messaging", "Android Beam"),
    f"{_D}/93.jpg": ("SOBRIETY TIME", "DAILY REFLECTION", "Daily Reflections"),
    "adidas.app3/trace_0/89.jpg": ("LOG IN", "I FORGOT MY PASSCODE", "I DO NOT HAVE A PASSCODE"),
    f"{_M}/21.jpg": ("OK", "What's New in 4.2.0?"),
    f"{_M}/220.jpg": ("File Sources", "No Folders"),
    f"{_M}/2606.jpg": ("Video Identification", "Media Browser", "Advanced", "Video Player"),
    f"{_M}/295.jpg": ("Cancel", "OK", "File Browser"),
    f"{_M}/3362.jpg": ("mVideoPlayer", "Movies", "No Movies"),
    f"{_M}/357.jpg": ("UNIT121", "Folders"),
    f"{_M}/747.jpg": ("PLAY", "Last Played", "Automatic Playlist"),
    f"{_M}/965.jpg": ("Show/Hide Tabs", "Default Tab", "Skip Video Info Screen", "Use another Video Player"),
    "air.com.adobe.connectpro/trace_1/117.jpg": ("Search Adobe Support", "Adobe Connect for mobile Help"),
    "air.com.interactech.moovz/trace_1/625.jpg": ("ALL CONTACTS", "FREQUENTS"),
    "air.com.launchday.mobile.rocketleague/trace_0/179.jpg": ("Rocket League® - Dropshot Trailer", "YouTube",
                                                              "Jon Sandman"),
    f"{_N}/28.jpg": ("NEXT", "WELCOME TO NBC SPORTS!"),
    f"{_N}/32.jpg": ("CSN CALIFORNIA", "CSN BAY AREA", "NO"),
    f"{_N}/42.jpg": ("CSN PHILLY", "CSN NEW ENGLAND", "SNY"),
    f"{_N}/49.jpg": ("BULLS", "WHITE SOX", "NEXT"),
    f"{_N}/593.jpg": ("SELECT PROVIDER", "NBC Sports"),
    f"{_N}/868.jpg": ("WATCH GOLF CHANNEL LIVE", "CSN PHILLY LIVE", "nbc-csn-california"),
    f"{_N}/95.jpg": ("FEATURED", "REPLAYS", "HIGHLIGHTS", "LIVE & UPCOMING"),
    f"{_W}/1098.jpg": ("Sort & Refine", "Cheerios", "2-Day Shipping", "Introducing FREE 2-Day Shipping"),
    f"{_W}/656.jpg": ("Jewelry Gifts", "Wedding Bands", "Earrings", "Sort & Refine"),
    f"{_S}/1123.jpg": ("News", "Chat", "Messages", "Friend Requests", "LOG IN"),
    f"{_S}/1398.jpg": ("Username", "Password", "Log In"),
    f"{_S}/215.jpg": ("Buy all", "Stardoll Featuring"),
    f"{_S}/2254.jpg": ("News",),
    f"{_S}/2432.jpg": ("Add Stardollars", "Messages"),
    f"{_S}/2791.jpg": ("Buy all", "PPQ", "Animal Print Dress"),
    f"{_S}/2962.jpg": ("Buy", "Nelly Pt. 2"),
    f"{_S}/54.jpg": ("News",),
    "air.com.tinychat.mobile/trace_0/48.jpg": ("SIGN IN", "GUEST", "SIGN UP"),
}

# (screen, phrase) -> boxes by hand, for phrases the tree does not hold (docstring)
HAND: dict[tuple[str, str], list[list[int]]] = {
    (f"{_D}/35.jpg", "April 2017"): [[446, 607, 636, 662]],
    (f"{_D}/35.jpg", "17"): [[325, 1142, 384, 1193]],
    (f"{_M}/220.jpg", "No Folders"): [[212, 463, 327, 493]],
    (f"{_M}/3362.jpg", "No Movies"): [[214, 464, 325, 496]],
    ("air.com.adobe.connectpro/trace_1/117.jpg", "Search Adobe Support"): [[45, 336, 218, 359]],
    ("air.com.adobe.connectpro/trace_1/117.jpg", "Adobe Connect for mobile Help"): [[20, 228, 411, 261]],
    ("air.com.launchday.mobile.rocketleague/trace_0/179.jpg", "Rocket League® - Dropshot Trailer"): [[37, 969, 769, 1022]],
    ("air.com.launchday.mobile.rocketleague/trace_0/179.jpg", "YouTube"): [[139, 229, 313, 284]],
    ("air.com.launchday.mobile.rocketleague/trace_0/179.jpg", "Jon Sandman"): [[371, 1581, 579, 1622]],
    (f"{_W}/1098.jpg", "Sort & Refine"): [[794, 542, 999, 584]],
    (f"{_W}/1098.jpg", "Cheerios"): [[483, 796, 606, 847], [465, 985, 616, 1032]],
    (f"{_W}/1098.jpg", "2-Day Shipping"): [[60, 984, 313, 1038], [362, 1556, 638, 1613]],
    (f"{_W}/1098.jpg", "Introducing FREE 2-Day Shipping"): [[268, 432, 808, 484]],
    (f"{_W}/656.jpg", "Jewelry Gifts"): [[11, 994, 243, 1046]],
    (f"{_W}/656.jpg", "Wedding Bands"): [[230, 1295, 460, 1336]],
    (f"{_W}/656.jpg", "Earrings"): [[512, 1295, 632, 1338]],
    (f"{_W}/656.jpg", "Sort & Refine"): [[842, 536, 1062, 584]],
    (f"{_S}/1398.jpg", "Username"): [[44, 371, 165, 404]],
    (f"{_S}/1398.jpg", "Password"): [[46, 436, 161, 467]],
}


def _fold(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def _walk(node: dict | None, ancestors: list[dict]):
    if node is None:
        return
    yield node, ancestors
    for child in node.get("children") or []:
        yield from _walk(child, [*ancestors, node])


def _label(node: dict) -> str:
    desc = node.get("content-desc")
    desc = desc[0] if isinstance(desc, list) and desc else desc
    return (node.get("text") or "").strip() or (desc or "").strip()


def truth_boxes(hierarchy: dict, phrase: str, scale: float, screen_area: float) -> tuple[bool, list[list[int]]]:
    """Whether a visible node holds ``phrase``, and the boxes (screenshot pixels) where a tap
    on it is right: each matching node, and its nearest clickable ancestor, when no panel
    (<= 25% of the screen: an empty list's "No Folders" fills the list; then by hand)."""
    wanted = _fold(phrase)
    boxes: list[list[int]] = []
    held = False
    for node, ancestors in _walk(hierarchy["activity"]["root"], []):
        left, top, right, bottom = node["bounds"]
        label = _fold(_label(node))
        if not (node.get("visible-to-user") and right > left and bottom > top and label):
            continue
        if label != wanted and fuzz.ratio(label, wanted) < 90:
            continue
        held = True
        for candidate in [node, *[a for a in reversed(ancestors) if a.get("clickable")][:1]]:
            b = [round(v * scale) for v in candidate["bounds"]]
            if (b[2] - b[0]) * (b[3] - b[1]) <= 0.25 * screen_area and b not in boxes:
                boxes.append(b)
    return held, boxes


def build(rico: Path = RICO) -> list[dict]:
    items = []
    for image, phrases in EYE.items():
        shot = rico / image
        width, height = Image.open(shot).size
        hierarchy = json.loads(shot.with_suffix(".hierarchy.json").read_text())
        for phrase in phrases:
            in_tree, boxes = truth_boxes(hierarchy, phrase, width / 1440, width * height)
            if not boxes:
                boxes = HAND[(image, phrase)]  # a KeyError: a new phrase without a box wants one by hand
            items.append({"image": image, "text": phrase, "boxes": boxes, "in_tree": in_tree})
    return items


def main() -> int:
    items = build()
    document = {
        "source": "Rico traces (Screen2Vec repository, commit 729fc4a), screens in ../shared/reference/rico-dev",
        "how": "benchmarks/rico_eye_text_targets.py: phrases written by looking at the screenshots; truth from "
        "the hierarchy afterwards (matching nodes and their clickable ancestors); in_tree false: boxes by hand",
        "images_root": "../shared/reference/rico-dev (relative to the repository root)",
        "items": items,
    }
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    silent = sum(1 for i in items if not i["in_tree"])
    print(f"{len(items)} text targets by eye on {len(EYE)} screens, {silent} not in the tree -> {OUT.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
