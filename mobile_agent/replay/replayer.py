"""Replaying a cached plan in place of the model: ``ReplayingPlanner``.

It is a planner (``PlannerLike``) wrapped around the real one, so the agent loop does
not know whether a step was replayed or planned. For each step it compares the screen
with the one the cached step acted on (``ScreenFingerprint``) and, for a text target,
checks that perception finds the target on the current screen; while both hold it
answers the cached operation with no model call. The operation then runs as any other:
its target is located again by perception (never a recorded point), so another screen
size, theme or scroll position still works. A grounded model's tap was recorded by the
text it hit (``learning``); one only its point describes (an icon, a swipe) is scaled to
this screen, and the tap snaps onto the element there. A screen with the recorded layout at a
glance needs no OCR to match; its target is read in the band around the recorded tap
first (``relocate.TargetFinder``), the whole screen only when it is not there.

Before a replayed step acts, the screen is compared with the recorded one for something
new on top of it (``overlay.on_top``: a dialog's scrim around the target or over the
screen, a system dialog's texts): a tap beside a modal dialog would change nothing, so
the step goes to the model at once. A replayed Type's safety check reads the band
around its recorded field rather than the whole screen when that band can answer
(``password_reader``, ``field.FieldCheck``).

Something new on top hands that step only to the real planner (``_hand_step``): the model
answers the dialog, and the replay goes on when the next screen is the recorded one.
Any other divergence hands over for good: a screen unlike the recorded one, a target not
found, a replayed step (or the model's step after a dialog) that failed or changed
nothing (the loop's feedback), a slot without a value, a dialog again right after the
model's step. The model then sees the history so far and
carries on; the completion check decides at the end unless the whole plan replayed and
the final screen matches the recorded final screen.

While the model plans (``plan`` of the real planner), the fingerprint of the same frame
is computed on a worker thread: its OCR lands in perception's per-frame cache, so the
operation that follows usually finds its text without waiting for OCR.

After the run, ``learn`` stores what worked (``learning.plan_from``): a completed run that needed the model
becomes the template's newest plan; a replay that completed counts a success, one that
did not a failure (plans that fail more than they succeed are not replayed).

May import: the standard library, numpy, ``mobile_agent`` (operations, planner types and images,
errors; the agent's records for types only: the agent imports this package) and this
package.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from mobile_agent.errors import ConfigError
from mobile_agent.operations.context import RunLocator, ScreenshotLike
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.planner.images import frame_pixels
from mobile_agent.planner.protocol import PlannerLike
from mobile_agent.planner.types import CompletionVerdict, PlanReply, PlanRequest, Usage
from mobile_agent.replay.field import FieldCheck, ScreenLines, shrunk_grey, stored_signature
from mobile_agent.replay.fingerprint import (
    ScreenFingerprint,
    body_share,
    fingerprint,
    grey_thumbnail,
    layout_similarity,
    standardised,
)
from mobile_agent.replay.learning import Seen, persons_part, plan_from
from mobile_agent.replay.overlay import on_top
from mobile_agent.replay.plans import CachedPlan, CachedStep, InstructionTemplate, fill_slots
from mobile_agent.replay.relocate import BAND_HALF_SHARE, TargetFinder, parse_cached, scaled_action
from mobile_agent.replay.store import PlanStore
from perception.types import Location, TextLine

if TYPE_CHECKING:  # the agent package imports this one: records only for the types
    from mobile_agent.agent.records import RunResult

__all__ = ["REPLAY_SOURCE", "ReplayingPlanner"]

log = logging.getLogger(__name__)

REPLAY_SOURCE = "replay"
_TEXT_TARGET_OPERATIONS = frozenset({"click_text", "long_press"})
_CANDIDATE_REACH = 0.15  # a candidate this far (share of the diagonal) from the recorded tap is another one
# thumbnails this alike are the same screen (same layout, either theme): no OCR needed
SAME_LAYOUT = 0.95


class ReplayingPlanner:
    """A planner that replays the cached plan of ``instruction`` while the screens
    match, then hands over to ``inner`` (built by ``inner_factory`` on first need)."""

    def __init__(
        self,
        store: PlanStore,
        instruction: str,
        *,
        inner_factory: Callable[[], PlannerLike],
        locator: RunLocator,
        ocr: Callable[[np.ndarray], list[TextLine]],
        min_similarity: float = 0.5,
        find_text: Callable[[np.ndarray, str], Location] | None = None,
    ) -> None:
        self.store = store
        self.instruction = instruction
        self.template = InstructionTemplate.of(instruction)
        self.min_similarity = min_similarity
        self._inner_factory = inner_factory
        self._inner: PlannerLike | None = None
        self._ocr = ocr
        self._locator = locator
        self._finder = TargetFinder(locator, find_text)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replay-fingerprint")
        self._seen: list[Seen] = []
        self._cursor = 0  # the next cached step
        self._replaying_step: CachedStep | None = None
        self._replayed_stop = False
        self._handed: str | None = None  # why the step now with the model was handed to it
        self.handed_steps = 0  # steps handed to the model with the replay going on after them
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
        pixels = frame_pixels(request.screenshot)
        grey = grey_thumbnail(pixels)
        thumb, level = standardised(grey)
        seen = Seen((pixels.shape[1], pixels.shape[0]), thumb, level, grey, frame=pixels)
        self._seen.append(seen)
        self._replaying_step = None
        if self.divergence is None:
            reply = self._replay(request, seen, pixels)
            if reply is not None:
                seen.replayed = True
                return reply
        if seen.full is None:  # OCR it while the model thinks (the operation then finds it cached)
            seen.full = self._pool.submit(self._fingerprint, pixels, seen)
        return self._inner_planner().plan(request)

    def parse(self, reply: PlanReply) -> ParsedAction:
        replayed = reply.source == REPLAY_SOURCE
        action = parse_cached(reply.action_text) if replayed else self._inner_planner().parse(reply)
        if self._seen:
            seen = self._seen[-1]
            seen.action = action.text
            if action.name == "type" and seen.frame is not None and not replayed:  # its field band, for the plan
                seen.small = shrunk_grey(seen.frame)  # (a replayed Type keeps the recorded one: ``learning``)
            seen.frame = None
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
            if any(persons_part(s) for s in result.steps):
                return None  # what a person did or answered cannot be replayed without them
            plan = plan_from(result, self._seen, self.template, self.instruction)
            return self.store.save(plan) if plan is not None else None
        finally:
            self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    # -- replay ---------------------------------------------------------------------

    def _replay(self, request: PlanRequest, seen: Seen, pixels: np.ndarray) -> PlanReply | None:
        if self.cached is None:
            self.cached = self._plan_for(seen, pixels)
            if self.cached is None:
                return self._diverge("no cached plan of this instruction starts on a screen like this one")
        plan = self.cached
        if request.feedback or (request.reflection_note and not self._no_effect_recorded()):
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
            seen.recorded_final = plan.final
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
        if step.screen is not None:  # a step only its points describe: on this screen's scale
            action = scaled_action(action, step.screen, seen.size)
        covered = self._on_top(seen, step)
        if covered:
            return self._hand_step(f"before cached step {self._cursor + 1}: {covered}")
        if step.operation in _TEXT_TARGET_OPERATIONS:
            missing = self._finder.missing(action, pixels, step.point, read=seen.full is not None)
            if missing:
                return self._diverge(missing)
        self._cursor += 1
        self._handed = None
        self._replaying_step = step
        seen.recorded = step
        return self._reply(action, f"cached step {self._cursor} of {len(plan.steps)} (screen similarity {similarity:.2f})")

    def _no_effect_recorded(self) -> bool:
        """The step just replayed changed nothing on the screen, and neither did it when it was
        recorded (a copy before the end): the loop's no-effect note is no divergence."""
        previous = self._seen[-2] if len(self._seen) >= 2 else None
        return previous is not None and previous.replayed and previous.recorded is not None and not previous.recorded.changed

    def _on_top(self, seen: Seen, step: CachedStep) -> str | None:
        """Why something new seems to be on top of the recorded screen (``overlay.on_top``:
        a dialog's scrim, a system dialog's texts); None when nothing is. A step under a
        dialog would act on the dialog, or on nothing if it is modal: the model decides."""
        if seen.grey is None:
            return None
        rows = None
        if step.point is not None:
            rows = (body_share(step.point[1] - BAND_HALF_SHARE), body_share(step.point[1] + BAND_HALF_SHARE))
        texts = seen.full.result().texts if seen.full is not None else None  # read already to match, or none
        return on_top(step.fingerprint, seen.grey, rows=rows, texts=texts)

    def _plan_for(self, seen: Seen, pixels: np.ndarray) -> CachedPlan | None:
        """The plan whose first screen is most like this one (the newest among equals)."""
        best: tuple[float, CachedPlan] | None = None
        for plan in self._plans:
            first = plan.steps[0].fingerprint if plan.steps else plan.final
            similarity = self._match(seen, pixels, first)
            if similarity >= self.min_similarity and (best is None or similarity > best[0]):
                best = (similarity, plan)
        return best[1] if best else None

    def _match(self, seen: Seen, pixels: np.ndarray, recorded: ScreenFingerprint) -> float:
        """How alike this screen is to ``recorded``: the same layout at a glance (the
        thumbnails, no OCR) is enough; otherwise its texts decide (OCR, cached per frame,
        so the operation that follows reuses it)."""
        if layout_similarity(seen.thumb, recorded.thumb) >= SAME_LAYOUT:
            return 1.0
        if seen.full is None:
            seen.full = self._pool.submit(self._fingerprint, pixels, seen)
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

    def _hand_step(self, reason: str) -> PlanReply | None:
        """This step to the real planner, not the rest of the run: something new is on top
        of the recorded screen (a dialog), and the model deals with it. The next screen is
        compared with the same cached step, and the replay goes on when it is that screen
        again; covered again right away, or any other difference, hands over for good."""
        if self._handed is not None:
            return self._diverge(f"{reason}, again after the model's step")
        self._handed = reason
        self.handed_steps += 1
        log.info("replay of %r hands one step to the planner: %s", self.instruction, reason)
        return None

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

    def password_reader(self, shows_password: Callable[[list[str]], str | None]) -> Callable[[np.ndarray], ScreenLines | None] | None:
        """The safety check's screen reading for the step being replayed, when it is a Type
        whose recorded field lets the band around it answer (``replay.field.FieldCheck``);
        None for the usual full read: not replaying a Type, no field recorded, no region
        reading, or a screen already read whole to match it (the full read is cached)."""
        step = self._replaying_step
        seen = self._seen[-1] if self._seen else None
        if step is None or step.operation != "type" or step.field_at is None or seen is None or seen.full is not None:
            return None
        read_region = self._locator.untimed().ocr_region
        recorded_band = stored_signature(step.field_band)
        return FieldCheck(step.fingerprint, step.field_at, read_region, shows_password, recorded_band)

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

    def _fingerprint(self, pixels: np.ndarray, seen: Seen) -> ScreenFingerprint:
        seen.lines = self._ocr(pixels)  # kept for learning: where a Type's text showed up (``replay.field``)
        return fingerprint(pixels, seen.lines, seen.thumb, seen.level)
