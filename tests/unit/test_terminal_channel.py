"""The terminal as the run's person (``mobile_agent.cli.asking.TerminalChannel``): once its
input ends, nobody will answer: every later question ends at once, and the run's result says
why (not "no reply within 600 s")."""

from __future__ import annotations

import io
import threading

import pytest

from mobile_agent.agent.people import UserRequest
from mobile_agent.cli.asking import TerminalChannel

pytestmark = [pytest.mark.timeout(60)]


def test_after_the_input_ends_every_question_ends_at_once_and_says_why() -> None:
    channel = TerminalChannel(io.StringIO("done\n"), io.StringIO())
    never = threading.Event()
    first = channel.ask(UserRequest("question", "Solve the captcha"), never)
    assert first is not None and first.kind == "done"
    assert channel.reason == ""  # a person was there
    # the input has ended: the second and third questions get no reply, without the 600 s wait
    # (before, the end of input was read once and the next question waited its whole timeout:
    # this test then fails on its 60 s limit)
    assert channel.ask(UserRequest("question", "Type the SMS code"), never) is None
    assert channel.ask(UserRequest("confirm", "Pay 10 USD?"), never) is None
    assert channel.reason == "the terminal's input ended: nobody to answer"
