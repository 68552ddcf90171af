"""Export verified runs: one T3-Agent record per run, one training sample per step.

Records (``runs.jsonl``) follow T3-Agent's trajectory shape (query, files, thoughts,
actions, observations, answer; /work/shared/seeds T3-Agent section 3) plus where the run
came from (family, params, seed) and its verification (``verified_by``, ``verdict``).

Step samples (``steps-<split>.jsonl``) are LLaVA's instruction-tuning records, one object a
line: ``{"id", "image", "conversations": [{"from": "human", "value": "<image>\\n..."},
{"from": "gpt", "value": ...}]}`` (haotian-liu/LLaVA docs/Finetune_Custom_Data.md; LLaVA
reads a JSON list of these, ``to_llava_list`` writes one). The target is the step's action
in the paper's syntax, the one the operations parser reads (``Action: Open App (Notes)``).

Only runs whose record says ``success`` judged by ``state`` are exported; pending,
failed, crashed and MLLM-only runs never are. Duplicates (same family, params and action
sequence) are kept once. Train/validation is split by family, so a validation family is
never seen in training.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eval.data_engine.verify import verification_for
from eval.mobile_eval.records import TaskResult
from eval.mobile_eval.schema import EvalTask
from mobile_agent.agent.trajectory import load_trajectory

__all__ = ["ExportSummary", "export_runs", "split_of", "to_llava_list"]

DIALECT = "paper"  # the only dialect written so far: see the module doc


def split_of(family: str, validation_share: int = 5) -> str:
    """Every ``validation_share``-th family (by a stable hash) is held out for validation."""
    digest = int(hashlib.sha256(family.encode()).hexdigest()[:8], 16)
    return "validation" if digest % validation_share == 0 else "train"


@dataclass
class ExportSummary:
    runs: int = 0
    exported: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    steps: Counter[str] = field(default_factory=Counter)
    by_app: Counter[str] = field(default_factory=Counter)
    by_family: Counter[str] = field(default_factory=Counter)
    by_level: Counter[str] = field(default_factory=Counter)

    def card(self) -> str:
        def table(title: str, counts: Mapping[str, int]) -> str:
            rows = "".join(f"| {k} | {v} |\n" for k, v in sorted(counts.items()))
            return f"\n### {title}\n\n| | runs |\n|---|---|\n{rows}"

        rejected = ", ".join(f"{k}: {v}" for k, v in sorted(self.rejected.items())) or "none"
        return (
            "# Dataset card\n\nVerified runs of the task families on the simulated phone (state validator = "
            f"ground truth).\n\n- runs seen: {self.runs}\n- exported: {self.exported}\n- rejected: {rejected}\n"
            f"- duplicates dropped: {self.duplicates}\n- step samples: "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.steps.items()))
            + f"\n- dialects: {DIALECT}\n"
            + table("per app", self.by_app) + table("per family", self.by_family) + table("per level", self.by_level)
        )


def _why_rejected(record: TaskResult) -> str | None:
    if record.judged_by != "state":
        return f"judged by {record.judged_by}"
    if not record.success:
        return "failed" if record.status != "crashed" else "crashed"
    if not record.trajectory_dir or not (Path(record.trajectory_dir) / "trajectory.jsonl").is_file():
        return "no trajectory"
    return None


def _prompt(instruction: str, history: list[str]) -> str:
    done = "\n".join(f"{i}. {line}" for i, line in enumerate(history, 1)) or "(none)"
    return f"<image>\nInstruction: {instruction}\nPrevious actions:\n{done}\nWhat is the next action?"


def export_runs(records: Iterable[TaskResult], tasks: Mapping[str, EvalTask], out: Path) -> ExportSummary:
    """Write ``runs.jsonl``, ``steps-train.jsonl``, ``steps-validation.jsonl``, ``images/`` and ``README.md``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "images").mkdir(exist_ok=True)
    summary = ExportSummary()
    seen: set[tuple[str, ...]] = set()
    runs_file = (out / "runs.jsonl").open("w", encoding="utf-8")
    step_files = {s: (out / f"steps-{s}.jsonl").open("w", encoding="utf-8") for s in ("train", "validation")}
    try:
        for record in records:
            summary.runs += 1
            why = _why_rejected(record)
            task = tasks.get(record.task_id)
            if why is None and task is None:
                why = "unknown task"
            verification = verification_for(record) if why is None else None
            if verification is not None and not verification.passed:
                why = verification.rejected_by  # the validator passed it; the rules (or judges, without state) did not
            if why is not None:
                summary.rejected[why] = summary.rejected.get(why, 0) + 1
                continue
            assert task is not None
            folder = Path(str(record.trajectory_dir))
            _, steps, result = load_trajectory(folder)
            steps = [s for s in steps if s.get("ok") and s.get("action_text")]
            family = task.notes.removeprefix("family ") if task.notes.startswith("family ") else task.app
            actions = [s["action_text"] for s in steps]
            key = (family, json.dumps(task.params, sort_keys=True), *actions)
            if key in seen:
                summary.duplicates += 1
                continue
            seen.add(key)
            split = split_of(family)
            files = []
            for s in steps:
                src = folder / s["screenshot"]
                name = f"{record.task_id}-{s['index']:03d}{src.suffix}"
                if src.is_file():
                    shutil.copyfile(src, out / "images" / name)
                files.append(f"images/{name}")
            instruction = record.instruction or task.instruction
            runs_file.write(json.dumps({
                "id": record.task_id, "family": family, "level": task.level, "apps": task.apps,
                "params": task.params, "seed": task.seed, "split": split,
                "query": instruction, "files": files,
                "thoughts": [s.get("thought", "") for s in steps], "actions": actions,
                "observations": [s.get("feedback", "") for s in steps],
                "answer": (result or {}).get("answer") or (result or {}).get("reason") or "",
                "verified_by": "state_validator", "verdict": record.reasons, "device": record.device,
                "verifiers": verification.for_record() if verification is not None else None,
            }, ensure_ascii=False) + "\n")
            history: list[str] = []
            for s, image in zip(steps, files, strict=True):
                step_files[split].write(json.dumps({
                    "id": f"{record.task_id}-{s['index']:03d}", "image": image, "dialect": DIALECT,
                    "conversations": [{"from": "human", "value": _prompt(instruction, history)},
                                      {"from": "gpt", "value": f"Action: {s['action_text']}"}],
                }, ensure_ascii=False) + "\n")
                history.append(s["action_text"])
                summary.steps[split] += 1
            summary.exported += 1
            summary.by_family[family] += 1
            summary.by_level[f"L{task.level}"] += 1
            for app in task.apps:
                summary.by_app[app] += 1
    finally:
        runs_file.close()
        for fh in step_files.values():
            fh.close()
    (out / "README.md").write_text(summary.card(), encoding="utf-8")
    return summary


def to_llava_list(jsonl: Path, target: Path) -> int:
    """The step samples as the single JSON list LLaVA's trainer loads."""
    items = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    target.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    return len(items)
