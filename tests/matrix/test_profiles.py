"""Every simulator profile (``tests/matrix/design.py`` PROFILE_CELLS), with the default
settings: ``mobile-agent run`` with a model (the paper's dialect) and ``mobile-agent eval
mobile-eval --app Settings --level 1`` with the reference solutions, each at the profile's
own screen (sizes, densities, a lock screen, two displays, a landscape tablet), and the
simulated iPhone at each scale (``IPHONES``: ``ios:NAME`` over WDA). Judged on the phone's
state."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.matrix.design import IPHONES, PROFILE_CELLS, ProfileCell, known_bug
from tests.matrix.drivers import DARK_MODE, ResyncingModel, cli_main, focused_field, simulated_iphone

pytestmark = pytest.mark.timeout(300)


def _marks(cell: ProfileCell) -> list[pytest.MarkDecorator]:
    marks = [] if cell.profile == "simphone" else [pytest.mark.slow]
    bug = known_bug(cell)
    if bug is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=bug.reason))
    return marks


@pytest.mark.parametrize("cell", [pytest.param(c, id=c.id, marks=_marks(c)) for c in PROFILE_CELLS])
def test_profile(cell: ProfileCell, adb_server, sim_phones, llm_server, tmp_path, monkeypatch) -> None:
    with contextlib.ExitStack() as stack:
        for name in [k for k in os.environ if k.startswith("MOBILE_AGENT_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", str(adb_server.port))
        monkeypatch.setenv("MOBILE_AGENT_AGENT__OUTPUT_DIR", str(tmp_path / "runs"))
        if cell.profile in IPHONES:  # the simulated phone at its profile, over WDA at the scale
            played, scale = IPHONES[cell.profile]
            handle = stack.enter_context(simulated_iphone(cell.profile, scale=scale, profile=played))
            monkeypatch.setenv("MOBILE_AGENT_IOS__DEVICES", json.dumps(handle.ios_devices))
        else:
            (handle,) = sim_phones(1, profile=cell.profile)
        _check_profile(cell, handle, llm_server, tmp_path)


def _check_profile(cell: ProfileCell, handle: Any, llm: Any, tmp_path: Path) -> None:
    phone = handle.phone
    if cell.interface == "cli_run":
        model = ResyncingModel("paper", "screen", list(DARK_MODE.lines), phone.ground_truth,
                               screen=(phone.width, phone.height), focused=lambda: focused_field(phone.state()),
                               done=lambda: DARK_MODE.check(phone.state()) is None)
        llm.script([], default=model)
        code, out = cli_main(["run", "--serial", handle.serial, "-i", DARK_MODE.instruction, "--json",
                           "--base-url", llm.base_url, "--api-key", "k-matrix", "--model", "gpt-4o"])
        result = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        assert code == 0 and result.get("status") == "completed", (code, result.get("reason"))
        wrong = DARK_MODE.check(phone.state())
        assert wrong is None, wrong
    else:
        out_dir = tmp_path / "eval"
        code, printed = cli_main(["eval", "mobile-eval", "--app", "Settings", "--level", "1", "--script-reference",
                               "--device", handle.serial, "-o", str(out_dir)])
        records = [json.loads(x) for x in (out_dir / "results.jsonl").read_text().splitlines() if x.strip()]
        assert code == 0, printed[-500:]
        assert [r["task_id"] for r in records] == ["settings-1"]
        assert all(r["success"] and r["judged_by"] == "state" for r in records), [(r["task_id"], r["reasons"], r["error"]) for r in records]
        assert phone.state()["theme"] == "dark"  # read from the phone itself
    assert not phone.state()["screen"]["locked"]
