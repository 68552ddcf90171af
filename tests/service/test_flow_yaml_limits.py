"""A flow sent to the service (``POST /v1/tasks``, ``POST /v1/schedules``) with YAML anchors and
aliases, or nested past ``MAX_FLOW_DEPTH``, is a 422 that says so: before, 539 bytes of aliases
held the service's event loop for a minute and took 1.9 GB (review8 #1), and a deep nest was a
500 (RecursionError). Real uvicorn serving the app, the simulated phone over the real adb server."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.timeout(180)

ALIASED = ("name: bomb\nsteps:\n  - extract: {instruction: a, fields: {x: str}, expect: {l0: &l0 x, "
           "l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0], "
           "l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]}}\n")
NESTED = ("name: deep\nsteps:\n  - extract: {instruction: a, fields: {x: str}, expect: {x: "
          + "[" * 20_000 + "1" + "]" * 20_000 + "}}\n")


def _refused(answer: Any, words: str) -> None:
    assert answer.status_code == 422, answer.text[:300]
    (detail,) = answer.json()["detail"]
    assert detail["loc"][-1] == "flow" and words in detail["msg"], detail


def test_a_flow_with_aliases_or_a_deep_nest_is_refused(service, sim_phone) -> None:
    live = service([sim_phone])
    _refused(live.client.post("/v1/tasks", json={"flow": ALIASED}), "anchors or aliases")
    _refused(live.client.post("/v1/tasks", json={"flow": NESTED}), "no deeper than")
    _refused(live.client.post("/v1/schedules", json={"name": "n", "every_s": 86400, "task": {"flow": ALIASED}}),
             "anchors or aliases")
    assert live.client.get("/healthz").status_code == 200
