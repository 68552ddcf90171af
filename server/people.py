"""The REST service as a run's person (``mobile_agent.agent.people.UserChannel``),
through the task store, so that a reply reaches the run wherever it runs (this process,
another instance on the same database, a farm worker).

While a run asks, its task is ``waiting_for_user`` (it keeps its phone). ``POST
/v1/tasks/{id}/reply`` writes the reply as a ``user_reply`` event — only while the task
waits — and the channel, polling the task's events, hands it to the run; the task is
``running`` again as soon as the ask ends (a reply, the time limit, a cancel). The run's
own ``waiting_for_user`` event (the question) is what the API shows and checks replies
against; the task's ``callback_url`` hears of the pause (``server.webhooks``).

May import: the standard library, ``mobile_agent`` (public API), ``server.store``,
``server.webhooks``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, cast

from mobile_agent.agent import REPLY_KINDS, ReplyKind, UserReply, UserRequest
from mobile_agent.errors import RunCancelled
from server.store import TaskStore
from server.webhooks import WebhookSender

__all__ = ["StoreChannel", "reply_refusal"]

log = logging.getLogger(__name__)

POLL_S = 0.2
# which replies fit which request
FITTING = {"confirm": ("approve", "deny"), "question": ("answer", "done", "deny", "touch")}


def reply_refusal(request: dict[str, Any] | None, action: str) -> str | None:
    """Why ``action`` cannot answer the waiting ``request`` (None: it can)."""
    kind = (request or {}).get("kind")
    if kind not in FITTING:
        return "the task is not asking anything"
    if action not in FITTING[kind]:
        return f"the task asks for a {kind}: reply with one of {', '.join(FITTING[kind])}"
    return None


class StoreChannel:
    """One task's channel (see the module docstring)."""

    reason = ""  # a person may be there: a None reply is the wait running out

    def __init__(
        self, store: TaskStore, task_id: int, *, webhooks: WebhookSender | None = None, callback_url: str | None = None
    ) -> None:
        self.store = store
        self.task_id = task_id
        self.webhooks = webhooks
        self.callback_url = callback_url
        self._after = 0  # the last event read: a reply is read once, across the asks of one wait

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        store, task_id = self.store, self.task_id
        asked = store.last_event(task_id, "waiting_for_user")  # the run's own event, just written
        after = max(self._after, asked.id if asked is not None else 0)
        if not store.set_waiting(task_id, True):
            pass  # still waiting: the ask goes on after a touch of the person's
        elif self.webhooks is not None:
            self.webhooks.send(self.callback_url, "waiting_for_user", {
                "task_id": task_id, "status": "waiting_for_user", "request": request.to_dict(),
                "links": {"task": f"/v1/tasks/{task_id}", "reply": f"/v1/tasks/{task_id}/reply"},
            })  # fmt: skip
        deadline = time.monotonic() + request.timeout_s
        reply: UserReply | None = None
        try:
            while True:
                for event in store.events_after(task_id, after):
                    self._after = after = event.id
                    if event.kind != "user_reply":
                        continue
                    candidate = _reply(event.data)
                    if candidate is not None and candidate.kind in FITTING[request.kind]:
                        reply = candidate
                        return reply
                if cancel.is_set():
                    raise RunCancelled("the run was cancelled while it waited for the user")
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                cancel.wait(min(POLL_S, left))
        finally:
            if reply is None or reply.kind != "touch":  # a touch: the run acts on it and asks on, still waiting
                store.set_waiting(task_id, False)


def _reply(data: dict[str, Any]) -> UserReply | None:
    try:
        touch = {k: int(v) for k, v in (data.get("touch") or {}).items()}
        action = str(data.get("action"))
        if action not in REPLY_KINDS:
            raise ValueError(action)
        # the reply names its sender (server.auth): the step that took it records who answered
        by = f"rest:{data['by']}" if data.get("by") else "rest"
        return UserReply(cast(ReplyKind, action), str(data.get("text") or ""), touch=touch, by=by)
    except (TypeError, ValueError):  # a row this version did not write
        log.warning("task reply not understood: %r", data)
        return None
