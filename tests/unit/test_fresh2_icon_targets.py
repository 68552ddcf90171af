"""The second held-back icon set (``benchmarks/data/fresh2_icon_targets.json``, issue 30) is sound.

Its screenshots are committed beside it (``benchmarks/data/fresh2/``), so every check runs here:
each screenshot opens at its recorded size and holds every box drawn on it; the set is wide enough
to measure on (at least 40 targets, at least 8 apps, no app over 8); every screenshot names where
it was published, at which commit, and under which licence; the folder's README names each one and
LICENSES/ holds each repository's licence file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "benchmarks" / "data" / "fresh2_icon_targets.json"
FOLDER = ROOT / "benchmarks" / "data" / "fresh2"
PERMISSIVE = {"MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"}
PLACEMENTS = {"toolbar", "row", "fab", "bottom-nav", "panel"}
COMMIT = re.compile(r"^[0-9a-f]{40}$")


def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SET.read_text())
    return document


def test_every_screenshot_opens_at_its_size_and_holds_its_boxes() -> None:
    document = _document()
    images_root = ROOT / document["images_root"].split(" ")[0]
    sizes: dict[str, list[int]] = {}
    for name in document["images"]:
        with Image.open(images_root / name) as image:
            image.load()
            sizes[name] = list(image.size)
    for item in document["items"]:
        size = sizes[item["image"]]
        assert item["size"] == size == document["images"][item["image"]]["size"], item
        left, top, right, bottom = item["box"]
        assert 0 <= left < right <= size[0] and 0 <= top < bottom <= size[1], item


def test_the_set_is_wide_enough() -> None:
    items = _document()["items"]
    per_app = Counter(item["app"] for item in items)
    assert len(items) >= 40
    assert len(per_app) >= 8
    assert max(per_app.values()) <= 8, per_app
    placements = Counter(item["placement"] for item in items)
    assert set(placements) == PLACEMENTS, placements  # toolbar, row, fab, bottom-nav and panel icons
    assert len({(item["image"], tuple(item["box"])) for item in items}) == len(items)  # no target twice


def test_every_item_is_described_and_sourced() -> None:
    document = _document()
    for item in document["items"]:
        image = document["images"][item["image"]]
        assert item["image"].startswith("fresh2/"), item
        assert item["description"].strip() and item["position"].strip(), item
        assert item["kind"] == "control" and item["placement"] in PLACEMENTS, item
        assert item["app"] == image["app"] and item["license"] == image["license"] in PERMISSIVE, item
        assert COMMIT.match(item["commit"]) and item["commit"] == image["commit"], item
        assert (
            item["source_url"]
            == image["source_url"]
            == (f"{image['repository']}/blob/{image['commit']}/{image['path']}")
        ), item
        assert image["license_url"].startswith(f"{image['repository']}/blob/{image['commit']}/"), image


def test_the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources() -> None:
    document = _document()
    files = {
        path.relative_to(FOLDER.parent).as_posix()
        for path in FOLDER.rglob("*")
        if path.is_file() and path.name != "README.md" and path.parent.name != "LICENSES"
    }
    assert files == set(document["images"])
    assert files == {item["image"] for item in document["items"]}  # no screenshot without a target
    readme = (FOLDER / "README.md").read_text()
    for name, image in document["images"].items():
        assert name.removeprefix("fresh2/") in readme, name
        assert image["repository"] in readme and image["license"] in readme, name
        app = name.split("/")[1]
        assert (FOLDER / "LICENSES" / f"{app}.txt").read_text().strip(), name  # the licence, verbatim
    assert sum(path.stat().st_size for path in FOLDER.rglob("*")) < 8 * 1024 * 1024


def test_exclusions_say_why() -> None:
    excluded = _document()["excluded"]
    assert excluded
    assert all(entry["source"].strip() and len(entry["why"]) > 30 for entry in excluded)
