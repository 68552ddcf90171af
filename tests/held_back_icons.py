"""Checks shared by the held-back icon sets (``benchmarks/data/fresh2_icon_targets.json``,
``fresh3_icon_targets.json``; issue 30): each set's screenshots are committed beside it in
``benchmarks/data/<name>/``, so every check runs here without a locator.

Each function takes the set's name (``fresh2``, ``fresh3``) and the licences it allows, and asserts.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
PLACEMENTS = {"toolbar", "row", "fab", "bottom-nav", "panel"}
COMMIT = re.compile(r"^[0-9a-f]{40}$")


def document(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"{name}_icon_targets.json").read_text())
    return loaded


def every_screenshot_opens_at_its_size_and_holds_its_boxes(name: str) -> None:
    doc = document(name)
    images_root = ROOT / doc["images_root"].split(" ")[0]
    sizes: dict[str, list[int]] = {}
    for image_name in doc["images"]:
        with Image.open(images_root / image_name) as image:
            image.load()
            sizes[image_name] = list(image.size)
    for item in doc["items"]:
        size = sizes[item["image"]]
        assert item["size"] == size == doc["images"][item["image"]]["size"], item
        left, top, right, bottom = item["box"]
        assert 0 <= left < right <= size[0] and 0 <= top < bottom <= size[1], item


def the_set_is_wide_enough(name: str) -> None:
    items = document(name)["items"]
    per_app = Counter(item["app"] for item in items)
    assert len(items) >= 40
    assert len(per_app) >= 8
    assert max(per_app.values()) <= 8, per_app
    placements = Counter(item["placement"] for item in items)
    assert set(placements) == PLACEMENTS, placements  # toolbar, row, fab, bottom-nav and panel icons
    assert len({(item["image"], tuple(item["box"])) for item in items}) == len(items)  # no target twice


def every_item_is_described_and_sourced(name: str, licenses: set[str]) -> None:
    doc = document(name)
    for item in doc["items"]:
        image = doc["images"][item["image"]]
        assert item["image"].startswith(f"{name}/"), item
        assert item["description"].strip() and item["position"].strip(), item
        assert item["kind"] == "control" and item["placement"] in PLACEMENTS, item
        assert item["app"] == image["app"] and item["license"] == image["license"] in licenses, item
        assert COMMIT.match(item["commit"]) and item["commit"] == image["commit"], item
        assert (
            item["source_url"]
            == image["source_url"]
            == (f"{image['repository']}/blob/{image['commit']}/{image['path']}")
        ), item
        assert image["license_url"].startswith(f"{image['repository']}/blob/{image['commit']}/"), image


def the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources(name: str) -> None:
    doc = document(name)
    folder = DATA / name
    files = {
        path.relative_to(folder.parent).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and path.name != "README.md" and path.parent.name != "LICENSES"
    }
    assert files == set(doc["images"])
    assert files == {item["image"] for item in doc["items"]}  # no screenshot without a target
    readme = (folder / "README.md").read_text()
    for image_name, image in doc["images"].items():
        assert image_name.removeprefix(f"{name}/") in readme, image_name
        assert image["repository"] in readme and image["license"] in readme, image_name
        app = image_name.split("/")[1]
        assert (folder / "LICENSES" / f"{app}.txt").read_text().strip(), image_name  # the licence, verbatim
    assert sum(path.stat().st_size for path in folder.rglob("*")) < 8 * 1024 * 1024


def exclusions_say_why(name: str) -> None:
    excluded = document(name)["excluded"]
    assert excluded
    assert all(entry["source"].strip() and len(entry["why"]) > 30 for entry in excluded)


def no_app_of_an_earlier_set(name: str, earlier: list[str]) -> None:
    """A held-back set is of apps the earlier sets do not hold (by repository)."""
    repositories = {image["repository"] for image in document(name)["images"].values()}
    for other in earlier:
        shared = repositories & {image["repository"] for image in document(other)["images"].values()}
        assert not shared, (other, shared)
