"""A flow's YAML may not use anchors or aliases, nor nest past ``MAX_FLOW_DEPTH``
(``mobile_agent.testing.flows``): a few hundred bytes of aliases expand into millions of values
that every reader of the flow walks (review8 #1: a 539-byte flow held the service for a minute
and took 1.9 GB), and a deep ``[[[…]]]`` exhausted Python's stack (a RecursionError, not a 422).
The REST side: tests/service/test_flow_yaml_limits.py."""

from __future__ import annotations

import pytest

from mobile_agent.testing import FlowError, parse_flow


def alias_bomb(levels: int, width: int = 10) -> str:
    """A flow whose extract's expect: holds ``width ** levels`` strings through aliases."""
    keys = ["l0: &l0 x"] + [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * width) + "]" for n in range(1, levels + 1)]
    return ("name: bomb\nsteps:\n  - extract: {instruction: a, fields: {x: str}, expect: {"
            + ", ".join(keys) + "}}\n")


def test_anchors_and_aliases_are_refused_by_line() -> None:
    with pytest.raises(FlowError) as one:
        parse_flow("name: f\nvars: {a: &a Settings}\nsteps:\n  - do: Open App (Settings)\n  - do: *a\n")
    assert "anchors or aliases" in one.value.message and "line 2" in one.value.message
    with pytest.raises(FlowError) as bomb:
        parse_flow(alias_bomb(5))  # (before: accepted, 10^5 strings walked by every check)
    assert "anchors or aliases" in bomb.value.message
    assert len(alias_bomb(8)) < 700
    with pytest.raises(FlowError):
        parse_flow(alias_bomb(8))  # refused at its first anchor: nothing is expanded


def test_nesting_is_bounded_with_an_error_not_a_crash() -> None:
    def nested(depth: int) -> str:
        return ("name: f\nsteps:\n  - extract: {instruction: a, fields: {x: str}, expect: {x: "
                + "[" * depth + "1" + "]" * depth + "}}\n")

    with pytest.raises(FlowError) as deep:
        parse_flow(nested(20_000))  # (before: RecursionError)
    from mobile_agent.testing.flows import MAX_FLOW_DEPTH

    assert f"no deeper than {MAX_FLOW_DEPTH}" in deep.value.message
    parse_flow(nested(MAX_FLOW_DEPTH - 5))  # the expect: sits 5 levels down: just within
    with pytest.raises(FlowError):
        parse_flow(nested(MAX_FLOW_DEPTH - 4))


def test_ordinary_flows_still_parse() -> None:
    flow = parse_flow("name: f\nvars: {title: 'a & b *c'}\nsteps:\n  - do: \"Type ({{title}})\"\n"
                      "  - assert_visible: '*starred*'\n")
    assert flow.vars == {"title": "a & b *c"} and len(flow.steps) == 2
