"""Judging an agent's steps against a task's reference actions.

The reference solution of a task is a list of reference steps; each step is one action in
the model's action syntax, or several alternatives separated by `` || `` (``Open App
(Notes) || Click text (Notes)``: either reaches the same screen).

**Argument score** (GPT4Tools' η, adapted): the mean over the union of parameter names of
a per-argument score: positions and directions (``position``, ``direction``) score 1 if
the same words (order-free, case-free) else 0; numbers and booleans 1 if equal; texts the
normalized Indel similarity (rapidfuzz ``ratio``, case- and space-folded) — BLEU, which
GPT4Tools uses for prompts, is degenerate on the one- to five-word arguments of phone
actions. A parameter missing on one side scores 0; two parameterless actions score 1.

**Alignment rule** (how PS and CR are judged on the simulator). A pointer ``p`` starts at
the first reference step. For each agent step in order (its final ``Stop`` excluded, as the
paper counts steps):

- the *expected* action is reference step ``p``; ``act_match`` says whether the agent chose
  its operation (any alternative), ``args_score`` is the best η among the alternatives with
  that operation — these give GPT4Tools' SR_act, SR_args and SR (act match and η > 0.5);
- the step is *correct* if it was carried out on the device and matches (same operation,
  η > 0.5) some reference step ``j ≥ p`` — the expected one or a later one, since skipping
  a step that the screen made unnecessary is not a mistake; the match consumes ``j`` and
  moves ``p`` to ``j + 1``. Repeating a consumed step, a wrong operation, wrong arguments,
  or a right action that could not be carried out (text not found) are incorrect steps.

Then PS = correct steps / agent steps, and the reference steps *reached* are ``p`` (the
furthest consumed step); CR = p / len(reference), or 1 when the validator says the task
succeeded (the paper's rule).

**Grounded dialects** (UI-TARS, Qwen ``mobile_use``, AutoGLM) tap at points; the
reference names texts and icons. Such a step is judged by its effect, as the data
engine's targets map a step the other way (``eval.data_engine.targets``): a tap stands
for a ``Click text`` or ``Click icon`` and a long press for a ``Long press`` (the act
matches), and its argument score is 1 when the point lands on that reference target as
located on the step's own screenshot, else 0 (``ActionRef.lands_on``, set by
``mobile_eval.effects``). The ``Exit`` and ``Home`` operations are the same key.

May import: rapidfuzz, mobile_eval.records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from eval.mobile_eval.records import StepJudgement

__all__ = [
    "ALTERNATIVE_SEPARATOR",
    "POINT_STANDS_FOR",
    "ActionRef",
    "ReferenceStep",
    "StepScores",
    "args_score",
    "best_args",
    "judge_steps",
    "parse_reference",
]

ALTERNATIVE_SEPARATOR = " || "
EXACT_KEYS = frozenset({"position", "direction"})
ARGS_THRESHOLD = 0.5  # GPT4Tools' SR: I(η > 0.5)
STOP_NAMES = frozenset({"stop", "finished"})  # the paper's Stop, a grounded dialect's Finished
# a grounded step at a point, and the paper's operations it may stand for (judged by effect)
POINT_STANDS_FOR: dict[str, frozenset[str]] = {
    "tap_point": frozenset({"click_text", "click_icon"}),
    "double_tap_point": frozenset({"click_text", "click_icon"}),
    "long_press_point": frozenset({"long_press"}),
}
_SAME_NAME = {"exit": "home"}  # Exit presses Home


@dataclass(frozen=True)
class ActionRef:
    """An action as an operation name and parameters, plus the text it was written as."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    # a step at a point: whether it lands on a reference action's target (None: cannot say)
    lands_on: Callable[[ActionRef], bool | None] | None = field(default=None, compare=False, repr=False)

    @property
    def is_stop(self) -> bool:
        return self.name.strip().lower() in STOP_NAMES


@dataclass(frozen=True)
class ReferenceStep:
    alternatives: tuple[ActionRef, ...]

    @property
    def text(self) -> str:
        return ALTERNATIVE_SEPARATOR.join(a.text or a.name for a in self.alternatives)


ActionParser = Callable[[str], ActionRef]


def parse_reference(lines: Sequence[str], parse: ActionParser) -> list[ReferenceStep]:
    """Reference steps from script lines (``A || B`` = alternatives); ``Stop`` lines dropped."""
    steps: list[ReferenceStep] = []
    for line in lines:
        if not line.strip():
            continue
        alternatives = tuple(parse(part.strip()) for part in line.split(ALTERNATIVE_SEPARATOR))
        if all(a.is_stop for a in alternatives):
            continue
        steps.append(ReferenceStep(alternatives))
    return steps


def _words(value: Any) -> frozenset[str]:
    return frozenset(str(value).replace(",", " ").replace("-", " ").lower().split())


def fold(value: Any) -> str:
    """``value`` as text, case-free, its whitespace folded to single spaces (None is "").
    The validators compare texts the same way."""
    return " ".join(str("" if value is None else value).casefold().split())


def _argument_score(key: str, predicted: Any, expected: Any) -> float:
    if key in EXACT_KEYS:
        return 1.0 if _words(predicted) == _words(expected) else 0.0
    if isinstance(expected, bool) or isinstance(predicted, bool):
        return 1.0 if predicted == expected else 0.0
    if isinstance(expected, int | float) and isinstance(predicted, int | float):
        return 1.0 if predicted == expected else 0.0
    if expected is None or predicted is None:
        return 1.0 if expected is predicted else 0.0
    return fuzz.ratio(fold(predicted), fold(expected)) / 100.0


def args_score(predicted: Mapping[str, Any], expected: Mapping[str, Any]) -> float:
    """GPT4Tools' η: the mean per-argument score over the union of parameter names."""
    pred = {k: v for k, v in predicted.items() if v is not None}
    exp = {k: v for k, v in expected.items() if v is not None}
    keys = sorted(set(pred) | set(exp))
    if not keys:
        return 1.0
    total = sum(_argument_score(k, pred[k], exp[k]) if k in pred and k in exp else 0.0 for k in keys)
    return total / len(keys)


def _name(action: ActionRef) -> str:
    name = action.name.strip().lower()
    return _SAME_NAME.get(name, name)


def _same_operation(a: ActionRef, b: ActionRef) -> bool:
    return _name(a) == _name(b)


def best_args(action: ActionRef, step: ReferenceStep) -> float | None:
    """The best η among the alternatives ``action`` can stand for; None when it stands for none."""
    scores = []
    stands_for = POINT_STANDS_FOR.get(_name(action), frozenset())
    for alt in step.alternatives:
        if _same_operation(action, alt):
            scores.append(args_score(action.params, alt.params))
        elif action.lands_on is not None and _name(alt) in stands_for:
            scores.append(1.0 if action.lands_on(alt) else 0.0)
    return max(scores) if scores else None


@dataclass(frozen=True)
class StepScores:
    """The judged steps and the figures they give."""

    steps: list[StepJudgement]
    agent_steps: int
    correct_steps: int
    reached: int
    reference_steps: int

    @property
    def ps(self) -> float | None:
        return self.correct_steps / self.agent_steps if self.agent_steps else None

    def cr(self, success: bool) -> float:
        if success or not self.reference_steps:
            return 1.0 if success else 0.0
        return self.reached / self.reference_steps

    def _rate(self, hit: Callable[[StepJudgement], float]) -> float | None:
        return sum(hit(s) for s in self.steps) / len(self.steps) if self.steps else None

    @property
    def sr_act(self) -> float | None:
        return self._rate(lambda s: 1.0 if s.act_match else 0.0)

    @property
    def sr_args(self) -> float | None:
        return self._rate(lambda s: s.args_score or 0.0)

    @property
    def sr(self) -> float | None:
        return self._rate(lambda s: 1.0 if s.act_match and (s.args_score or 0.0) > ARGS_THRESHOLD else 0.0)


def judge_steps(
    actions: Sequence[ActionRef | None],
    reference: Sequence[ReferenceStep],
    executed: Sequence[bool] | None = None,
) -> StepScores:
    """Judge an agent's actions (``None`` for a step whose reply did not parse);
    ``executed[i]`` is False for a step that could not be carried out (default: all were).

    The last action is dropped when it is a Stop; see the module docstring for the rule.
    """
    actions = list(actions)
    done = list(executed) if executed is not None else [True] * len(actions)
    if len(done) != len(actions):
        raise ValueError("executed needs one flag per action")
    if actions and actions[-1] is not None and actions[-1].is_stop:
        actions.pop()
        done.pop()
    pointer = 0
    judged: list[StepJudgement] = []
    for index, action in enumerate(actions, start=1):
        expected = reference[pointer] if pointer < len(reference) else None
        act_match: bool | None = None
        score: float | None = None
        matched: int | None = None
        if expected is not None:
            best = best_args(action, expected) if action is not None else None
            act_match = best is not None
            score = best if best is not None else 0.0
        if action is not None and done[index - 1]:
            for j in range(pointer, len(reference)):
                best = best_args(action, reference[j])
                if best is not None and best > ARGS_THRESHOLD:
                    matched = j
                    pointer = j + 1
                    break
        judged.append(
            StepJudgement(
                index=index,
                action=action.text if action is not None else "",
                correct=matched is not None,
                expected=expected.text if expected is not None else None,
                act_match=act_match,
                args_score=round(score, 4) if score is not None else None,
                matched_reference=matched,
            )
        )
    return StepScores(
        steps=judged,
        agent_steps=len(actions),
        correct_steps=sum(1 for s in judged if s.correct),
        reached=pointer,
        reference_steps=len(reference),
    )
