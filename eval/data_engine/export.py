"""Export verified runs: one T3-Agent record per run, one training sample per step and dialect.

Records (``runs.jsonl``) follow T3-Agent's trajectory shape (query, files, thoughts,
actions, observations, answer; /work/shared/seeds T3-Agent section 3) plus where the run
came from (family, params, seed, variant) and its verification (``verified_by``, ``verdict``).

Step samples: for each dialect (``targets.py``: the paper's, function calling, UI-TARS,
Qwen's mobile_use, AutoGLM, or a model profile such as ``qwen3-vl``) and each format
(``formats.py``: LLaVA, LLaMA-Factory / ms-swift ShareGPT), ``<prefix>-<dialect>-<split>.jsonl``:
the screenshot, the dialect's prompt with the instruction and the history of this
dialect's own earlier actions, and the target reply. Each run ends with a Stop / Finished
sample on its final screenshot. Steps a dialect cannot express are skipped and counted.

Only runs whose record says ``success`` judged by ``state`` are exported; pending,
failed, crashed and MLLM-only runs never are. Duplicates (same family, params, variant and
action sequence) are kept once: a variant (another screen size, theme or phone) is another
screenshot, so it is kept. Train/validation is split by family, so a validation family is
never seen in training.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from PIL import Image

from eval.data_engine.formats import FORMATS, dataset_info, file_name, sample_line, to_llava_list
from eval.data_engine.targets import DEFAULT_DIALECTS, SUBMITTED, TargetWriter
from eval.data_engine.variants import variant_of
from eval.data_engine.verdicts import RunVerification
from eval.data_engine.verify import verification_for
from eval.mobile_eval.records import TaskResult
from eval.mobile_eval.schema import EvalTask
from mobile_agent.agent import load_trajectory
from mobile_agent.device import platform_of
from mobile_agent.operations import ParsedAction
from mobile_agent.planner.dialects import UnwritableAction

__all__ = ["ExportSummary", "export_runs", "split_of", "to_llava_list", "variant_of"]

SPLITS = ("train", "validation")


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
    dialects: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    steps: Counter[str] = field(default_factory=Counter)  # per split (the runs' steps, plus the final Stop)
    samples: Counter[str] = field(default_factory=Counter)  # per dialect, each format holds as many
    skipped: dict[str, Counter[str]] = field(default_factory=dict)  # dialect -> why -> steps
    by_app: Counter[str] = field(default_factory=Counter)
    by_family: Counter[str] = field(default_factory=Counter)
    by_level: Counter[str] = field(default_factory=Counter)
    by_variant: Counter[str] = field(default_factory=Counter)
    thoughts: int = 0  # steps whose run wrote a thought (scripted reference runs write none)

    def card(self) -> str:
        def table(title: str, counts: Mapping[str, int], unit: str = "runs") -> str:
            rows = "".join(f"| {k} | {v} |\n" for k, v in sorted(counts.items()))
            return f"\n### {title}\n\n| | {unit} |\n|---|---|\n{rows}"

        rejected = ", ".join(f"{k}: {v}" for k, v in sorted(self.rejected.items())) or "none"
        dialect_rows = "".join(
            f"| {d} | {self.samples[d]} | "
            + (", ".join(f"{why}: {n}" for why, n in sorted(self.skipped.get(d, Counter()).items())) or "none")
            + " |\n"
            for d in self.dialects
        )
        return (
            "# Dataset card\n\nVerified runs of the task families on the simulated phone (state validator = "
            f"ground truth).\n\n- runs seen: {self.runs}\n- exported: {self.exported}\n- rejected: {rejected}\n"
            f"- duplicates dropped: {self.duplicates}\n- steps (with each run's final Stop): "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.steps.items()))
            + f"\n- steps with a thought: {self.thoughts} (targets carry the thought when the run had one)"
            + f"\n- formats: {', '.join(self.formats)}\n- dialects: {', '.join(self.dialects)}\n"
            + "\n### per dialect\n\n| dialect | samples | steps skipped (why) |\n|---|---|---|\n"
            + dialect_rows
            + table("per app", self.by_app) + table("per family", self.by_family) + table("per level", self.by_level)
            + table("per variant", {k or "(as the phone is)": v for k, v in self.by_variant.items()})
        )


def _why_rejected(record: TaskResult) -> str | None:
    if record.judged_by != "state":
        return f"judged by {record.judged_by}"
    if not record.success:
        return "failed" if record.status != "crashed" else "crashed"
    if not record.trajectory_dir or not (Path(record.trajectory_dir) / "trajectory.jsonl").is_file():
        return "no trajectory"
    return None


class _Files:
    """The open sample files, one per (format, dialect, split), opened on first use."""

    def __init__(self, out: Path, stack: ExitStack) -> None:
        self.out, self.stack = out, stack
        self.handles: dict[tuple[str, str, str], IO[str]] = {}

    def write(self, fmt: str, dialect: str, split: str, line: str) -> None:
        key = (fmt, dialect, split)
        if key not in self.handles:
            path = self.out / file_name(fmt, dialect, split)
            self.handles[key] = self.stack.enter_context(path.open("w", encoding="utf-8"))
        self.handles[key].write(line + "\n")


def export_runs(records: Iterable[TaskResult], tasks: Mapping[str, EvalTask], out: Path,
                dialects: Sequence[str] = DEFAULT_DIALECTS, formats: Sequence[str] = FORMATS) -> ExportSummary:
    """Write ``runs.jsonl``, the step samples, ``images/``, ``dataset_info.json`` and ``README.md``."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown format {', '.join(unknown)}; one of {', '.join(FORMATS)}")
    writers = [TargetWriter(name) for name in dialects]  # an unknown dialect raises here, before any file
    out.mkdir(parents=True, exist_ok=True)
    (out / "images").mkdir(exist_ok=True)
    summary = ExportSummary(dialects=tuple(dialects), formats=tuple(formats))
    seen: set[tuple[str, ...]] = set()
    with ExitStack() as stack:
        runs_file = stack.enter_context((out / "runs.jsonl").open("w", encoding="utf-8"))
        files = _Files(out, stack)
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
            if _export_run(record, task, verification, out, writers, formats, files, runs_file, summary, seen):
                summary.exported += 1
    if "sharegpt" in formats:
        entries = [(w.name, s, file_name("sharegpt", w.name, s)) for w in writers for s in SPLITS
                   if ("sharegpt", w.name, s) in files.handles]  # fmt: skip
        (out / "dataset_info.json").write_text(json.dumps(dataset_info(entries), indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(summary.card(), encoding="utf-8")
    return summary


def _export_run(record: TaskResult, task: EvalTask, verification: RunVerification | None, out: Path,
                writers: Sequence[TargetWriter], formats: Sequence[str], files: _Files, runs_file: IO[str],
                summary: ExportSummary, seen: set[tuple[str, ...]]) -> bool:  # fmt: skip
    """One verified run: its record and its samples; False when it is a duplicate or lost a screenshot."""
    folder = Path(str(record.trajectory_dir))
    _, steps, result = load_trajectory(folder)
    steps = [s for s in steps if s.get("ok") and s.get("action_text") and s.get("operation")]
    if not all((folder / str(s.get("screenshot") or "?")).is_file() for s in steps):
        summary.rejected["screenshot missing"] = summary.rejected.get("screenshot missing", 0) + 1
        return False  # a sample without its screen teaches nothing; the other runs go on
    family = task.notes.removeprefix("family ") if task.notes.startswith("family ") else task.app
    variant = variant_of(record.task_id)
    actions = [s["action_text"] for s in steps]
    key = (family, json.dumps(task.params, sort_keys=True), variant, *actions)
    if key in seen:
        summary.duplicates += 1
        return False
    seen.add(key)
    split = split_of(family)
    final = folder / "final.png"
    shots = [folder / s["screenshot"] for s in steps] + ([final] if final.is_file() else [])
    files_out = []
    for index, src in enumerate(shots, 1):
        name = f"{record.task_id}-{index:03d}{src.suffix}"
        shutil.copyfile(src, out / "images" / name)
        files_out.append(f"images/{name}")
    instruction = record.instruction or task.instruction
    answer = str((result or {}).get("answer") or "")
    runs_file.write(json.dumps({
        "id": record.task_id, "family": family, "level": task.level, "apps": task.apps,
        "params": task.params, "seed": task.seed, "variant": variant, "split": split,
        "query": instruction, "files": files_out[: len(steps)],
        "final_screenshot": files_out[-1] if final.is_file() else None,
        "thoughts": [s.get("thought", "") for s in steps], "actions": actions,
        "observations": [s.get("feedback", "") for s in steps],
        "answer": answer or (result or {}).get("reason") or "",
        "verified_by": "state_validator", "verdict": record.reasons, "device": record.device,
        "verifiers": verification.for_record() if verification is not None else None,
    }, ensure_ascii=False) + "\n")
    sizes = [_size(p) for p in shots]
    feedback = [str(s.get("feedback") or "") for s in steps] + [""]
    thoughts = [str(s.get("thought") or "") for s in steps] + [""]
    for writer in writers:
        history: list[str] = []
        for index, action in enumerate(writer.actions(steps, answer)[: len(shots)]):  # the Stop needs final.png
            sample_id = f"{record.task_id}-{index + 1:03d}"
            width, height = sizes[index]
            shown = steps[index]["action_text"] if index < len(steps) else "Stop"
            reply = _reply(writer, action, width, height, thoughts[index], summary)
            if reply is None:
                if action == SUBMITTED:
                    continue  # UI-TARS' type(content='…\n') in the history already says it
                history.append(f"Step {index + 1}: {shown} -> {feedback[index] or 'done'}")
                continue
            messages = writer.messages(instruction, history, width, height, platform_of(record.device or ""))
            messages.append({"role": "assistant", "content": reply})
            for fmt in formats:
                files.write(fmt, writer.name, split, sample_line(fmt, sample_id, files_out[index], messages, writer.name))
            summary.samples[writer.name] += 1
            history.append(f"Step {index + 1}: {writer.action_text(reply, width, height)} -> {feedback[index] or 'done'}")
    summary.steps[split] += len(shots)
    summary.thoughts += sum(bool(t.strip()) for t in thoughts)
    summary.by_family[family] += 1
    summary.by_level[f"L{task.level}"] += 1
    summary.by_variant[variant] += 1
    for app in task.apps:
        summary.by_app[app] += 1
    return True


def _reply(writer: TargetWriter, action: ParsedAction | str, width: int, height: int, thought: str,
           summary: ExportSummary) -> str | None:  # fmt: skip
    why = action if isinstance(action, str) else None
    if isinstance(action, ParsedAction):
        try:
            return writer.reply(action, width, height, thought)
        except UnwritableAction as exc:
            why = f"cannot express {exc.operation}"
    summary.skipped.setdefault(writer.name, Counter())[str(why)] += 1
    return None


def _size(path: Path) -> tuple[int, int]:
    """The screenshot's size (the screen's, in the orientation of that step)."""
    with Image.open(path) as image:
        width, height = image.size
        return int(width), int(height)
