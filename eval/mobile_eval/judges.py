"""Judges for phones whose state cannot be read: a person, or an MLLM.

Both produce an ``Annotation`` — success, a correct/incorrect mark per step, and how many
of the human steps the run reached — saved as ``annotation.json`` in the run's trajectory
folder, from which ``result_from_annotation`` builds the task's ``TaskResult`` (PS, CR,
RE as the paper defines them; ``judged_by`` says who judged).

- ``annotate_run``: asks on a text stream, step by step ("correct? [y/n]"), then "success?"
  and, for a failure, "how many of the N human steps were reached?"; used by
  ``mobile-agent eval annotate RUN_DIR``.
- ``MllmJudge``: sends the instruction, the step list and the final screenshot to an
  OpenAI-compatible endpoint (the planner's settings) and reads a JSON verdict.

May import: openai, pydantic, mobile_agent (settings, agent trajectories), mobile_eval.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval.mobile_eval.errors import AnnotationError, JudgeError
from eval.mobile_eval.matching import STOP_NAMES
from eval.mobile_eval.records import TaskResult
from eval.mobile_eval.schema import EvalTask

__all__ = [
    "ANNOTATION_FILE",
    "Annotation",
    "MllmJudge",
    "StepMark",
    "annotate_run",
    "load_annotation",
    "load_run",
    "result_from_annotation",
]

ANNOTATION_FILE = "annotation.json"


class StepMark(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1)
    correct: bool


class Annotation(BaseModel):
    """A judgement of one run, by a person or an MLLM."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    judge: Literal["human", "mllm"]
    judge_name: str = Field("", description="annotator's name or the judge model")
    task_id: str | None = None
    success: bool
    steps: list[StepMark] = Field(default_factory=list)
    reached_human_steps: int | None = Field(None, ge=0, description="for CR; ignored on success")
    reason: str = ""
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


# --- runs on disk ---------------------------------------------------------------------------


def load_run(run_dir: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, steps, result) of a trajectory folder, as ``mobile_agent.agent`` wrote it."""
    from mobile_agent.agent import load_trajectory

    folder = Path(run_dir)
    if not (folder / "trajectory.jsonl").is_file():
        raise AnnotationError(f"{folder} is not a run folder (no trajectory.jsonl)", path=str(folder))
    try:
        return load_trajectory(folder)
    except (OSError, json.JSONDecodeError) as exc:
        raise AnnotationError(f"cannot read the trajectory in {folder}: {exc}", path=str(folder)) from exc


def _counted_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps the paper counts: all but a final Stop (a grounded dialect's Finished)."""
    if steps and ((steps[-1].get("operation") or {}).get("name") in STOP_NAMES):
        return steps[:-1]
    return steps


def load_annotation(run_dir: str | Path) -> Annotation:
    path = Path(run_dir) / ANNOTATION_FILE
    try:
        return Annotation.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AnnotationError(f"no annotation at {path}: {exc}", path=str(path)) from exc
    except ValidationError as exc:
        raise AnnotationError(f"{path} is not a valid annotation: {exc}", path=str(path)) from exc


def save_annotation(run_dir: str | Path, annotation: Annotation) -> Path:
    path = Path(run_dir) / ANNOTATION_FILE
    path.write_text(annotation.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


# --- a person ---------------------------------------------------------------------------------


def _ask_yes_no(prompt: str, stdin: TextIO, stdout: TextIO) -> bool:
    for _ in range(5):
        stdout.write(prompt + " [y/n] ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            raise AnnotationError("input ended before the annotation was complete")
        answer = line.strip().lower()
        if answer in ("y", "yes"):
            return True
        if answer in ("n", "no"):
            return False
        stdout.write("  please answer y or n\n")
    raise AnnotationError("no y/n answer after 5 tries")


def _ask_int(prompt: str, low: int, high: int, stdin: TextIO, stdout: TextIO) -> int:
    for _ in range(5):
        stdout.write(f"{prompt} [{low}-{high}] ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            raise AnnotationError("input ended before the annotation was complete")
        if line.strip().isdigit() and low <= int(line.strip()) <= high:
            return int(line.strip())
        stdout.write(f"  please answer a number from {low} to {high}\n")
    raise AnnotationError("no valid number after 5 tries")


def annotate_run(
    run_dir: str | Path,
    *,
    stdin: TextIO,
    stdout: TextIO,
    human_steps: int | None = None,
    annotator: str = "",
    task_id: str | None = None,
) -> Annotation:
    """Ask a person about each step of a run; write and return ``annotation.json``."""
    header, steps, result = load_run(run_dir)
    counted = _counted_steps(steps)
    stdout.write(f"Instruction: {header.get('instruction', '?')}\n")
    stdout.write(f"Run ended: {(result or {}).get('status', 'unfinished')} — {len(counted)} step(s) to judge.\n")
    stdout.write(f"Screenshots are in {Path(run_dir)} (report.html replays the run).\n\n")
    marks = []
    for step in counted:
        stdout.write(f"Step {step['index']}: {step.get('action_text') or '(no action)'}\n")
        if step.get("thought"):
            stdout.write(f"  thought: {step['thought'][:300]}\n")
        if step.get("feedback"):
            stdout.write(f"  outcome: {step['feedback'][:200]}\n")
        stdout.write(f"  screenshot: {step.get('screenshot', '')}\n")
        marks.append(StepMark(index=step["index"], correct=_ask_yes_no("  correct?", stdin, stdout)))
    success = _ask_yes_no("Was the instruction completed (success)?", stdin, stdout)
    reached = None
    if not success and human_steps:
        reached = _ask_int(f"How many of the {human_steps} human steps did the run reach?", 0, human_steps, stdin, stdout)
    annotation = Annotation(judge="human", judge_name=annotator, task_id=task_id or header.get("task_id"),
                            success=success, steps=marks, reached_human_steps=reached)
    save_annotation(run_dir, annotation)
    return annotation


# --- an MLLM ----------------------------------------------------------------------------------

_JUDGE_PROMPT = """You judge a phone agent's run. Instruction: {instruction}

The agent's steps (the last screenshot after them is attached):
{steps}

A person needs {human_steps} steps for this instruction.
Answer with one JSON object and nothing else:
{{"success": true|false, "steps": [{{"index": 1, "correct": true|false}}, ...],
  "reached_human_steps": <0..{human_steps}>, "reason": "<one sentence>"}}
A step is correct when it moves toward completing the instruction."""


class MllmJudge:
    """An MLLM that judges a run from its steps and final screenshot."""

    def __init__(self, planner_settings: Any, *, model: str | None = None, client: Any | None = None) -> None:
        self.settings = planner_settings
        self.model = model or planner_settings.model
        self._client = client

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key.get_secret_value() or "unused",
                timeout=self.settings.timeout_s,
                max_retries=min(self.settings.max_retries, 2),
            )
        return self._client

    def judge_run(self, run_dir: str | Path, *, instruction: str, human_steps: int, task_id: str | None = None) -> Annotation:
        _, steps, result = load_run(run_dir)
        counted = _counted_steps(steps)
        lines = "\n".join(f"{s['index']}. {s.get('action_text') or '(no action)'} -> {s.get('feedback') or ''}"[:300]
                          for s in counted) or "(no steps)"
        content: list[dict[str, Any]] = [{"type": "text", "text": _JUDGE_PROMPT.format(
            instruction=instruction, steps=lines, human_steps=human_steps)}]
        shot = _last_screen(Path(run_dir), steps, result)
        if shot is not None:
            data = base64.b64encode(shot.read_bytes()).decode("ascii")
            content.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}})
        try:
            reply = self._get_client().chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": content}],
                temperature=0.0, max_tokens=self.settings.max_tokens,
            )
            from mobile_agent.planner import cap_reply

            text = cap_reply(reply.choices[0].message.content or "", self.settings.max_reply_bytes)
        except Exception as exc:  # the openai client's errors: connection, status, timeout
            raise JudgeError(f"the MLLM judge failed: {exc}", model=self.model) from exc
        annotation = parse_verdict(text, judge_name=self.model, task_id=task_id)
        indices = {s["index"] for s in counted}
        annotation.steps = [m for m in annotation.steps if m.index in indices]
        save_annotation(run_dir, annotation)
        return annotation


def _last_screen(folder: Path, steps: list[dict[str, Any]], result: dict[str, Any] | None) -> Path | None:
    """The screen after the run: ``final.png`` when the run did not end on a Stop (a step's
    own screenshot is taken before its action), else the last step's screenshot."""
    names = [(result or {}).get("final_screenshot")] + [s.get("screenshot") for s in reversed(steps)]
    for name in names:
        if name and (folder / str(name)).is_file():
            return folder / str(name)
    return None


def _flag(value: Any) -> bool:
    """A JSON verdict's boolean; a model may write it as a string ("false")."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    raise TypeError(f"not a true/false verdict: {value!r}")


def parse_verdict(text: str, *, judge_name: str = "", task_id: str | None = None) -> Annotation:
    """The JSON object in a judge's reply (code fences and prose around it tolerated)."""
    match = re.search(r"\{.*\}", text, flags=re.S)
    if not match:
        raise JudgeError("the judge's reply holds no JSON object", reply=text[:300])
    try:
        data = json.loads(match.group(0))
        return Annotation(judge="mllm", judge_name=judge_name, task_id=task_id,
                          success=_flag(data["success"]),
                          steps=[StepMark(index=s["index"], correct=_flag(s["correct"])) for s in data.get("steps", [])],
                          reached_human_steps=data.get("reached_human_steps"),
                          reason=str(data.get("reason", "")))
    except (json.JSONDecodeError, KeyError, TypeError, ValidationError) as exc:
        raise JudgeError(f"the judge's verdict is unusable: {exc}", reply=text[:300]) from exc


# --- into a task result --------------------------------------------------------------------------


def result_from_annotation(task: EvalTask, run_dir: str | Path, annotation: Annotation, **extra: Any) -> TaskResult:
    """The paper's metrics from a judged run: PS = correct / steps, CR = reached / human."""
    _, steps, _ = load_run(run_dir)
    counted = _counted_steps(steps)
    marks = {m.index: m.correct for m in annotation.steps}
    missing = [s["index"] for s in counted if s["index"] not in marks]
    if missing and annotation.judge == "human":
        raise AnnotationError(f"the annotation leaves steps {missing} unjudged", path=str(run_dir))
    correct = sum(1 for s in counted if marks.get(s["index"], False))
    reached = annotation.reached_human_steps or 0
    cr = 1.0 if annotation.success else min(reached, task.human_steps) / task.human_steps
    from eval.mobile_eval.records import StepJudgement

    return TaskResult(
        task_id=task.id, app=task.app, level=task.level, success=annotation.success,
        judged_by=annotation.judge, agent_steps=len(counted), human_steps=task.human_steps,
        ps=correct / len(counted) if counted else None, cr=cr,
        steps=[StepJudgement(index=s["index"], action=s.get("action_text", ""), correct=marks.get(s["index"]))
               for s in counted],
        reasons=[f"judged by {annotation.judge} {annotation.judge_name}".strip()] + ([annotation.reason] if annotation.reason else []),
        trajectory_dir=str(run_dir), replay=str(Path(run_dir) / "report.html"), **extra,
    )
