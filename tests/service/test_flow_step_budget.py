"""``server.max_steps_limit`` holds a flow as it holds an instruction and a script (review8 #7):
a ``run:`` step's own ``max_steps`` over the limit, or ``do:`` steps carrying more operations than
a script may, is a 422 ``too_long`` naming the step. Before, a flow's ``run:`` with ``max_steps:
12`` on a server limited to 5 ran 12 model steps. Real uvicorn, the simulated phone over the real
adb server."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.timeout(180)


def _too_long(answer: Any, words: str) -> None:
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["detail"]
    assert detail["type"] == "too_long" and words in detail["msg"], detail


def test_a_flows_steps_are_held_to_the_servers_step_limit(service, sim_phone) -> None:
    live = service([sim_phone], **{"server.max_steps_limit": 5})

    def post(flow: str) -> Any:
        return live.client.post("/v1/tasks", json={"flow": flow})

    _too_long(post("name: f\nsteps:\n  - do: Home\n  - run: open the settings\n    max_steps: 12\n"),
              "step 2: max_steps 12 is over the limit of 5")
    _too_long(post("name: f\nsteps:\n  - do: \"Home\\nBack\\nHome\"\n  - do: \"# a note\\nBack\\nHome\\nBack\"\n"),
              "over 5 operations")
    _too_long(live.client.post("/v1/tasks", json={"script": "Home\nBack\nHome\nBack\nHome\nBack"}), "over 5")
    within = post("name: f\nsteps:\n  - do: \"Home\\nBack\"\n  - run: open the settings\n    max_steps: 5\n")
    assert within.status_code == 202, within.text
    assert live.client.post(f"/v1/tasks/{within.json()['id']}/cancel").status_code == 202
