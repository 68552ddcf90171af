"""The matrix's design is complete and covering: every dialect, simulator profile and
command the code knows is in ``tests/matrix/design.py``, and the cells hold every pair of
values of every two axes, the required cells included."""

from __future__ import annotations

import argparse
import re

import simphone
from mobile_agent.cli import build_parser
from mobile_agent.planner.dialects import DIALECTS as KNOWN_DIALECTS
from simphone.cli import build_parser as simphone_parser
from tests.matrix.design import (
    AXES,
    CELLS,
    COMMANDS,
    DEVICES,
    DIALECT_MODELS,
    FEATURES,
    IPHONE_INTERFACES,
    IPHONE_LIMITS,
    IPHONE_REQUIRED,
    IPHONES,
    MEETINGS,
    PROFILE_CELLS,
    PROFILES,
    REQUIRED,
    Cell,
    axes_for,
    pairwise,
    uncovered_pairs,
)


def _rows(cells: tuple[Cell, ...] | list[Cell]) -> list[dict[str, object]]:
    return [{name: getattr(c, name) for name in AXES} for c in cells]


def test_every_dialect_the_planner_knows_is_an_axis_value() -> None:
    assert set(AXES["dialect"]) == set(KNOWN_DIALECTS), "add the dialect to tests/matrix/design.py (and DIALECT_MODELS)"
    assert set(DIALECT_MODELS) == set(KNOWN_DIALECTS)


def _serve_option(name: str) -> argparse.Action:
    (serve,) = [a.choices["serve"] for a in simphone_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    (action,) = [a for a in serve._actions if name in a.option_strings]
    return action


def test_every_simulator_profile_has_its_cells() -> None:
    assert set(PROFILES) == set(simphone.profile_names()) | set(IPHONES), "add the profile to tests/matrix/design.py PROFILES"
    assert {(c.interface, c.profile) for c in PROFILE_CELLS} == {(i, p) for i in ("cli_run", "eval_mobile_eval") for p in PROFILES}


def test_the_simulated_iphone_is_a_profile_at_every_scale_simphone_serves() -> None:
    """simphone serves iPhones (`simphone serve --ios`): each scale its --scale offers is an
    iPhone profile of the design, playing a simulator profile that exists."""
    assert "--ios" in _serve_option("--ios").option_strings
    scales = set(_serve_option("--scale").choices or ())
    assert scales and {scale for _, scale in IPHONES.values()} == scales, "add the iPhone scale to design.py IPHONES"
    assert all(played in simphone.profile_names() for played, _ in IPHONES.values())
    assert not set(IPHONES) & set(simphone.profile_names())


def test_every_interface_has_iphone_cells_or_a_known_limitation() -> None:
    assert DEVICES == ("android", "iphone")
    assert set(IPHONE_INTERFACES) | set(IPHONE_LIMITS) == set(AXES["interface"])
    assert not set(IPHONE_INTERFACES) & set(IPHONE_LIMITS)
    assert all(why.strip() for why in IPHONE_LIMITS.values())
    on_iphone = {(c.interface, c.dialect) for c in CELLS if c.device == "iphone"}
    assert on_iphone == {(i, d) for i in IPHONE_INTERFACES for d in AXES["dialect"]}  # every interface, every dialect
    assert not {c.interface for c in CELLS if c.device == "iphone"} & set(IPHONE_LIMITS)


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _commands(sub, f"{prefix}{name} ")
                found |= inner or {f"{prefix}{name}"}
    return found


def test_every_command_is_an_interface_of_the_matrix_or_says_why_not() -> None:
    known = _commands(build_parser())
    missing = sorted(known - set(COMMANDS))
    assert not missing, f"classify these commands in tests/matrix/design.py COMMANDS: {missing}"
    interfaces = {v for v in COMMANDS.values() if not v.startswith("none")}
    assert interfaces == set(AXES["interface"])


def test_the_cells_cover_every_pair_and_hold_the_required_ones() -> None:
    for device in DEVICES:  # each device its own covering design
        cells = [c for c in CELLS if c.device == device]
        assert not uncovered_pairs(axes_for(device), _rows(cells)), device
    assert set(REQUIRED) <= set(CELLS) and set(IPHONE_REQUIRED) <= set(CELLS)
    assert {c.device for c in REQUIRED} == {"android"} and {c.device for c in IPHONE_REQUIRED} == {"iphone"}
    assert len(CELLS) == len(set(CELLS))
    assert len({c.id for c in CELLS}) == len(CELLS)


def test_the_generator_covers_pairs_and_beats_the_full_product() -> None:
    axes = {"a": (1, 2, 3), "b": ("x", "y"), "c": (True, False), "d": ("p", "q", "r")}
    rows = pairwise(axes, [{"a": 3, "b": "y", "c": False, "d": "r"}])
    assert rows[0] == {"a": 3, "b": "y", "c": False, "d": "r"}
    assert not uncovered_pairs(axes, rows)
    assert 9 <= len(rows) < 3 * 2 * 2 * 3
    assert uncovered_pairs(axes, rows[:-1])  # every row the greedy adds covers something


def test_every_meeting_row_is_known_features_through_a_known_interface() -> None:
    """The rows where the service's features meet (tests/matrix/test_meetings.py runs each)."""
    assert len({m.name for m in MEETINGS}) == len(MEETINGS)
    for meeting in MEETINGS:
        assert meeting.interface in AXES["interface"] and meeting.dialect in AXES["dialect"], meeting
        assert len(meeting.features) >= 2 and meeting.features <= set(FEATURES), meeting
        assert meeting.fixed.split() and all(re.fullmatch(r"[0-9a-f]{7,40}", c) for c in meeting.fixed.split()), meeting
    assert set().union(*(m.features for m in MEETINGS)) == set(FEATURES), "a feature of FEATURES meets nothing"


def test_the_readme_shows_this_design() -> None:
    from pathlib import Path

    from tests.matrix.design import readme_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- matrix-table:")
    shown = readme[readme.index("\n", start) + 1 : readme.index("<!-- /matrix-table -->")].strip()
    assert shown == readme_table(), "paste tests/matrix/design.py readme_table() into README.md"
