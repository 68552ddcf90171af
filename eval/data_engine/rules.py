"""The rule pre-check of a trajectory: loops and pointless actions, without a model.

T3-Agent's trajectory verifier asks for a reasonable trajectory; two kinds of unreasonable
steps can be seen without a model, from what the agent recorded:

- a **pointless** action: carried out (``ok``) and the screen did not change after it
  (``screen_changed`` False, the agent's own perceptual comparison, status bar masked);
- a **loop**: the same action (operation and parameters) again on the same screen — its
  screenshot is the same as the one an earlier identical action was taken on
  (``mobile_agent.agent.screen_diff.change_ratio`` under the run's ``change_threshold``).

A step that failed (text not found) is not pointless here: the planner was told, and the
step records say so; the trajectory judge and the validator weigh it. A final ``Stop`` is
not an action on the screen.

May import: numpy, Pillow, mobile_agent (agent.screen_diff), eval.data_engine.verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from eval.data_engine.verdicts import Verdict
from mobile_agent.agent import change_ratio

__all__ = ["DEFAULT_CHANGE_THRESHOLD", "check_rules"]

DEFAULT_CHANGE_THRESHOLD = 0.0005  # AgentSettings.change_threshold's default, for runs that do not record theirs


def _action_key(step: dict[str, Any]) -> str | None:
    operation = step.get("operation")
    if not operation or str(operation.get("name", "")).lower() == "stop":
        return None
    params = {k: v for k, v in (operation.get("params") or {}).items() if v is not None}
    return json.dumps([str(operation["name"]).lower(), params], sort_keys=True, default=str)


def _pixels(folder: Path, name: str | None, cache: dict[str, np.ndarray | None]) -> np.ndarray | None:
    if not name:
        return None
    if name not in cache:
        try:
            with Image.open(folder / name) as img:
                cache[name] = np.asarray(img.convert("RGB"))
        except OSError:
            cache[name] = None
    return cache[name]


def check_rules(folder: Path, header: dict[str, Any], steps: list[dict[str, Any]],
                *, max_pointless: int = 0, max_loops: int = 0) -> Verdict:
    """The rules' verdict on a trajectory folder's steps; ``details`` lists the step
    indices of each finding (``pointless``, ``loop``)."""
    threshold = float(((header.get("settings") or {}).get("agent") or {}).get("change_threshold")
                      or DEFAULT_CHANGE_THRESHOLD)
    pointless: list[int] = []
    loops: list[int] = []
    seen: dict[str, list[dict[str, Any]]] = {}
    cache: dict[str, np.ndarray | None] = {}
    for step in steps:
        key = _action_key(step)
        if key is None:
            continue
        index = int(step.get("index", 0))
        if step.get("ok") and step.get("screen_changed") is False:
            pointless.append(index)
        here = _pixels(folder, step.get("screenshot"), cache)
        for earlier in seen.get(key, []):
            there = _pixels(folder, earlier.get("screenshot"), cache)
            if here is not None and there is not None and change_ratio(there, here) <= threshold:
                loops.append(index)
                break
        seen.setdefault(key, []).append(step)
    problems = []
    if len(pointless) > max_pointless:
        problems.append(f"{len(pointless)} action(s) changed nothing on the screen (steps {pointless})")
    if len(loops) > max_loops:
        problems.append(f"{len(loops)} action(s) repeated on the same screen (steps {loops})")
    reason = "; ".join(problems) or f"no loop, no pointless action in {sum(1 for s in steps if _action_key(s))} action(s)"
    return Verdict(verifier="rules", passed=not problems, reason=reason,
                   details={"pointless": pointless, "loop": loops})
