"""The matrix's design is complete and covering: every dialect, simulator profile and
command the code knows is in ``tests/matrix/design.py``, and the cells hold every pair of
values of every two axes, the required cells included."""

from __future__ import annotations

import argparse

import simphone
from mobile_agent.cli import build_parser
from mobile_agent.planner.dialects import DIALECTS as KNOWN_DIALECTS
from tests.matrix.design import (
    AXES,
    CELLS,
    COMMANDS,
    DIALECT_MODELS,
    PROFILE_CELLS,
    PROFILES,
    REQUIRED,
    Cell,
    pairwise,
    uncovered_pairs,
)


def _rows(cells: tuple[Cell, ...] | list[Cell]) -> list[dict[str, object]]:
    return [{name: getattr(c, name) for name in AXES} for c in cells]


def test_every_dialect_the_planner_knows_is_an_axis_value() -> None:
    assert set(AXES["dialect"]) == set(KNOWN_DIALECTS), "add the dialect to tests/matrix/design.py (and DIALECT_MODELS)"
    assert set(DIALECT_MODELS) == set(KNOWN_DIALECTS)


def test_every_simulator_profile_has_its_cells() -> None:
    assert set(PROFILES) == set(simphone.profile_names()), "add the profile to tests/matrix/design.py PROFILES"
    assert {(c.interface, c.profile) for c in PROFILE_CELLS} == {(i, p) for i in ("cli_run", "eval_mobile_eval") for p in PROFILES}


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
    assert not uncovered_pairs(AXES, _rows(CELLS))
    assert set(REQUIRED) <= set(CELLS)
    assert len(CELLS) == len(set(CELLS))


def test_the_generator_covers_pairs_and_beats_the_full_product() -> None:
    axes = {"a": (1, 2, 3), "b": ("x", "y"), "c": (True, False), "d": ("p", "q", "r")}
    rows = pairwise(axes, [{"a": 3, "b": "y", "c": False, "d": "r"}])
    assert rows[0] == {"a": 3, "b": "y", "c": False, "d": "r"}
    assert not uncovered_pairs(axes, rows)
    assert 9 <= len(rows) < 3 * 2 * 2 * 3
    assert uncovered_pairs(axes, rows[:-1])  # every row the greedy adds covers something


def test_the_readme_shows_this_design() -> None:
    from pathlib import Path

    from tests.matrix.design import readme_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- matrix-table:")
    shown = readme[readme.index("\n", start) + 1 : readme.index("<!-- /matrix-table -->")].strip()
    assert shown == readme_table(), "paste tests/matrix/design.py readme_table() into README.md"
