"""GPT4Tools' step rates of a planner on an exported dataset, step by step with the gold history.

``mobile-agent eval families`` scores a planner *online*: the planner drives the phone, and
its steps are aligned to the reference afterwards. GPT4Tools scores each step *offline*:
the model is given the instruction, the steps so far as the reference took them, and the
current input, and its answer is compared with the reference step. That is what this
module does with a dataset's ``runs.jsonl`` (the exported, verified runs: query, the
screenshot of each step, the actions): for every step, the planner is asked with the run's
screenshot and the gold history, and its action is scored against the recorded one with
the matching rules of Mobile-Eval (``matching.args_score``: SR_act = same operation,
SR_args = η, SR = both with η > 0.5). Rates are per run, then averaged per level
(``metrics.summarize_level``), like the online figures. Nothing runs on a phone, so a
dataset's validation split (families never trained on) measures a tuned model directly.

The reference is read as the paper's operations. A planner whose dialect answers in screen
points (UI-TARS, mobile_use, AutoGLM) is judged by the effect of its answer, as the online
figures are (``mobile_eval.effects``): a tap stands for a ``Click text`` / ``Click icon``
and scores when its point lands on the reference target located on the step's screenshot
(the model's own point: nothing snaps it offline); a key is the paper's key, a stroke its
page or swipe operation.

May import: numpy, Pillow, mobile_agent (planner types, operations, the ``Locator`` protocol,
locate), eval.mobile_eval (effects, matching, metrics, records, runner), eval.data_engine.judges
(read_screen).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval.data_engine.judges import read_screen
from eval.mobile_eval.effects import effect_ref
from eval.mobile_eval.matching import ARGS_THRESHOLD, ActionRef, ReferenceStep, best_args
from eval.mobile_eval.metrics import LEVELS, summarize_level
from eval.mobile_eval.records import TaskResult
from eval.mobile_eval.runner import parse_action_ref
from mobile_agent.errors import OperationError
from mobile_agent.planner import PlanRequest

if TYPE_CHECKING:
    from mobile_agent.operations import Locator

__all__ = ["StepScore", "load_runs", "score_runs"]

StepScore = tuple[bool, float]  # (same operation, η)


def load_runs(dataset: Path, split: str | None = "validation") -> list[dict[str, Any]]:
    """The records of ``dataset/runs.jsonl`` in ``split`` (None: all)."""
    path = dataset / "runs.jsonl"
    runs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in runs if split is None or r.get("split") == split]


def _score(predicted: ActionRef | None, expected: ActionRef) -> StepScore:
    best = best_args(predicted, ReferenceStep((expected,))) if predicted is not None else None
    return (best is not None, best if best is not None else 0.0)


def _default_locator() -> Locator:
    from mobile_agent.locate import build_locator
    from mobile_agent.settings import Settings

    return build_locator(Settings())


def _predicted(parsed: Any, screen: Any, locator: Callable[[], Locator]) -> ActionRef:
    params = parsed.params.model_dump()
    point = (int(params["x"]), int(params["y"])) if params.get("x") is not None and params.get("y") is not None else None
    ends = [params.get(k) for k in ("x1", "y1", "x2", "y2")]
    swipe = [float(v) for v in ends] if all(v is not None for v in ends) else None
    return effect_ref(parsed.name, params, parsed.text, point=point, swipe=swipe, frame=lambda: screen, locator=locator)


def score_run(run: dict[str, Any], dataset: Path, planner: Any,
              locator: Callable[[], Locator] = _default_locator) -> list[StepScore]:
    """Ask ``planner`` (a ``PlannerLike``) for every step of one run with the gold history;
    ``locator``: the perception that locates a reference target for a grounded answer."""
    scores = []
    history: list[str] = []
    for index, (action, image) in enumerate(zip(run["actions"], run["files"], strict=True), start=1):
        expected = parse_action_ref(action)
        if expected.is_stop:
            break
        screen = read_screen(dataset / image)
        if screen is None:
            raise FileNotFoundError(f"{dataset / image}: the step's screenshot is missing")
        reply = planner.plan(PlanRequest(instruction=run["query"], screenshot=screen, history=list(history)))
        try:
            parsed = planner.parse(reply)
            predicted: ActionRef | None = _predicted(parsed, screen, locator)
        except OperationError:
            predicted = None  # an answer with no valid operation: wrong at this step
        scores.append(_score(predicted, expected))
        history.append(f"Step {index}: {expected.text or action} -> done")
    return scores


def score_runs(runs: Iterable[dict[str, Any]], dataset: Path, planner: Any,
               on_run: Callable[[str, list[StepScore]], None] | None = None,
               locator: Callable[[], Locator] = _default_locator) -> dict[str, Any]:
    """{"levels": {...}, "overall": {...}, "runs": {id: {sr_act, sr_args, sr, steps}}}."""
    records = []
    per_run: dict[str, Any] = {}
    for run in runs:
        scores = score_run(run, dataset, planner, locator)
        if on_run is not None:
            on_run(run["id"], scores)
        if not scores:
            continue
        n = len(scores)
        rates = {"sr_act": sum(a for a, _ in scores) / n, "sr_args": sum(e for _, e in scores) / n,
                 "sr": sum(1 for a, e in scores if a and e > ARGS_THRESHOLD) / n}
        per_run[run["id"]] = {**{k: round(v, 4) for k, v in rates.items()}, "steps": n, "level": run["level"]}
        records.append(TaskResult(task_id=run["id"], app=", ".join(run.get("apps") or ["?"]), level=run["level"],
                                  success=True, judged_by="state", agent_steps=n, human_steps=n, cr=1.0, **rates))

    def figures(level: int | None) -> dict[str, Any]:
        rounded = summarize_level(records, level).rounded()
        return {k: rounded[k] for k in ("n", "sr_act", "sr_args", "sr")}

    return {"levels": {str(n): figures(n) for n in LEVELS if any(r.level == n for r in records)},
            "overall": figures(None) if records else None, "runs": per_run}
