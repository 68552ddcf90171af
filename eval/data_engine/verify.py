"""Verify the runs of a families run folder: every verifier's verdict and the decision, per run.

``verify_run`` gathers the verdicts on one run — the state validator's (from the result
record), the rule pre-check's, and the MLLM judges' when they are given — and decides
(``verdicts.decide``); ``verify_results`` does it for every run of a ``results.jsonl`` and
saves each as ``verification.json`` beside the trajectory. The export copies it into the
run's record (``verification_for``: the saved one, or the rules alone when none was saved,
since they need no model).

May import: eval.data_engine (verdicts, rules, judges), eval.mobile_eval (records),
mobile_agent (public API).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eval.data_engine.judges import QueryJudge, TrajectoryJudge, read_screen
from eval.data_engine.rules import check_rules
from eval.data_engine.verdicts import (
    RunVerification,
    Verdict,
    decide,
    load_verification,
    save_verification,
)
from eval.mobile_eval.records import TaskResult, load_results
from mobile_agent.agent import load_trajectory

__all__ = ["Judges", "verification_for", "verify_results", "verify_run"]


@dataclass(frozen=True)
class Judges:
    """The MLLM verifiers to ask, and what the query judge is told of the phone."""

    query: QueryJudge | None = None
    trajectory: TrajectoryJudge | None = None
    installed_apps: Sequence[str] | None = None

    @property
    def names(self) -> set[str]:
        return {j.name for j in (self.query, self.trajectory) if j is not None}


def _state_verdict(record: TaskResult) -> Verdict | None:
    if record.judged_by != "state":
        return None
    shown = [r for r in record.reasons if r.startswith("✗")] if not record.success else record.reasons
    return Verdict(verifier="state_validator", passed=record.success, reason="; ".join(shown)[:500]
                   or ("the validator passed" if record.success else "the validator failed"))


def _trajectory_folder(record: TaskResult) -> Path | None:
    if not record.trajectory_dir:
        return None
    folder = Path(record.trajectory_dir)
    return folder if (folder / "trajectory.jsonl").is_file() else None


def verify_run(record: TaskResult, judges: Judges | None = None) -> RunVerification:
    """Every verifier's verdict on ``record``'s run, and the decision (not saved)."""
    verdicts = [v for v in (_state_verdict(record),) if v is not None]
    folder = _trajectory_folder(record)
    if folder is None:
        return decide(record.task_id, verdicts)
    header, steps, result = load_trajectory(folder)
    verdicts.append(check_rules(folder, header, steps))
    instruction = record.instruction or str(header.get("instruction", ""))
    if judges is not None and judges.query is not None:
        first: np.ndarray | None = read_screen(folder / steps[0]["screenshot"]) if steps and steps[0].get("screenshot") else None
        verdicts.append(judges.query.judge(instruction, judges.installed_apps, first))
    if judges is not None and judges.trajectory is not None:
        verdicts.append(judges.trajectory.judge(instruction, folder, steps, result))
    return decide(record.task_id, verdicts)


def _still_valid(saved: RunVerification | None, record: TaskResult, wanted: set[str]) -> bool:
    """A saved verification stands for this record when it is of the same task, agrees with
    the record's state verdict (not a verification of an earlier run of the task) and holds
    every judge asked for now."""
    if saved is None or saved.task_id != record.task_id:
        return False
    state = saved.verdict("state_validator")
    if (state is None) != (record.judged_by != "state") or (state is not None and state.passed != record.success):
        return False
    return wanted <= {v.verifier for v in saved.verdicts}


def verification_for(record: TaskResult) -> RunVerification:
    """The saved verification of the record's run, else one by the validator and the rules."""
    folder = _trajectory_folder(record)
    saved = load_verification(folder) if folder is not None else None
    return saved if saved is not None and _still_valid(saved, record, set()) else verify_run(record)


def verify_results(run_dir: Path, judges: Judges | None = None, *, again: bool = False,
                   on_run: Callable[[RunVerification], None] | None = None) -> list[RunVerification]:
    """Verify every run of ``run_dir/results.jsonl`` (its last record per task) and save each
    verification beside its trajectory; runs verified before with the same judges are kept
    unless ``again``."""
    latest = {r.task_id: r for r in load_results(run_dir / "results.jsonl")}
    wanted = judges.names if judges is not None else set()
    out = []
    for record in latest.values():
        folder = _trajectory_folder(record)
        saved = load_verification(folder) if folder is not None else None
        if not again and _still_valid(saved, record, wanted):
            assert saved is not None
            verification = saved
        else:
            verification = verify_run(record, judges)
            if folder is not None:
                save_verification(folder, verification)
        out.append(verification)
        if on_run is not None:
            on_run(verification)
    return out
