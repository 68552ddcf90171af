"""The lock screen in the way of an operation (issue 28): a phone behind its keyguard
launches nothing the user can see, so Open App first makes sure the phone is usable.

What the phone says (``DeviceLike.screen_state``, read from ``dumpsys power`` / ``dumpsys
window``: ``mobile_agent.device.parsing``) decides:

- awake and not locked (or the dumps do not say): go on;
- the screen off: the WAKEUP key first;
- a keyguard with no credential (``secure=false``, or not known on Android <= 9): a swipe
  up from the bottom, then the MENU key (``input keyevent 82``, what dismisses an insecure
  keyguard where a swipe does not), each followed by a fresh look at the dumps;
- still locked (a PIN, pattern or password is set): an ``Outcome`` that ends the step as a
  hand-over: a run with a person asks them to unlock the phone and waits, a run without one
  ends ``not_completed`` saying the phone is locked. Nothing is typed: the agent holds no
  credential of the phone's.

May import: mobile_agent.operations.context (its sibling).
"""

from __future__ import annotations

from mobile_agent.operations.context import OperationContext, Outcome, ScreenStateLike

__all__ = ["LOCKED_QUESTION", "LOCKED_REASON", "unlock_or_stop"]

LOCKED_QUESTION = (
    "The phone is locked with a PIN, pattern or password, which the agent does not have. "
    "Unlock it on the phone, then answer done."
)
LOCKED_REASON = "the phone is locked (a PIN, pattern or password is set): unlock it, then run again"


def unlock_or_stop(ctx: OperationContext) -> Outcome | None:
    """None when the phone is (now) usable; else the Outcome that hands the step over."""
    state = ctx.device.screen_state()
    if _usable(state):
        return None
    if not state.on:
        ctx.device.key("wakeup")
        state = _look_again(ctx)
    if state.on and state.locked and state.secure is not True:
        width, height = ctx.size
        ctx.device.swipe(width // 2, int(height * 0.85), width // 2, int(height * 0.3), duration_ms=300)
        state = _look_again(ctx)
        if state.locked:
            ctx.device.key("menu")
            state = _look_again(ctx)
    if _usable(state):
        return None
    if not state.on:
        reason = "the phone's screen stays off after the WAKEUP key"
        return Outcome(ok=False, terminal=True, feedback=reason, stop_reason=reason)
    return Outcome(ok=False, terminal=True, feedback=LOCKED_REASON, stop_reason=LOCKED_REASON,
                   question=LOCKED_QUESTION)


def _usable(state: ScreenStateLike) -> bool:
    return state.on and not state.locked


def _look_again(ctx: OperationContext) -> ScreenStateLike:
    agent = ctx.settings.agent
    ctx.device.wait_settled(agent.settle_timeout_s, agent.settle_interval_s, agent.settle_tolerance, cancel=ctx.cancel)
    return ctx.device.screen_state()
