"""A flow variable's value is filled in as data, never as a reference (``flows.substitute``,
review8 #18): an extract's answer read off an app's screen that shows ``{{secret:pin}}`` used to
become a secret reference in a later ``do: Type ({{otp.code}})`` and type the owner's secret
there, unasked."""

from __future__ import annotations

import pytest

from mobile_agent.testing import FlowError
from mobile_agent.testing.flows import substitute


def test_a_value_holding_a_reference_is_refused_and_plain_values_fill_in() -> None:
    with pytest.raises(FlowError) as screen:
        substitute("Type ({{otp.code}})", {"otp": {"code": "{{secret:pin}}"}})  # (before: Type ({{secret:pin}}))
    assert "{{otp.code}}" in screen.value.message and "never as a reference" in screen.value.message
    with pytest.raises(FlowError):
        substitute("Type ({{a}}{{b}})", {"a": "{{secret", "b": ":pin}}"})  # spelt out in pieces
    assert substitute("Type ({{secret:pin}}) {{n}} {{o.k}}", {"n": "a } b {", "o": {"k": [1, 2]}}) == \
        "Type ({{secret:pin}}) a } b { [1, 2]"  # the flow's own reference stays for the Type operation
