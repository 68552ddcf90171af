"""The safety check of one operation, with the person's yes where the guard asks for it.

A planned run (``agent.loop``) and an operation an MCP client asks for
(``mcp_server.guarded``) go through the same steps: ``Guard.check`` refuses, clears, or
asks; a question goes to the run's ``UserChannel`` and its answer is kept on the step
(``draft.asked_user``). Only the wording of the refusal differs between the callers, so
this returns the reason and lets them phrase it.

May import: ``mobile_agent`` (agent, operations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mobile_agent.agent.guard import Guard, ScreenLines
from mobile_agent.agent.people import UserRequest
from mobile_agent.agent.session import RunSession
from mobile_agent.agent.step import StepDraft
from mobile_agent.operations.parser import ParsedAction

__all__ = ["Refusal", "clear_operation"]


@dataclass(frozen=True)
class Refusal:
    """Why an operation was not done. ``asked``: the person was asked (and said no, or
    nobody answered); False when the policy refused it outright."""

    reason: str
    asked: bool

    def __str__(self) -> str:
        return self.reason


def clear_operation(session: RunSession, draft: StepDraft, guard: Guard, action: ParsedAction, *, timeout_s: float,
                    read_screen: Callable[[np.ndarray], ScreenLines | None] | None = None) -> Refusal | None:
    """None when ``action`` may be carried out now; else the reason it may not.

    A confirmation the guard asks for is put to the person (``session.ask_user``) and the
    question with its reply is recorded in ``draft.asked_user``; no reply in time, or any
    reply but "approve", refuses the operation. ``read_screen``: ``Guard.check``'s narrower
    reading for a Type's password check, when the caller has one."""
    verdict = guard.check(action, draft.frame.pixels, read_screen=read_screen)
    if verdict.refusal is not None:
        return Refusal(verdict.refusal, asked=False)
    if verdict.confirm is None:
        return None
    request = UserRequest(
        "confirm",
        verdict.confirm,
        run_id=session.run_id,
        step=draft.index,
        reason=f"{verdict.category}: {verdict.matched}",
        operation=action.text,
        timeout_s=timeout_s,
    )
    reply = session.ask_user(request)
    draft.asked_user = {"kind": "confirm", "question": request.question, "reason": request.reason,
                        "reply": reply.to_dict() if reply is not None else None}
    if reply is not None and reply.kind == "approve":
        return None
    if reply is None:
        return Refusal(f"nobody confirmed it ({session.nobody_reason()})", asked=True)
    return Refusal("the user refused it" + (f": {reply.text}" if reply.text else ""), asked=True)
