"""What the verifiers say about one run, and what the data engine decides from it.

T3-Agent filters its data with two model judges (a query verifier, a trajectory verifier;
/work/shared/seeds T3-Agent section 3.4). Here a run can meet four verifiers:

- ``state_validator``: the family's validator read the phone's state (the ground truth on
  the simulated phone: it overrides the judges);
- ``rules``: the rule pre-check of the trajectory (loops, actions that changed nothing;
  ``eval.data_engine.rules``), no model;
- ``query_judge`` / ``trajectory_judge``: the MLLM judges (``eval.data_engine.judges``).

``decide`` turns them into one decision. With a state validator: the validator's verdict
and the rules (a loop is bad training data even when the goal was reached); a judge that
says otherwise is recorded as a *disagreement*, not obeyed. Without one (a phone whose
state cannot be read): every judge and the rules must have accepted.

A judge's reply is one JSON object ``{"verdict": "accept" | "reject", "reason": "..."}``;
``parse_judge_reply`` reads it tolerantly (code fences, prose around it, a few spellings of
the verdict) and strictly (one verdict, a reason, a bounded size), with a clear error.

May import: pydantic, eval.mobile_eval.errors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval.mobile_eval.errors import JudgeError

__all__ = [
    "VERIFICATION_FILE",
    "RunVerification",
    "Verdict",
    "VerdictReplyError",
    "decide",
    "load_verification",
    "parse_judge_reply",
    "save_verification",
]

VERIFICATION_FILE = "verification.json"
VerifierName = Literal["state_validator", "rules", "query_judge", "trajectory_judge"]
JUDGES: tuple[VerifierName, ...] = ("query_judge", "trajectory_judge")

# A verdict is a word and a sentence; a judge that writes pages has not answered the question.
MAX_REPLY_CHARS = 4000
_ACCEPT = frozenset({"accept", "accepted", "pass", "passed", "yes", "true", "valid", "feasible", "ok"})
_REJECT = frozenset({"reject", "rejected", "fail", "failed", "no", "false", "invalid", "infeasible"})
_TRUNCATED = "[reply truncated by mobile-agent"  # mobile_agent.planner.transport.TRUNCATED_MARK


class VerdictReplyError(JudgeError):
    """A judge's reply that holds no usable verdict (``reply``: its start, for the record)."""


class Verdict(BaseModel):
    """One verifier's word on one run. ``passed`` None: the verifier could not judge (its
    reply was unusable, its endpoint failed); ``reason`` says why."""

    model_config = ConfigDict(extra="forbid")

    verifier: VerifierName
    passed: bool | None
    reason: str = ""
    model: str = ""  # the judge model; "" for the validator and the rules
    details: dict[str, list[int]] = Field(default_factory=dict)  # rules: step indices per finding
    prompt_tokens: int = 0  # what asking a judge cost, as its endpoint counted it
    completion_tokens: int = 0


class RunVerification(BaseModel):
    """Every verdict on one run and the decision, saved as ``verification.json`` beside
    the trajectory and copied into the exported record."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    task_id: str
    passed: bool
    decided_by: list[VerifierName]
    reason: str
    verdicts: list[Verdict]
    disagreements: list[str] = Field(default_factory=list)

    def verdict(self, name: VerifierName) -> Verdict | None:
        return next((v for v in self.verdicts if v.verifier == name), None)

    @property
    def rejected_by(self) -> str:
        """The deciding verifiers that did not pass, for the dataset card's rejection count."""
        names = [n for n in self.decided_by if (v := self.verdict(n)) is None or v.passed is not True]
        return "rejected by " + (", ".join(names) if names else "no verifier")

    def for_record(self) -> dict[str, object]:
        """What an exported record keeps: the decision, every verdict and the disagreements."""
        return self.model_dump(mode="json", exclude={"schema_version", "task_id"})


def _verdict_word(value: object) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().strip(".!").lower()
    if word in _ACCEPT:
        return True
    if word in _REJECT:
        return False
    raise VerdictReplyError(f"the verdict {str(value)[:40]!r} is neither accept nor reject")


def parse_judge_reply(text: str, *, max_chars: int = MAX_REPLY_CHARS) -> tuple[bool, str]:
    """(accepted, reason) from a judge's reply; ``VerdictReplyError`` saying what is wrong."""
    head = text[:200]
    if _TRUNCATED in text or len(text) > max_chars:
        raise VerdictReplyError(f"the judge's reply is too long ({len(text)} characters, at most {max_chars}): "
                                "a verdict is one JSON object", reply=head)
    match = re.search(r"\{.*\}", text, flags=re.S)
    if match is None:
        raise VerdictReplyError("the judge's reply holds no JSON object", reply=head)
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise VerdictReplyError(f"the judge's reply is not valid JSON: {exc.msg}", reply=head) from exc
    if not isinstance(data, dict):
        raise VerdictReplyError("the judge's reply is not a JSON object", reply=head)
    fields = {str(k).strip().lower(): v for k, v in data.items()}
    if "verdict" not in fields:
        raise VerdictReplyError("the judge's reply has no \"verdict\"", reply=head)
    reason = fields.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise VerdictReplyError("the judge's reply has no \"reason\" sentence", reply=head)
    try:
        return _verdict_word(fields["verdict"]), " ".join(reason.split())[:500]
    except VerdictReplyError as exc:
        raise VerdictReplyError(exc.message, reply=head) from None


def decide(task_id: str, verdicts: list[Verdict]) -> RunVerification:
    """The decision from the verdicts (see the module docstring)."""
    by_name = {v.verifier: v for v in verdicts}
    state, rules = by_name.get("state_validator"), by_name.get("rules")
    disagreements: list[str] = []
    if state is not None and state.passed is not None:
        for name in JUDGES:
            judge = by_name.get(name)
            if judge is None or judge.passed is None:
                continue
            # a query judged infeasible although the phone shows it done; a trajectory judged
            # either way against the validator (a feasible query can still fail: no disagreement)
            if (name == "query_judge" and not judge.passed and state.passed) or (
                    name == "trajectory_judge" and judge.passed != state.passed):
                disagreements.append(f"{name} {'accepted' if judge.passed else 'rejected'} "
                                     f"({judge.reason}); the state validator {'passed' if state.passed else 'failed'} "
                                     "the run and decides")
        deciders: list[VerifierName] = ["state_validator"]
    else:
        deciders = [n for n in JUDGES if n in by_name]
    if rules is not None and deciders:  # the rules alone never pass a run: they see no goal
        deciders.append("rules")
    failed = [by_name[n] for n in deciders if by_name[n].passed is not True]
    if not deciders:
        reason = "no verifier could judge the run (no readable state, no judge)"
    elif failed:
        reason = "; ".join(f"{v.verifier}: {v.reason}" for v in failed)
    else:
        reason = "passed by " + ", ".join(deciders)
    return RunVerification(task_id=task_id, passed=bool(deciders) and not failed, decided_by=deciders,
                           reason=reason[:1000], verdicts=verdicts, disagreements=disagreements)


def save_verification(folder: Path, verification: RunVerification) -> Path:
    path = folder / VERIFICATION_FILE
    path.write_text(verification.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def load_verification(folder: Path) -> RunVerification | None:
    """The saved verification of a run, None when there is none or it cannot be read
    (a verification is recomputed rather than trusted half-written)."""
    path = folder / VERIFICATION_FILE
    try:
        return RunVerification.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None
