"""The lock screen in the way (issue 28): a phone behind its keyguard launches nothing the
user can see, so a run (``agent.session``, before its first step) and Open App first make
sure the phone is usable.

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

An iPhone (WDA) has no MENU key: the swipe is all it is given, and one with a passcode is handed over.

May import: mobile_agent.operations.context (its sibling), mobile_agent.errors, mobile_agent.settings.
"""

from __future__ import annotations

import threading

from mobile_agent.errors import DeviceCommandError
from mobile_agent.operations.context import DeviceLike, OperationContext, Outcome, ScreenStateLike
from mobile_agent.settings import Settings

__all__ = ["LOCKED_QUESTION", "LOCKED_REASON", "unlock", "unlock_or_stop"]

LOCKED_QUESTION = (
    "The phone is locked with a PIN, pattern or password, which the agent does not have. "
    "Unlock it on the phone, then answer done."
)
LOCKED_REASON = "the phone is locked (a PIN, pattern or password is set): unlock it, then run again"


def unlock_or_stop(ctx: OperationContext) -> Outcome | None:
    """None when the phone is (now) usable; else the Outcome that hands the step over."""
    return unlock(ctx.device, ctx.settings, ctx.size, ctx.cancel)


def unlock(device: DeviceLike, settings: Settings, size: tuple[int, int], cancel: threading.Event) -> Outcome | None:
    """``unlock_or_stop`` for a device outside an operation (a run's start): ``size`` is the
    screen's (width, height) in pixels."""
    state = device.screen_state()
    if _usable(state):
        return None

    def look_again() -> ScreenStateLike:
        agent = settings.agent
        device.wait_settled(agent.settle_timeout_s, agent.settle_interval_s, agent.settle_tolerance, cancel=cancel)
        return device.screen_state()

    if not state.on:
        device.key("wakeup")
        state = look_again()
    if state.on and state.locked and state.secure is not True:
        width, height = size
        device.swipe(width // 2, int(height * 0.85), width // 2, int(height * 0.3), duration_ms=300)
        state = look_again()
        if state.locked:
            try:
                device.key("menu")
            except DeviceCommandError:  # a phone with no MENU key (an iPhone): the swipe was its way
                pass
            else:
                state = look_again()
    if _usable(state):
        return None
    if not state.on:
        reason = "the phone's screen stays off after the WAKEUP key"
        return Outcome(ok=False, terminal=True, feedback=reason, stop_reason=reason)
    return Outcome(ok=False, terminal=True, feedback=LOCKED_REASON, stop_reason=LOCKED_REASON,
                   question=LOCKED_QUESTION)


def _usable(state: ScreenStateLike) -> bool:
    return state.on and not state.locked

