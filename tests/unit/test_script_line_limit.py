"""A script line longer than any operation takes is refused before it is parsed
(``mobile_agent.agent.script.MAX_LINE_CHARS``, review8 #16): the parser's cost grew with the
square of a line (a 60 KB line of quotes or brackets: 5-8 s of CPU per REST request, to be
refused in the end). What is parsed is counted, not timed."""

from __future__ import annotations

import pytest

from mobile_agent.agent import parse_script, script
from mobile_agent.errors import OperationParseError


def test_an_overlong_line_is_refused_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = script.parse_action

    def counting(text: str) -> object:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(script, "parse_action", counting)
    for line in ("Click text (" + '"' * 60_000 + ")", "Page down until (" + "(" * 60_000):
        with pytest.raises(OperationParseError) as refused:
            parse_script("Home\n" + line)
        assert f"over {script.MAX_LINE_CHARS} characters" in refused.value.message and "line 2" in refused.value.message
    assert parsed == ["Action: Home", "Action: Home"]  # (before: the long lines were parsed too)
    longest = "Type (" + "x" * 2000 + ")"  # Type's longest text still fits
    assert len(longest) < script.MAX_LINE_CHARS and parse_script(longest)[0].action.name == "type"


def test_page_until_keeps_its_text_and_a_blank_one_is_no_until() -> None:
    (line,) = parse_script("Page down until ( Wi-Fi )")
    assert line.until == "Wi-Fi"
    with pytest.raises(OperationParseError):
        parse_script("Page down until ()")
