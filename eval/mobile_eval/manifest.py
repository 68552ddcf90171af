"""The run manifest: what produced the records of an output folder (``run.json``).

A suite resumes by skipping the task ids already in ``results.jsonl``; that is only right
when those records came from the same run: the same label, mode, model, dialect and the
settings that change results, and the same definition of each task. The manifest keeps
these next to the results; ``check_resume`` compares them with the run about to start and
says what differs, so that a folder of another run is never "resumed" into a report that
mixes two runs (or reports reference solutions under a model's name).

May import: mobile_agent.settings, mobile_eval.schema, the standard library.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from eval.mobile_eval.schema import EvalTask
from mobile_agent.settings import Settings

__all__ = ["MANIFEST_NAME", "ResumeConflict", "check_resume", "run_manifest", "task_digest", "write_manifest"]

MANIFEST_NAME = "run.json"
MANIFEST_VERSION = 1


def task_digest(task: EvalTask) -> str:
    """A short hash of everything in a task's definition that decides its outcome."""
    data = task.model_dump(mode="json", exclude={"notes", "paper_instruction"})
    for key in ("seed", "setup"):  # family fields: absent from Mobile-Eval's digests, so its old runs resume
        if not data.get(key):
            data.pop(key, None)
    text = json.dumps(data, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _endpoint(url: str | None) -> str | None:
    """The planner's host and path (no credentials, no query): another server may serve another model."""
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}{parts.path.rstrip('/')}"


def run_manifest(settings: Settings, *, mode: str, label: str, seed: int, params: dict[str, str],
                 judge: str, max_steps: int | None, tasks: list[EvalTask]) -> dict[str, Any]:
    """The manifest of the run about to start. ``run`` holds what must match to resume."""
    agent_mode = mode == "agent"
    planner, agent, perception = settings.planner, settings.agent, settings.perception
    run: dict[str, Any] = {
        "label": label,
        "mode": mode,
        # the model and how it is asked matter only when a model plans
        "model": planner.model if agent_mode else None,
        "endpoint": _endpoint(planner.base_url) if agent_mode else None,
        "dialect": planner.dialect if agent_mode else None,
        "temperature": planner.temperature if agent_mode else None,
        "max_tokens": planner.max_tokens if agent_mode else None,
        "image_long_side": planner.image_long_side if agent_mode else None,
        "reflection": agent.reflection if agent_mode else None,
        "completion_check": agent.completion_check if agent_mode else None,
        "detector": perception.detector,
        "ranker": perception.ranker,
        "seed": seed,
        "params": dict(sorted(params.items())),
        "judge": judge,
        "max_steps": max_steps,
    }
    if agent_mode and settings.cache.enabled:  # replayed plans are not the model's steps
        run["cache"] = True
    return {"version": MANIFEST_VERSION, "run": run, "tasks": {t.id: task_digest(t) for t in tasks}}


@dataclass(frozen=True)
class ResumeConflict:
    """Why the folder's records cannot be resumed by this run."""

    reasons: list[str]

    def message(self, folder: Path) -> str:
        lines = [f"{folder} holds the results of another run; resuming would mix them into this run's report:"]
        lines += [f"  - {r}" for r in self.reasons]
        lines += [
            "start a new folder with --output DIR (e.g. --output runs/mobile-eval-<label>), ",
            "or --new to start over here (the old results move to a previous-<time> folder inside it), ",
            "or --force to resume anyway and keep the old records.",
        ]
        return "\n".join(lines)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_resume(folder: Path, current: dict[str, Any], done_ids: set[str]) -> ResumeConflict | None:
    """None when the records already in ``folder`` (task ids ``done_ids``) may be resumed."""
    if not done_ids:
        return None
    earlier = read_manifest(folder)
    if earlier is None or not isinstance(earlier.get("run"), dict):
        return ResumeConflict([f"it has {len(done_ids)} record(s) but no {MANIFEST_NAME} saying which run made them"])
    reasons = []
    before, now = earlier["run"], current["run"]
    for key in sorted(set(before) | set(now)):
        if before.get(key) != now.get(key):
            reasons.append(f"{key}: {before.get(key)!r} there, {now.get(key)!r} now")
    recorded = earlier.get("tasks")
    old_tasks: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    changed = sorted(t for t in done_ids & set(current["tasks"]) if old_tasks.get(t) != current["tasks"][t])
    if changed:
        reasons.append(f"task definitions changed since those records: {', '.join(changed)}")
    return ResumeConflict(reasons) if reasons else None


def write_manifest(folder: Path, current: dict[str, Any]) -> None:
    """Save the manifest; the task digests of earlier selections (other --app filters) are kept."""
    earlier = read_manifest(folder) or {}
    tasks = dict(earlier.get("tasks") or {}) if earlier.get("run") == current["run"] else {}
    tasks.update(current["tasks"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MANIFEST_NAME
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({**current, "tasks": tasks}, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)
