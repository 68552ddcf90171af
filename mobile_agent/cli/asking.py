"""The terminal as the run's person (``agent.people.UserChannel``): a question or a
confirmation is printed with the live progress and answered on stdin.

- a confirmation: ``y`` / ``yes`` approves; ``n`` / ``no`` (and anything else) refuses, the
  words after it are the reason the model hears;
- a question: a line of text is the answer; ``done`` (or ``d``) says "I did it on the
  phone"; ``no`` declines.

Stdin is read by one daemon thread for the whole process, so a wait can still watch the
run's cancel event (Ctrl-C) and its time limit. Without a terminal on stdin (CI, a pipe)
the CLI uses ``NoPersonChannel``: a pause ends the run with that reason, never a hang.

May import: the standard library, ``mobile_agent.agent.people``, ``mobile_agent.errors``.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import TextIO

from mobile_agent.agent.people import NoPersonChannel, UserChannel, UserReply, UserRequest
from mobile_agent.errors import RunCancelled

__all__ = ["TerminalChannel", "terminal_channel"]

_POLL_S = 0.1
NO_TERMINAL = (
    "no terminal to ask on (stdin is not a terminal): run it from a terminal, or answer confirmations "
    "with --yes / --policy FILE"
)


class TerminalChannel:
    """Asks on ``out`` and reads the reply from ``stdin`` (see the module docstring)."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out
        self.reason = ""  # set when the input ends: nobody will answer any more
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader: threading.Thread | None = None

    def _start_reading(self) -> None:
        if self._reader is not None:
            return

        def read() -> None:
            for line in self.stdin:
                self._lines.put(line.rstrip("\r\n"))
            self._lines.put(None)  # end of input: nobody will answer any more

        self._reader = threading.Thread(target=read, name="terminal-replies", daemon=True)
        self._reader.start()

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        self._start_reading()
        out = self.out
        if request.kind == "confirm":
            print(f"\n  ? confirm: {request.question}", file=out)
            print("    [y]es to allow it, [n]o (and why) to refuse > ", end="", file=out)
        else:
            print(f"\n  ? the agent asks: {request.question}", file=out)
            print("    type your answer; 'done' once you did it on the phone; 'no' to decline > ", end="", file=out)
        out.flush()
        deadline = time.monotonic() + request.timeout_s
        while True:
            if cancel.is_set():
                raise RunCancelled("the run was cancelled while it waited for the user")
            left = deadline - time.monotonic()
            if left <= 0:
                print("\n    (no reply in time)", file=out)
                return None
            try:
                line = self._lines.get(timeout=min(_POLL_S, left))
            except queue.Empty:
                continue
            if line is None:
                print("\n    (end of input: nobody to answer)", file=out)
                self.reason = "the terminal's input ended: nobody to answer"
                self._lines.put(None)  # and the next question ends at once too
                return None
            reply = read_reply(request, line)
            if reply is not None:
                return reply
            print("    please answer > ", end="", file=out)
            out.flush()


def read_reply(request: UserRequest, line: str) -> UserReply | None:
    """The reply a typed line means (None: an empty line, ask again)."""
    text = line.strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    word = word.lower().rstrip(":,.")
    if request.kind == "confirm":
        if word in ("y", "yes"):
            return UserReply("approve", rest.strip(), by="terminal")
        return UserReply("deny", rest.strip() if word in ("n", "no") else text, by="terminal")
    if word in ("done", "d"):
        return UserReply("done", rest.strip(), by="terminal")
    if word in ("no", "n") and not rest:
        return UserReply("deny", "", by="terminal")
    return UserReply("answer", text, by="terminal")


def terminal_channel(stdin: TextIO | None = None, out: TextIO | None = None) -> UserChannel:
    """The terminal when stdin is one, else nobody (a pause fails the run at once)."""
    stdin = stdin if stdin is not None else sys.stdin
    try:
        interactive = stdin is not None and stdin.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stdin
        interactive = False
    if not interactive or stdin is None:
        return NoPersonChannel(NO_TERMINAL)
    return TerminalChannel(stdin, out if out is not None else sys.stdout)
