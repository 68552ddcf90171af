"""Per-task result records and the JSONL results file.

One ``TaskResult`` per (task, run): whether it succeeded, who judged it, the step counts
and the per-step judgements. The paper's published Table 2 is stored in the same format
(``judged_by="published"``), so its figures and a run's are averaged by the same code.

The results file is append-only JSONL: a line per finished task, written and flushed as
soon as the task ends, so an interrupted suite resumes by skipping the ids already there.

May import: pydantic, mobile_eval.errors.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval.mobile_eval.errors import ResultsFileError

__all__ = [
    "SCHEMA_VERSION",
    "JudgedBy",
    "ResultsFile",
    "StepJudgement",
    "TaskResult",
    "load_paper_results",
    "load_results",
]

SCHEMA_VERSION = 1

# Who decided success and step correctness: the phone's state (simulator), a person
# (annotation file), an MLLM judge, or the figures as a paper published them. "harness": the
# task crashed (a lost phone, a failed reset) before anything could be judged, a failure on
# any phone. "pending": a run on a phone whose state cannot be read, waiting for
# `mobile-agent eval annotate`; averages leave pending records out.
JudgedBy = Literal["state", "human", "mllm", "published", "harness", "pending"]


class StepJudgement(BaseModel):
    """One agent step, judged against the reference actions (or by a judge)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=1, description="1-based step number in the agent's run")
    action: str = Field(description="the action as the agent wrote it")
    correct: bool | None = Field(None, description="counts toward PS; None = not judged")
    expected: str | None = Field(None, description="the reference action expected at this point")
    act_match: bool | None = Field(None, description="same operation as `expected` (GPT4Tools SR_act)")
    args_score: float | None = Field(None, ge=0, le=1, description="argument similarity (SR_args)")
    matched_reference: int | None = Field(None, ge=0, description="index of the reference action consumed")


class TaskResult(BaseModel):
    """The outcome of one Mobile-Eval task in one run, with the paper's four metrics."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    task_id: str
    app: str
    level: Literal[1, 2, 3]
    label: str = Field("", description="which system / run this is (model, commit, 'paper')")
    instruction: str = ""
    success: bool
    judged_by: JudgedBy
    agent_steps: int = Field(ge=0, description="steps the agent took, its final Stop excluded")
    human_steps: int = Field(ge=1, description="steps a person needs (the second number of RE)")
    ps: float | None = Field(None, ge=0, le=1, description="Process Score: correct steps / all steps")
    cr: float = Field(ge=0, le=1, description="Completion Rate: share of the human steps reached")
    sr_act: float | None = Field(None, ge=0, le=1)
    sr_args: float | None = Field(None, ge=0, le=1)
    sr: float | None = Field(None, ge=0, le=1)
    steps: list[StepJudgement] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list, description="why the judge decided so")
    status: str | None = Field(None, description="the agent's RunStatus, or 'crashed'")
    error: dict[str, Any] | None = None
    device: str | None = Field(None, description="serial of the phone that ran the task")
    trajectory_dir: str | None = None
    replay: str | None = Field(None, description="the run's report.html")
    duration_s: float | None = Field(None, ge=0)
    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)
    cost_usd: float | None = Field(None, ge=0)
    finished_at: datetime | None = None

    @model_validator(mode="after")
    def _consistent(self) -> TaskResult:
        # The paper: "If the instruction is completed, this metric [CR] will be equal to 1."
        if self.success and self.cr != 1.0:
            raise ValueError("a successful task has cr == 1")
        return self

    @property
    def relative_efficiency(self) -> float | None:
        """Human steps / agent steps (1.0 = as short as a person's path)."""
        return self.human_steps / self.agent_steps if self.agent_steps else None


def load_results(path: str | Path) -> list[TaskResult]:
    """Every record of a results file; a bad line raises ``ResultsFileError`` naming it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsFileError(f"cannot read results file {path}: {exc}", path=str(path)) from exc
    records: list[TaskResult] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(TaskResult.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise ResultsFileError(
                f"{path}:{number}: not a task result: {_short(exc)}", path=str(path), line=number
            ) from exc
    return records


def load_paper_results() -> list[TaskResult]:
    """The paper's Table 2 (Mobile-Agent with GPT-4V), one published record per task."""
    resource = resources.files("eval.mobile_eval") / "data" / "paper_table2.jsonl"
    with resources.as_file(resource) as path:
        return load_results(path)


class ResultsFile:
    """An append-only JSONL file of ``TaskResult``; thread-safe, flushed per record.

    A line cut short by a crash (no trailing newline) is dropped on open, so that resuming
    never stumbles on half a record.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()

    def records(self) -> list[TaskResult]:
        return load_results(self.path) if self.path.exists() else []

    def done_ids(self) -> set[str]:
        return {record.task_id for record in self.records()}

    def append(self, record: TaskResult) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def _drop_torn_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            self.path.write_bytes(data[:keep])


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors(include_url=False)
        )
    return str(exc)
