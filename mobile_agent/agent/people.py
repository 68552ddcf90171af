"""A person in the loop: how a run asks the person behind it and hears back.

A run pauses on two occasions:

- the model hands over (``Hand over``, AutoGLM's ``Take_over``, UI-TARS' ``call_user``):
  a *question* — the person answers in words, or does it on the phone and says "done";
- an operation is sensitive (``agent.guard``): a *confirmation* — approve or deny.

Every interface (the terminal, the REST service through its task store, a test) offers
the same small protocol, ``UserChannel.ask(request, cancel) -> UserReply``: it blocks
until the person replies, the request's time runs out (``None``), or the run is
cancelled (``RunCancelled``). While a question waits, a channel may also pass on the
person's own touches on the phone (``UserReply`` of kind ``touch``); the run carries them
out and records them as the person's steps, then asks again.

Channels shipped here, all public: ``QueueChannel`` (an in-process queue, for embedding
and tests), ``NoPersonChannel`` (nobody there: a pause ends the run with a clear reason,
never a hang), ``PolicyChannel`` (unattended: confirmations answered by a fixed policy,
questions passed on or refused).

May import: the standard library, ``mobile_agent.errors``, ``mobile_agent.settings``.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from mobile_agent.errors import RunCancelled
from mobile_agent.settings import Settings

__all__ = [
    "REPLY_KINDS",
    "NoPersonChannel",
    "PolicyChannel",
    "QueueChannel",
    "UserChannel",
    "UserReply",
    "UserRequest",
    "run_channel",
]

RequestKind = Literal["question", "confirm"]
ReplyKind = Literal["answer", "approve", "deny", "done", "touch"]
REPLY_KINDS: tuple[str, ...] = ("answer", "approve", "deny", "done", "touch")
_POLL_S = 0.05  # how often a wait looks at the cancel event


@dataclass(frozen=True)
class UserRequest:
    """What the run asks: a ``question`` (hand over) or a ``confirm`` (a sensitive operation).

    ``reason`` says why the run asks (the model's message, the rule that matched);
    ``operation`` is the operation waiting for the answer, as the trajectory shows it."""

    kind: RequestKind
    question: str
    run_id: str = ""
    step: int | None = None
    reason: str = ""
    operation: str = ""
    timeout_s: float = 600.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "question": self.question,
            "run_id": self.run_id,
            "step": self.step,
            "reason": self.reason,
            "operation": self.operation,
            "timeout_s": self.timeout_s,
        }


@dataclass(frozen=True)
class UserReply:
    """The person's reply. ``text`` for an answer (or a note with done / deny);
    ``touch`` carries ``{"x", "y"}`` (a tap) or ``{"x1", "y1", "x2", "y2"}`` (a swipe)
    in screen pixels. ``by`` names the interface it came through."""

    kind: ReplyKind
    text: str = ""
    touch: dict[str, int] = field(default_factory=dict)
    by: str = ""

    def __post_init__(self) -> None:
        if self.kind not in REPLY_KINDS:
            raise ValueError(f"a reply is one of {', '.join(REPLY_KINDS)}; got {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text, "by": self.by}
        if self.touch:
            data["touch"] = dict(self.touch)
        return data


class UserChannel(Protocol):
    """How a run reaches its person (see the module docstring)."""

    @property
    def reason(self) -> str:
        """Why a None reply means nobody will answer at all ("" when a person may be there
        and the wait ran out): the run's result says it instead of the timeout."""
        ...

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        """The person's reply; None when ``request.timeout_s`` went by without one;
        ``RunCancelled`` when ``cancel`` is set meanwhile."""
        ...


class QueueChannel:
    """Replies put on a queue (``reply``) by another thread: the channel of an embedding
    program, and of the tests. ``requests`` lists what the run asked, in order."""

    reason = ""

    def __init__(self) -> None:
        self._replies: queue.Queue[UserReply] = queue.Queue()
        self.requests: list[UserRequest] = []
        self.asked = threading.Event()  # set on each ask: a test waits for it

    def reply(self, reply: UserReply) -> None:
        self._replies.put(reply)

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        self.requests.append(request)
        self.asked.set()
        deadline = time.monotonic() + request.timeout_s
        while True:
            if cancel.is_set():
                raise RunCancelled("the run was cancelled while it waited for the user")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                return self._replies.get(timeout=min(_POLL_S, left))
            except queue.Empty:
                continue


class NoPersonChannel:
    """Nobody to ask (CI, no terminal, no interface): every pause is refused at once, and
    the run ends with ``reason`` in its result rather than waiting for no one."""

    def __init__(self, reason: str = "there is nobody to ask (no terminal)") -> None:
        self.reason = reason

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        return None


class PolicyChannel:
    """Unattended runs: a confirmation is approved (``approve=True``, the CLI's ``--yes``)
    or denied without asking; a question goes to ``fallback`` (by default nobody)."""

    def __init__(self, *, approve: bool, fallback: UserChannel | None = None) -> None:
        self.approve = approve
        self.fallback = fallback or NoPersonChannel()

    @property
    def reason(self) -> str:
        """The questions' channel's: a policy answers confirmations only."""
        return self.fallback.reason

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        if request.kind == "confirm":
            kind: ReplyKind = "approve" if self.approve else "deny"
            return UserReply(kind, text="by policy", by="policy")
        return self.fallback.ask(request, cancel)


def run_channel(settings: Settings, channel: UserChannel | None) -> UserChannel:
    """The channel a run asks through: ``channel`` (none: nobody to ask), behind the
    ``agent.safety.confirmations`` policy when it answers confirmations itself."""
    base: UserChannel = channel if channel is not None else NoPersonChannel("the run has no way to ask a person")
    policy = settings.agent.safety.confirmations
    if policy == "ask":
        return base
    return PolicyChannel(approve=policy == "approve", fallback=base)
