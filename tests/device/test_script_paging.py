"""``Page down until (Text)`` in a script looks for Text as the Click text after it does
(``operations.catalog.find_text_on``): on a protected screen (a FLAG_SECURE window captures
black; its accessibility tree stays, ``tests/service/test_protected_screen.py``) the text is
found through the tree and no page is turned."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent_helpers import cli_env, run_cli, trajectory_of

VAULT = "com.x8bit.bitwarden"
pytestmark = pytest.mark.timeout(240)


def test_page_down_until_finds_its_text_on_a_protected_screen(adb_server, sim_phone, tmp_path) -> None:
    sim_phone.phone.install(VAULT)
    script = tmp_path / "vault.txt"
    script.write_text("Open App (Bitwarden)\nPage down until (Netflix)\nClick text (Netflix)\nClick text (Copy password)\n",
                      encoding="utf-8")
    env = cli_env(adb_server.port, MOBILE_AGENT_PERCEPTION__ACCESSIBILITY="false",
                  MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S="1.5", MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S="0.1")
    proc = run_cli("--serial", sim_phone.serial, "--script", str(script), "-o", str(tmp_path / "runs"), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sim_phone.phone.state()["apps"][VAULT]["copied"] == "Netflix"
    records = [json.loads(line) for line in trajectory_of(proc.stdout).read_text(encoding="utf-8").splitlines()]
    steps: list[dict[str, Any]] = [r for r in records if r.get("type") == "step"]
    assert [s["action_text"] for s in steps] == ["Open App (Bitwarden)", "Click text (Netflix)", "Click text (Copy password)"]
