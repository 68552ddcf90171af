"""Every cell of the covering design (``tests/matrix/design.py``), through its interface:
the simulated phone over the real adb server, the scripted model server answering in the
cell's dialect. Each cell is judged on the phone's state, then on what the runs left behind:
a warm plan cache replays (fewer model calls, steps ``by: replay``), a secret is in no
file, plan or model request, and every recorded step names its operation."""

from __future__ import annotations

import contextlib
import functools
import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from perception.text_match import fold
from tests.llm_server import RecordedRequest
from tests.matrix.design import CELLS, DIALECT_MODELS, SLOW_INTERFACES, Cell, known_bug
from tests.matrix.drivers import SECRET_VALUE, Rig, run_cell, simulated_iphone

pytestmark = pytest.mark.timeout(300)


def _marks(cell: Cell) -> list[pytest.MarkDecorator]:
    marks = []
    if cell.interface in SLOW_INTERFACES or cell.cache == "warm":
        marks.append(pytest.mark.slow)
    bug = known_bug(cell)
    if bug is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=bug.reason))
    return marks


@functools.cache
def _ocr() -> Any:
    from mobile_agent.locate import build_locator
    from mobile_agent.settings import Settings

    return build_locator(Settings())


def _images(sent: list[RecordedRequest]) -> list[np.ndarray]:
    """Every image of every chat request (a URL that is no base64 data URL fails), as RGB arrays."""
    return [np.asarray(Image.open(io.BytesIO(raw)).convert("RGB")) for request in sent for raw in request.images()]


def _leaks(folders: list[Path], cache_db: Path) -> list[str]:
    value = SECRET_VALUE.encode()
    found = [str(p) for folder in folders if folder.is_dir() for p in folder.rglob("*")
             if p.is_file() and value in p.read_bytes()]  # fmt: skip
    if cache_db.is_file() and value in cache_db.read_bytes():
        found.append(f"{cache_db} (the plan cache)")
    return found


@pytest.mark.parametrize("cell", [pytest.param(c, id=c.id, marks=_marks(c)) for c in CELLS])
def test_cell(cell: Cell, adb_server, sim_phones, llm_server, service, tmp_path, monkeypatch) -> None:
    with contextlib.ExitStack() as stack:
        if cell.device == "iphone":  # the simulated phone over WDA, ios:NAME to the interface
            phone = stack.enter_context(simulated_iphone("matrix", scale=3, width=540, height=1200))
        else:
            (phone,) = sim_phones(1, width=540, height=1200)
        _check_cell(cell, phone, adb_server, llm_server, service, tmp_path, monkeypatch)


def _check_cell(cell: Cell, phone: Any, adb_server: Any, llm: Any, service: Any, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith("MOBILE_AGENT_")]:
        monkeypatch.delenv(name)
    rig = Rig(phone, llm, adb_server.port, tmp_path, service, monkeypatch.setenv)

    task, ran = run_cell(cell, rig)

    assert all(ran.ok), "\n".join(ran.detail)
    wrong = task.check(phone.phone.state())  # the phone itself says whether the task was done
    assert wrong is None, f"{wrong}\n" + "\n".join(ran.detail)
    steps = ran.last_steps()
    assert steps, "no trajectory was written"
    assert ran.serials() == {phone.serial}, f"the runs were on {ran.serials()}, not the cell's phone {phone.serial}"
    # the accessibility axis took effect: a text found through the tree (an iPhone's: WDA's
    # page source) only with it on, and with it on at least once where a text was looked up
    located = [s["location"] for s in ran.steps() if isinstance(s.get("location"), dict)]
    backends = {loc.get("backend") for loc in located}
    if DIALECT_MODELS[cell.dialect][2] == "screen":  # a dialect that names the text to tap: it is looked up
        assert located, "no step looked a text up: the accessibility axis went unchecked"
    if located:  # a grounded dialect taps a point; a text is looked up only where it names one
        assert ("accessibility" in backends) == cell.accessibility, (cell.accessibility, backends)
    if DIALECT_MODELS[cell.dialect][2] != "screen":  # a grounded dialect taps a point: snapping places it
        snapped = [s["snap"] for s in ran.steps() if isinstance(s.get("snap"), dict)]
        assert snapped, "no tap was snapped: the accessibility axis went unchecked"
        # the model aims at a control beside its label (drivers.ResyncingModel._aim): only the
        # tree knows the control's bounds, so its node is a tap's target with the tree on, never off
        on_nodes = [s for s in snapped if (s.get("target") or {}).get("source") == "node"]
        assert bool(on_nodes) == cell.accessibility, (cell.accessibility, [s["reason"] for s in snapped])
    if cell.cache == "warm":
        cold, warm = ran.model_calls[-2], ran.model_calls[-1]
        assert warm < cold, f"the warm run called the model {warm} times, the cold one {cold}"
        assert any(s.get("by") == "replay" for s in steps), [s.get("by") for s in steps]
    if cell.secret:
        assert not _leaks(ran.folders, rig.cache_db), _leaks(ran.folders, rig.cache_db)
        assert not any(SECRET_VALUE.encode() in request.body for request in ran.sent), "the secret's value reached the model"
        images = _images(ran.sent)
        assert images, "no screenshot reached the model: nothing to check"
        read = [line.text for image in images for line in _ocr().ocr(image)]
        assert read, "OCR read nothing on the screenshots the model got"
        shown = [text for text in read if fold(SECRET_VALUE) in fold(text)]
        assert not shown, f"a screenshot sent to the model shows the secret: {shown}"
    named = [s.get("action_text") or "" for s in steps if s.get("by") in ("model", "replay")]
    assert all(not text.startswith(("Observation", "Thought")) for text in named), named
