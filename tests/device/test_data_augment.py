"""Augmentation on the simulated phone over adb: `data collect --augment` runs each instance
as each variant (themes by `cmd uimode night`, screen sizes by `wm size`, phones of other
profiles), every variant passes the family's validator, the exported screenshots really
differ (size, brightness, phone), the export keeps the variants apart and the card counts
them; the coordinate targets of a resized screen still land on perception's box."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eval.data_engine.variants import expand, parse_sizes, task_for_id, variant_of
from eval.families import FAMILIES, sample_instances
from mobile_agent.planner.dialects import make_dialect, profile_named
from mobile_agent.planner.geometry import viewport_for

pytestmark = pytest.mark.slow


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _env(monkeypatch, adb_server) -> None:
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__BASE_URL", raising=False)
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__API_KEY", raising=False)


def test_variants_name_their_runs_and_keep_the_family_setup_last():
    tasks, pinned = expand(sample_instances(families=["notes-create", "settings-theme"], seeds=[3]),
                           ["themes", "sizes"], sizes=parse_sizes("720x1600"))  # fmt: skip
    ids = sorted(t.id for t in tasks)
    assert ids == sorted(["notes-create-s3-v-light-1", "notes-create-s3-v-light-720x1600-1",
                          "notes-create-s3-v-dark-1", "notes-create-s3-v-dark-720x1600-1",
                          "settings-theme-s3-1", "settings-theme-s3-v-720x1600-1"])  # fmt: skip
    assert pinned == {}
    dark = next(t for t in tasks if t.id == "notes-create-s3-v-dark-720x1600-1")
    assert dark.setup[:2] == [["cmd", "uimode", "night", "yes"], ["wm", "size", "720x1600"]]
    theme = next(t for t in tasks if t.id == "settings-theme-s3-1")  # its own theme set-up, after the reset of the size
    assert theme.setup == [["wm", "size", "reset"], *FAMILIES["settings-theme"].instance(3).setup]
    assert variant_of(dark.id) == "dark-720x1600" and variant_of("notes-create-s3-1") == ""
    back = task_for_id(dark.id)
    assert back is not None and back.id == dark.id and back.params == dark.params
    with pytest.raises(ValueError, match="unknown augmentation"):
        expand(tasks, ["colours"])
    with pytest.raises(ValueError, match="WxH"):
        parse_sizes("720-1600")


def test_collect_themes_and_sizes_end_to_end(adb_server, sim_phone, tmp_path, monkeypatch, capsys):
    from mobile_agent.cli import main

    _env(monkeypatch, adb_server)
    out = tmp_path / "data"
    argv = ["data", "collect", "--family", "google-maps-search", "--seeds", "0:1", "--augment", "themes,sizes",
            "--sizes", "720x1600", "--device", sim_phone.serial, "--output", str(out), "--dialect", "paper,ui_tars,autoglm"]
    assert main(argv) == 0
    runs = {r["variant"]: r for r in _lines(out / "dataset" / "runs.jsonl")}
    assert sorted(runs) == ["dark", "dark-720x1600", "light", "light-720x1600"]  # all four verified and kept
    assert len({tuple(r["actions"]) for r in runs.values()}) == 1  # same actions: only the variant tells them apart
    sizes, light = {}, {}
    for variant, run in runs.items():
        with Image.open(out / "dataset" / run["files"][0]) as first:
            sizes[variant] = first.size
            light[variant] = float(np.asarray(first.convert("L")).mean())
    assert sizes == {"dark": (1080, 2400), "light": (1080, 2400), "dark-720x1600": (720, 1600),
                     "light-720x1600": (720, 1600)}  # fmt: skip
    assert light["dark"] < light["light"] - 40 and light["dark-720x1600"] < light["light-720x1600"] - 40
    card = (out / "dataset" / "README.md").read_text()
    assert all(f"| {v} | 1 |" in card for v in runs)
    # UI-TARS' targets on the small screen: pixels of the image smart_resize makes of 720x1600
    dialect = make_dialect(profile_named("ui_tars"))
    viewport = viewport_for(720, 1600, profile_named("ui_tars").image, profile_named("ui_tars").space)
    taps = [s for s in _lines(out / "dataset" / f"steps-ui_tars-{runs['dark-720x1600']['split']}.jsonl")
            if "-v-dark-720x1600-" in s["id"] and "click(" in s["conversations"][1]["value"]]  # fmt: skip
    assert taps
    for sample in taps:
        point = dialect.parse(sample["conversations"][1]["value"], viewport).action.params
        assert point.x < 720 and point.y < 1600
    assert "augmented: 4 runs" in capsys.readouterr().out
    assert main(["data", "collect", "--family", "notes-create", "--augment", "profiles", "--device", sim_phone.serial,
                 "--output", str(tmp_path / "x")]) == 2  # one phone is no profile variant


def test_collect_on_two_phone_profiles(adb_server, sim_phones, tmp_path, monkeypatch):
    from mobile_agent.cli import main

    _env(monkeypatch, adb_server)
    (pixel,) = sim_phones(1, profile="pixel7-14")
    (galaxy,) = sim_phones(1, profile="galaxy-s22-13")
    out = tmp_path / "data"
    argv = ["data", "collect", "--family", "settings-airplane", "--seeds", "1:3", "--augment", "profiles",
            "--device", pixel.serial, "--device", galaxy.serial, "--output", str(out), "--dialect", "mobile_use"]
    assert main(argv) == 0
    results = {r["task_id"]: r for r in _lines(out / "results.jsonl")}
    assert len(results) == 4 and all(r["success"] for r in results.values())
    for task_id, record in results.items():  # every instance ran on each phone, and there only
        assert record["device"] == (pixel.serial if "-v-pixel-7-" in task_id else galaxy.serial)
    runs = _lines(out / "dataset" / "runs.jsonl")  # seeds 1 and 2 want airplane mode off and on: no duplicate
    assert sorted(r["variant"] for r in runs) == ["pixel-7", "pixel-7", "sm-s908b", "sm-s908b"]
    for run in runs:
        with Image.open(out / "dataset" / run["files"][0]) as first:
            assert first.size == ((1080, 2400) if run["variant"] == "pixel-7" else (1080, 2316))


def test_a_task_pinned_to_a_phone_outside_the_suite_is_refused(sim_phone, adb_server, tmp_path):
    from eval.mobile_eval.runner import EvalConfig, SuiteRunner
    from mobile_agent.device import open_device
    from mobile_agent.settings import AdbSettings, Settings

    device = open_device(AdbSettings(server_port=adb_server.port), sim_phone.serial)
    runner = SuiteRunner(Settings(adb=AdbSettings(server_port=adb_server.port)), [device],
                         EvalConfig(output_dir=tmp_path, mode="reference"))  # fmt: skip
    (task,) = sample_instances(families=["settings-theme"], seeds=[0])
    with pytest.raises(ValueError, match="not one of the suite's phones"):
        runner.run([task], {task.id: "emulator-5554"})
    assert not (tmp_path / "results.jsonl").exists() or not (tmp_path / "results.jsonl").read_text()
