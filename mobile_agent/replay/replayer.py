"""Replaying a cached plan in place of the model: ``ReplayingPlanner``.

It is a planner (``PlannerLike``) wrapped around the real one, so the agent loop does
not know whether a step was replayed or planned. For each step it compares the screen
with the one the cached step acted on (``ScreenFingerprint``) and, for a text target,
checks that perception finds the target on the current screen; while both hold it
answers the cached operation with no model call. The operation then runs as any other:
its target is located again by perception (never a recorded point), so another screen
size, theme or scroll position still works. A screen with the recorded layout at a
glance needs no OCR to match; its target is read in the band around the recorded tap
first (``relocate.TargetFinder``), the whole screen only when it is not there.

The first divergence hands over to the real planner for good: a screen unlike the
recorded one, a target not found, a replayed step that failed or changed nothing (the
loop's feedback), a slot without a value. The model then sees the history so far and
carries on; the completion check decides at the end unless the whole plan replayed and
the final screen matches the recorded final screen.

While the model plans (``plan`` of the real planner), the fingerprint of the same frame
is computed on a worker thread: its OCR lands in perception's per-frame cache, so the
operation that follows usually finds its text without waiting for OCR.

After the run, ``learn`` stores what worked: a completed run that needed the model
becomes the template's newest plan; a replay that completed counts a success, one that
did not a failure (plans that fail more than they succeed are not replayed).

May import: the standard library, numpy, ``mobile_agent`` (operations, planner types,
errors; the agent's records for types only: the agent imports this package) and this
package.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mobile_agent.errors import ConfigError
from mobile_agent.operations.context import Locator, ScreenshotLike
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.planner.protocol import PlannerLike
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage
from mobile_agent.replay.fingerprint import ScreenFingerprint, fingerprint, layout_similarity, thumbnail
from mobile_agent.replay.plans import CachedPlan, CachedStep, InstructionTemplate, fill_slots, to_slots
from mobile_agent.replay.relocate import TargetFinder, parse_cached
from mobile_agent.replay.store import PlanStore
from perception.types import Location, TextLine

if TYPE_CHECKING:  # the agent package imports this one: records only for the types
    from mobile_agent.agent.records import RunResult, StepRecord

__all__ = ["REPLAY_SOURCE", "ReplayingPlanner"]

log = logging.getLogger(__name__)

REPLAY_SOURCE = "replay"
# parameters that hold a point: such a step cannot be re-localized, so it is not replayed
_POINT_PARAMS = frozenset({"x", "y", "point", "coordinate", "coordinates", "start", "end", "x1", "y1", "x2", "y2"})
_TEXT_TARGET_OPERATIONS = frozenset({"click_text", "long_press"})
_CANDIDATE_REACH = 0.15
# thumbnails this alike are the same screen (same layout, either theme): no OCR needed
SAME_LAYOUT = 0.95  # a candidate this far (share of the diagonal) from the recorded tap is another one


@dataclass
class _Seen:
    """One planning call: the frame's size and thumbnail; its full fingerprint (with
    OCR: computed in the background while the model plans, or on demand while
    replaying) or, for a replayed step, the recorded fingerprint it matched; the action
    the step took, and whether it was replayed."""

    size: tuple[int, int]
    thumb: tuple[float, ...]
    full: Future[ScreenFingerprint] | None = None
    recorded: ScreenFingerprint | None = None
    action: str | None = None
    replayed: bool = False

    def fingerprint(self) -> ScreenFingerprint:
        if self.recorded is not None:
            return self.recorded
        if self.full is None:
            raise RuntimeError("no fingerprint was taken of this frame")
        return self.full.result()


def _pixels(screenshot: object) -> np.ndarray:
    pixels = getattr(screenshot, "pixels", screenshot)
    if not isinstance(pixels, np.ndarray):
        raise TypeError(f"expected a screenshot or an RGB array, got {type(screenshot).__name__}")
    return pixels


def _replayable(operation: dict[str, Any]) -> bool:
    params = operation.get("params") or {}
    return not (_POINT_PARAMS & set(params))


class ReplayingPlanner:
    """A planner that replays the cached plan of ``instruction`` while the screens
    match, then hands over to ``inner`` (built by ``inner_factory`` on first need)."""

    def __init__(
        self,
        store: PlanStore,
        instruction: str,
        *,
        inner_factory: Callable[[], PlannerLike],
        locator: Locator,
        ocr: Callable[[np.ndarray], list[TextLine]],
        min_similarity: float = 0.5,
    ) -> None:
        self.store = store
        self.instruction = instruction
        self.template = InstructionTemplate.of(instruction)
        self.min_similarity = min_similarity
        self._inner_factory = inner_factory
        self._inner: PlannerLike | None = None
        self._ocr = ocr
        self._finder = TargetFinder(locator, ocr)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replay-fingerprint")
        self._seen: list[_Seen] = []
        self._cursor = 0  # the next cached step
        self._replaying_step: CachedStep | None = None
        self._replayed_stop = False
        self._plans = store.find_all(self.template.template)
        self.cached: CachedPlan | None = None  # the plan being replayed, chosen on the first screen
        self.divergence: str | None = None if self._plans else "no cached plan for this instruction"

    # -- what the run asks ----------------------------------------------------------

    @property
    def replaying(self) -> bool:
        return self.divergence is None

    @property
    def replayed_steps(self) -> int:
        return sum(1 for seen in self._seen if seen.replayed)

    def plan(self, request: PlanRequest) -> PlanReply:
        pixels = _pixels(request.screenshot)
        seen = _Seen((pixels.shape[1], pixels.shape[0]), thumbnail(pixels))
        self._seen.append(seen)
        self._replaying_step = None
        if self.divergence is None:
            reply = self._replay(request, seen, pixels)
            if reply is not None:
                seen.replayed = True
                return reply
        if seen.full is None:  # OCR it while the model thinks (the operation then finds it cached)
            seen.full = self._pool.submit(self._fingerprint, pixels, seen.thumb)
        return self._inner_planner().plan(request)

    def parse(self, reply: PlanReply) -> ParsedAction:
        if getattr(reply, "source", "model") == REPLAY_SOURCE:
            action = parse_cached(reply.action_text)
        else:
            action = self._inner_planner().parse(reply)
        if self._seen:
            self._seen[-1].action = action.text
        return action

    def choose_candidate(
        self, instruction: str, location: Location, screenshot: ScreenshotLike | None = None
    ) -> int | None:
        step = self._replaying_step
        if step is not None and step.point is not None and screenshot is not None and location.candidates:
            index = self._nearest_candidate(location, step.point, (screenshot.width, screenshot.height))
            if index is not None:
                return index
        if self._inner is None and not self._can_build_inner():
            return None
        return self._inner_planner().choose_candidate(instruction, location, screenshot)

    def check_completion(
        self, instruction: str, history: Sequence[str], screenshot: ScreenshotLike
    ) -> CompletionVerdict:
        if self._replayed_stop:
            plan_id = self.cached.id if self.cached is not None else "?"
            return CompletionVerdict(
                done=True,
                reason=f"every step of cached plan #{plan_id} replayed and the screen matches the one the plan ended on",
            )
        return self._inner_planner().check_completion(instruction, history, screenshot)

    @property
    def last_choice_usage(self) -> Usage:
        return self._inner.last_choice_usage if self._inner is not None else Usage()

    # -- after the run --------------------------------------------------------------

    def learn(self, result: RunResult) -> int | None:
        """Store what the run taught; the id of a newly stored plan, if any."""
        try:
            completed = result.ok
            used_plan = self.cached is not None and self.cached.id is not None and self.replayed_steps > 0
            if used_plan and self.cached is not None and self.cached.id is not None:
                self.store.note_use(self.cached.id, succeeded=completed and self.divergence is None)
            if not completed or (used_plan and self.divergence is None):
                return None
            if any(_persons_part(s) for s in result.steps):
                return None  # what a person did or answered cannot be replayed without them
            plan = self._plan_from(result)
            return self.store.save(plan) if plan is not None else None
        finally:
            self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    # -- replay ---------------------------------------------------------------------

    def _replay(self, request: PlanRequest, seen: _Seen, pixels: np.ndarray) -> PlanReply | None:
        if self.cached is None:
            self.cached = self._plan_for(seen, pixels)
            if self.cached is None:
                return self._diverge("no cached plan of this instruction starts on a screen like this one")
        plan = self.cached
        if request.feedback or request.reflection_note:
            why = "; ".join(request.feedback) or request.reflection_note or ""
            return self._diverge(f"the replayed step {self._cursor} did not work: {why}")
        if self._cursor >= len(plan.steps):
            similarity = self._match(seen, pixels, plan.final)
            if similarity < self.min_similarity:
                return self._diverge(
                    f"after the {len(plan.steps)} cached steps the screen differs from the one the plan ended on "
                    f"(similarity {similarity:.2f})"
                )
            self._replayed_stop = True
            seen.recorded = plan.final
            return self._reply("Stop", f"all {len(plan.steps)} cached steps replayed; the screen matches the end")
        step = plan.steps[self._cursor]
        similarity = self._match(seen, pixels, step.fingerprint)
        if similarity < self.min_similarity:
            return self._diverge(
                f"the screen differs from the one cached step {self._cursor + 1} acted on (similarity {similarity:.2f})"
            )
        action = fill_slots(step.action, self.template.values)
        if action is None:
            return self._diverge(f"cached step {self._cursor + 1} needs a value the instruction does not give")
        if step.operation in _TEXT_TARGET_OPERATIONS:
            missing = self._finder.missing(action, pixels, step.point, read=seen.full is not None)
            if missing:
                return self._diverge(missing)
        self._cursor += 1
        self._replaying_step = step
        seen.recorded = step.fingerprint
        return self._reply(action, f"cached step {self._cursor} of {len(plan.steps)} (screen similarity {similarity:.2f})")

    def _plan_for(self, seen: _Seen, pixels: np.ndarray) -> CachedPlan | None:
        """The plan whose first screen is most like this one (the newest among equals)."""
        best: tuple[float, CachedPlan] | None = None
        for plan in self._plans:
            first = plan.steps[0].fingerprint if plan.steps else plan.final
            similarity = self._match(seen, pixels, first)
            if similarity >= self.min_similarity and (best is None or similarity > best[0]):
                best = (similarity, plan)
        return best[1] if best else None

    def _match(self, seen: _Seen, pixels: np.ndarray, recorded: ScreenFingerprint) -> float:
        """How alike this screen is to ``recorded``: the same layout at a glance (the
        thumbnails, no OCR) is enough; otherwise its texts decide (OCR, cached per frame,
        so the operation that follows reuses it)."""
        if layout_similarity(seen.thumb, recorded.thumb) >= SAME_LAYOUT:
            return 1.0
        if seen.full is None:
            seen.full = self._pool.submit(self._fingerprint, pixels, seen.thumb)
        return recorded.similarity(seen.full.result())

    def _reply(self, action: str, why: str) -> PlanReply:
        plan_id = self.cached.id if self.cached is not None else "?"
        return PlanReply(
            observation=f"Replayed from cached plan #{plan_id}.",
            thought=why,
            action_text=action,
            raw=f"Action: {action}",
            usage=Usage(),
            source=REPLAY_SOURCE,
        )

    def _diverge(self, reason: str) -> PlanReply | None:
        """Hand over to the real planner for the rest of the run (None: no replayed reply)."""
        self.divergence = reason
        log.info("replay of %r hands over to the planner: %s", self.instruction, reason)
        return None

    @staticmethod
    def _nearest_candidate(location: Location, point: tuple[float, float], size: tuple[int, int]) -> int | None:
        width, height = size
        target = (point[0] * width, point[1] * height)
        reach = _CANDIDATE_REACH * float(np.hypot(width, height))
        best: tuple[float, int] | None = None
        for candidate in location.candidates:
            cx, cy = candidate.box.center
            distance = float(np.hypot(cx - target[0], cy - target[1]))
            if distance <= reach and (best is None or distance < best[0]):
                best = (distance, candidate.index)
        return best[1] if best else None

    # -- the real planner -----------------------------------------------------------

    def plan_with_model(self) -> PlannerLike:
        """The real planner, built now (``ConfigError`` when none is configured)."""
        return self._inner_planner()

    def _can_build_inner(self) -> bool:
        try:
            self._inner_planner()
        except ConfigError:
            return False
        return True

    def _inner_planner(self) -> PlannerLike:
        with self._lock:
            if self._inner is None:
                try:
                    self._inner = self._inner_factory()
                except ConfigError as exc:
                    where = f" ({self.divergence})" if self.divergence else ""
                    raise ConfigError(
                        f"the cached plan cannot go on{where} and no planner is available: {exc.message}"
                    ) from exc
            return self._inner

    def _fingerprint(self, pixels: np.ndarray, thumb: tuple[float, ...]) -> ScreenFingerprint:
        return fingerprint(pixels, self._ocr(pixels), thumb)

    # -- learning -------------------------------------------------------------------

    def _plan_from(self, result: RunResult) -> CachedPlan | None:
        steps: list[CachedStep] = []
        final: ScreenFingerprint | None = None
        for record in result.steps:
            position = record.index - 1
            if position < 0 or position >= len(self._seen):
                continue
            seen = self._seen[position]
            operation = record.operation or {}
            name = str(operation.get("name") or "")
            if name == "stop":
                if record.completion is None or record.completion.get("done", False):
                    final = seen.fingerprint()
                continue
            if not self._worth_keeping(record, seen):
                continue
            if not _replayable(operation):
                break  # a step at a point: the model takes over from here on a replay
            steps.append(
                CachedStep(
                    action=to_slots(seen.action or record.action_text, self.template.values),
                    operation=name,
                    fingerprint=seen.fingerprint(),
                    point=_share(record, seen.size),
                )
            )
        if not steps or final is None:
            return None
        return CachedPlan(
            template=self.template.template,
            steps=tuple(steps),
            final=final,
            instruction=self.instruction,
            source_run=result.run_id,
        )

    @staticmethod
    def _worth_keeping(record: StepRecord, seen: _Seen) -> bool:
        return record.ok and record.operation is not None and seen.action is not None and record.screen_changed is not False


def _persons_part(record: StepRecord) -> bool:
    """A step the plan could not replay without the person: their own touches and replies,
    and the model's questions to them. A confirmation the person gave is not one: a
    replayed step passes the safety check again, which asks them again."""
    asked = record.asked_user or {}
    return record.by == "person" or (bool(asked) and asked.get("kind") != "confirm")


def _share(record: StepRecord, size: tuple[int, int]) -> tuple[float, float] | None:
    if record.tap_point is None or not size[0] or not size[1]:
        return None
    return (record.tap_point[0] / size[0], record.tap_point[1] / size[1])
