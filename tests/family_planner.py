"""A scripted planner for family instances, served by the scripted LLM server: it answers
each planning request in the paper's Observation / Thought / Action format with a step of
the instance's reference solution — played as is, perturbed, or taken from another seed —
so that GPT4Tools' step rates can be measured against the references without a model.

- ``reference``: the reference steps (the first of ``A || B`` alternatives), then Stop;
- ``perturbed``: the same, but with probability ``typo`` an argument loses one character
  (an OCR-like misspelling: ``Click text (Dispay & brightness)``), and with probability
  ``detour`` a needless ``Page down`` comes before a step;
- ``other-seed``: the reference of the same family at the nearest later seed whose
  parameters differ (a plausible plan for another task: right operations, wrong arguments).

Which instance a request is about: the instruction in its system message; which step:
the number of lines in its operation history. The completion check is answered "done"
and a candidate choice "1". Deterministic: its random draws are seeded by the task id.
Values a family derives from the phone at run time (today's date, the forecast) are read
from the phone's state (``read_state``) at the instance's first step, as the runner does.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from eval.families import FAMILIES
from eval.mobile_eval.schema import EvalTask

__all__ = ["FamilyPlanner", "Mode", "planned_lines"]

Mode = Literal["reference", "perturbed", "other-seed"]
DONE = "Verdict: done\nReason: the screen shows the instruction carried out."
_ARGS = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<args>.*)\)\s*$")


def _typo(line: str, rng: random.Random) -> str:
    match = _ARGS.match(line)
    if match is None or len(match["args"]) < 4:
        return line
    args = match["args"]
    cut = rng.randrange(1, len(args) - 1)  # never the first character, never the last
    return f"{match['name']} ({args[:cut]}{args[cut + 1:]})"


def planned_lines(task: EvalTask, mode: Mode, *, derived: dict[str, str] | None = None,
                  typo: float = 0.3, detour: float = 0.15, offline: bool = False) -> list[str]:
    """The action lines the planner plays for ``task`` in ``mode`` (``derived``: the
    run-time values of a family that needs some). ``offline``: asked step by step with the
    gold history, a detour takes the place of its step (inserted, it would shift every
    later answer by one)."""
    from eval.families import family_by_name

    source = task
    if mode == "other-seed":
        family = family_by_name(task.notes.removeprefix("family "))
        seed = task.seed or 0
        source = next((other for s in range(seed + 1, seed + 200)
                       if (other := family.instance(s)).params != task.params), task)
    lines = [line.split(" || ")[0].strip() for line in source.reference_lines(derived)]
    if mode != "perturbed":
        return lines
    rng = random.Random(task.id)
    out: list[str] = []
    for line in lines:
        if rng.random() < detour:
            out.append("Page down")
            if offline:
                continue
        out.append(_typo(line, rng) if rng.random() < typo else line)
    return out


class FamilyPlanner:
    """A callable for ``ScriptedLLMServer``: the planner's answers for these instances."""

    def __init__(self, tasks: Sequence[EvalTask], mode: Mode = "reference", *,
                 read_state: Callable[[], dict[str, Any]] | None = None, **perturbation: Any) -> None:
        self.mode = mode
        self.read_state = read_state
        self.perturbation = perturbation
        # by instruction (derived values are not in the families' instructions: "?" stands in)
        self.tasks = {task.render(dict.fromkeys(task.derived, "?")): task for task in tasks}
        self.lines = {text: planned_lines(task, mode, **perturbation)
                      for text, task in self.tasks.items() if not task.derived}

    def _lines(self, instruction: str, first_step: bool) -> list[str]:
        task = self.tasks[instruction]
        if task.derived and (first_step or instruction not in self.lines):
            from eval.mobile_eval.app_validators import derive

            if self.read_state is None:
                raise AssertionError(f"{task.id} derives {task.derived} from the phone: give read_state")
            values = derive(list(task.derived), self.read_state())
            self.lines[instruction] = planned_lines(task, self.mode, derived=values, **self.perturbation)
        return self.lines[instruction]

    def __call__(self, request_json: dict[str, Any]) -> str:
        messages = request_json.get("messages", [])
        texts = ["\n".join(p.get("text", "") for p in m["content"]) if isinstance(m.get("content"), list)
                 else str(m.get("content") or "") for m in messages]
        everything = "\n".join(texts)
        if "Verdict" in everything and "Reason" in everything:
            return DONE
        if "Answer with its number only" in everything:
            return "1"
        system = texts[0] if texts else ""
        instruction = max((i for i in self.tasks if i in system), key=len, default=None)
        if instruction is None:
            raise AssertionError(f"no instance's instruction in the request: {system[:200]!r}")
        user = texts[-1]
        history = user.split("## Operation history", 1)[-1].split("##", 1)[0]
        index = 0 if "None yet" in history else len(re.findall(r"(?m)^\d+\. ", history))
        lines = self._lines(instruction, index == 0)
        action = lines[index] if index < len(lines) else "Stop"
        return f"Observation: a phone screen.\nThought: step {index + 1} of the plan.\nAction: {action}"


def wrong_solution(task: EvalTask, seeds: Sequence[int] = range(1, 60)) -> EvalTask:
    """The same family's solution for other parameters (or, without any, the solution cut
    short before its last step), kept with this instance's validator."""
    family = FAMILIES[task.notes.removeprefix("family ")]
    for seed in seeds:
        other = family.instance(seed)
        if other.params != task.params and other.setup == task.setup and not task.derived:
            lines = [line.split(" || ")[0] for line in other.reference_lines()]
            return task.model_copy(update={"id": f"wrong-{task.id}", "reference": lines, "human_steps": len(lines)})
    lines = task.reference[:-1]
    return task.model_copy(update={"id": f"wrong-{task.id}", "reference": lines, "human_steps": max(1, len(lines))})
