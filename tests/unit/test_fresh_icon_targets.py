"""The fresh held-back icon set (``benchmarks/data/fresh_icon_targets.json``, issue 30) is sound.

Every item has a box inside its screenshot and a source that can be checked: a Mobile-Agent v1
item's description and position are the agent's own verbatim ``Action`` as the product's parser
splits it (the runs' ``data.json`` files are committed in tests/data/mobile-agent-v1-runs); every
``click icon`` step of those runs is a target or excluded with a reason; no screen is one of the
development set's (``rico_icon_targets.json``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from mobile_agent.operations import parse_action

ROOT = Path(__file__).resolve().parents[2]
FRESH = ROOT / "benchmarks" / "data" / "fresh_icon_targets.json"
DEV_SET = ROOT / "benchmarks" / "data" / "rico_icon_targets.json"
RUNS = ROOT / "tests" / "data" / "mobile-agent-v1-runs"  # the runs' data.json files, committed
IMAGES = ROOT.parent / "shared" / "reference"  # the screenshots, beside the checkout (as benchmarks read)
V1_SOURCE = re.compile(r"^mobile-agent-v1-runs/(\w+/\d)/data\.json step (\d+)$")


def _document() -> dict:
    return json.loads(FRESH.read_text())


def _items() -> list[dict]:
    return _document()["items"]


def test_the_set_loads_with_both_sources() -> None:
    items = _items()
    assert len(items) >= 20
    assert {i["image"].split("/", 1)[0] for i in items} == {"mobile-agent-v1-runs", "rico-dev"}
    for item in items:
        assert item["description"].strip() and item["position"].strip(), item
        assert item["kind"] in ("control", "tile"), item
        assert item["source"].startswith(item["image"].split("/", 1)[0]), item


def test_every_box_lies_inside_its_image() -> None:
    for item in _items():
        width, height = item["size"]
        left, top, right, bottom = item["box"]
        assert 0 <= left < right <= width and 0 <= top < bottom <= height, item
        if "icon_box" in item:  # a row's icon sits inside the row
            il, it, ir, ib = item["icon_box"]
            assert left <= il < ir <= right and top <= it < ib <= bottom, item


@pytest.mark.skipif(not IMAGES.is_dir(), reason=f"screenshots not here: {IMAGES} (beside the checkout)")
def test_the_recorded_sizes_are_the_screenshots() -> None:
    for item in _items():
        assert list(Image.open(IMAGES / item["image"]).size) == item["size"], item["image"]


def test_v1_items_are_the_agents_verbatim_words() -> None:
    v1 = [i for i in _items() if i["image"].startswith("mobile-agent-v1-runs/")]
    assert len(v1) >= 10
    for item in v1:
        match = V1_SOURCE.match(item["source"])
        assert match, item["source"]
        run, step = match.groups()
        assert item["image"] == f"mobile-agent-v1-runs/{run}/{step}.jpg"
        recorded = json.loads((RUNS / run / "data.json").read_text())[step]["Action"]
        assert item["action"] == recorded
        params = parse_action(recorded).params.model_dump()
        assert (item["description"], item["position"]) == (params["icon"], params["position"])


def test_every_click_icon_step_is_a_target_or_excluded_with_a_reason() -> None:
    document = _document()
    steps = {
        f"mobile-agent-v1-runs/{data.parent.relative_to(RUNS).as_posix()}/data.json step {step}"
        for data in RUNS.glob("*/*/data.json")
        for step, record in json.loads(data.read_text()).items()
        if record.get("Action", "").lower().startswith("click icon")
    }
    targets = {i["source"] for i in document["items"] if i["image"].startswith("mobile-agent-v1-runs/")}
    excluded = {e["source"] for e in document["excluded"]}
    assert len(steps) == 17
    assert targets | excluded == steps and not targets & excluded
    assert all(len(e["why"]) > 40 for e in document["excluded"])


def test_no_screen_is_the_development_sets() -> None:
    used = {i["image"] for i in json.loads(DEV_SET.read_text())["items"]}
    rico = [i for i in _items() if i["image"].startswith("rico-dev/")]
    assert rico
    for item in rico:
        assert item["image"].removeprefix("rico-dev/") not in used, item["image"]
        assert item["half"] in ("A", "B")
        # written by eye, not from the node's names
        for name in (item["content_desc"], item["resource_id"]):
            assert not name or name.rsplit("/", 1)[-1].lower() not in item["description"].lower()
