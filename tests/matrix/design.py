"""The combination matrix of issue 28, in one place: its axes, the covering design over them,
the device-profile cells, what each known interface of the code maps to, and the cells
that wait for another fix. A new setting, dialect, profile or interface is added HERE;
``tests/matrix/test_design.py`` fails when the code knows a dialect, a simulator profile or
a CLI command that this module does not.

The design: pairwise (every value of every axis meets every value of every other axis in
at least one cell), built by ``pairwise`` below from the ``REQUIRED`` cells (the
combinations issue 28 found broken, all present) plus greedy rows until every pair is
covered. Why our own ~30 lines and not ``allpairspy``: its last release is 2.5.1 of
2023-07, it cannot start from required rows, and the property that matters (all pairs
covered) is checked by a test here, so a small generator is easy to trust.

The iPhone (issue 33) is a device of the design: the simulated phone served over
WebDriverAgent's HTTP API (``simphone serve --ios``, ``ios:NAME`` to every interface). Its
cells are a second pairwise design over the same axes, with the interfaces that reach an
iPhone (``IPHONE_LIMITS`` says, for each one that does not, why: a known limitation, no
cell), so every such interface meets every dialect, accessibility tree (the page source)
on and off, the plan cache off / cold / warm and a secret on an iPhone. Each iPhone serve
scale (``IPHONES``) is a device profile.

Which cells run where: every cell of ``CELLS`` in ``tests/matrix/test_cells.py`` (one test
each, through the interface it names), every ``PROFILE_CELLS`` entry in
``tests/matrix/test_profiles.py`` (the default settings, paper dialect for the CLI run,
the reference solutions for ``eval mobile-eval``: Settings level 1), every ``MEETINGS`` row (the
service's own features, such as tenancy, a held phone, a cancel or a revoked token, on together)
in ``tests/matrix/test_meetings.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from tests.grounding_model import GROUNDED

__all__ = [
    "AXES",
    "CELLS",
    "COMMANDS",
    "DEVICES",
    "DIALECT_MODELS",
    "FEATURES",
    "IPHONES",
    "IPHONE_INTERFACES",
    "IPHONE_LIMITS",
    "IPHONE_REQUIRED",
    "KNOWN_BUGS",
    "MEETINGS",
    "PROFILES",
    "PROFILE_CELLS",
    "REQUIRED",
    "SLOW_INTERFACES",
    "Cell",
    "Meeting",
    "ProfileCell",
    "known_bug",
    "axes_for",
    "pairwise",
    "uncovered_pairs",
]

# --- the axes ------------------------------------------------------------------------------

INTERFACES = ("cli_run", "rest_task", "mcp", "eval_mobile_eval", "eval_families", "data_collect", "test_flow")
DIALECTS = ("paper", "function_calling", "ui_tars", "mobile_use", "autoglm")
ACCESSIBILITY = (False, True)
CACHE = ("off", "cold", "warm")  # warm: the same task run twice on one plan cache, the second checked
SECRET = (False, True)  # True: {{secret:pin}} configured (and typed where the interface takes an instruction)

AXES: dict[str, tuple[object, ...]] = {
    "interface": INTERFACES,
    "dialect": DIALECTS,
    "accessibility": ACCESSIBILITY,
    "cache": CACHE,
    "secret": SECRET,
}

# The model each dialect is played by (the scripted server answers as it would:
# tests/grounding_model.py, whose GROUNDED names the grounded dialects' models):
# (served model name, planner.dialect setting, coordinate space).
DIALECT_MODELS: dict[str, tuple[str, str, str]] = {
    "paper": ("gpt-4o", "auto", "screen"),
    "function_calling": ("gpt-4o", "function_calling", "screen"),
    **{dialect: (model, "auto", space) for model, dialect, space in GROUNDED},
}

# Every simulator profile; the CLI run and `eval mobile-eval` Settings level 1 run on each.
PROFILES = (
    "simphone",
    "nexus5-6",
    "pixel3-10",
    "pixel7-14",
    "pixel8-15-locked",
    "galaxy-s22-13",
    "galaxy-fold5-14",
    "pixel-tablet-14",
)
# The simulated iPhones: profile name -> (the simulator profile it plays, pixels per point),
# one per scale `simphone serve --ios --scale` offers.
IPHONES: dict[str, tuple[str, int]] = {
    "iphone-3x": ("simphone", 3),
    "iphone-2x": ("simphone", 2),
}
PROFILES += tuple(IPHONES)
PROFILE_INTERFACES = ("cli_run", "eval_mobile_eval")

# The devices of the design: an Android phone over adb, an iPhone over WDA (ios:NAME).
DEVICES = ("android", "iphone")
# The interfaces that cannot drive an iPhone, and why: known limitations (no cells), not
# bugs. An interface that learns ios:NAME leaves this table and gets its cells. Empty since
# cd49422 (`mobile-agent test --serial ios:NAME`); `data collect --device ios:NAME` runs as
# `eval families` does (its --augment profiles, outside the matrix, reads getprop over adb).
IPHONE_LIMITS: dict[str, str] = {}
IPHONE_INTERFACES = tuple(i for i in INTERFACES if i not in IPHONE_LIMITS)

# Every command of `mobile-agent` (and its plugins): the matrix interface it is, or why it
# is none. A new command fails tests/matrix/test_design.py until it is listed here.
COMMANDS: dict[str, str] = {
    "run": "cli_run",
    "serve": "rest_task",
    "mcp": "mcp",
    "eval mobile-eval": "eval_mobile_eval",
    "eval families": "eval_families",
    "data collect": "data_collect",
    "worker": "none: the farm's worker runs REST tasks (rest_task's runner) and needs PostgreSQL: tests/test_farm*.py",
    "schedule add": "none: a schedule submits REST tasks later (rest_task)",
    "schedule list": "none: reads schedules, runs nothing",
    "schedule delete": "none: removes a schedule, runs nothing",
    "test": "test_flow",
    "gc": "none: applies server.retention (deletes old tasks, runs, plans), runs nothing",
    "devices": "none: lists phones",
    "doctor": "none: checks the set-up",
    "adb": "none: the bundled adb",
    "report": "none: rewrites a report.html",
    "cache list": "none: reads the plan cache",
    "cache show": "none: reads the plan cache",
    "cache clear": "none: empties the plan cache",
    "eval annotate": "none: a person's verdicts on finished runs",
    "eval report": "none: reports from results files",
    "eval tasks": "none: lists the tasks",
    "data export": "none: exports finished runs (data_collect exports too)",
    "data verify": "none: judges finished runs",
    "data score": "none: offline step rates of an exported dataset",
}

# Interfaces whose cells take long (several runs or a whole suite each): marked `slow`.
SLOW_INTERFACES = ("eval_families", "data_collect")


@dataclass(frozen=True)
class Cell:
    interface: str
    dialect: str
    accessibility: bool
    cache: str
    secret: bool
    device: str = "android"

    @property
    def id(self) -> str:
        return "-".join(["iphone"] * (self.device == "iphone") + [self.interface, self.dialect, "a11y" if self.accessibility else "pixels", f"cache_{self.cache}",
                         "secret" if self.secret else "nosecret"])  # fmt: skip


@dataclass(frozen=True)
class ProfileCell:
    interface: str
    profile: str

    @property
    def id(self) -> str:
        return f"{self.interface}-{self.profile}"


# The combinations issue 28 found broken: in the design whatever the generator does.
REQUIRED = (
    Cell("cli_run", "paper", True, "off", False),  # accessibility: run with a model crashed
    Cell("rest_task", "paper", True, "off", False),  # accessibility: a REST task crashed
    Cell("mcp", "paper", True, "off", False),  # accessibility: click_text / run_instruction crashed
    Cell("eval_mobile_eval", "paper", True, "off", False),  # accessibility: the task crashed, eval exited 0
    Cell("cli_run", "function_calling", True, "cold", False),  # accessibility + --cache: nothing cached
    Cell("cli_run", "ui_tars", False, "warm", False),  # grounded dialects: nothing cached
    Cell("cli_run", "mobile_use", False, "warm", False),
    Cell("cli_run", "autoglm", False, "warm", False),
    Cell("cli_run", "paper", False, "warm", True),  # the secret in the plan cache
    Cell("rest_task", "function_calling", False, "warm", True),
    Cell("eval_families", "ui_tars", False, "off", False),  # step metrics of grounded dialects
    Cell("eval_mobile_eval", "ui_tars", False, "off", False),  # PS of a grounded dialect
    Cell("eval_families", "paper", False, "cold", False),  # `eval families --cache` refused
    Cell("cli_run", "function_calling", False, "off", False),  # function calling's step text
)
# On an iPhone: what issue 28 found on Android, where the iPhone differs (its tree is WDA's
# page source, its text fields XCUIElementType…, its apps bundle ids).
IPHONE_REQUIRED = (
    Cell("cli_run", "paper", True, "off", False, "iphone"),  # the page source as the tree
    Cell("cli_run", "paper", False, "warm", True, "iphone"),  # the secret in the plan cache
    Cell("rest_task", "function_calling", True, "warm", True, "iphone"),
    Cell("mcp", "paper", True, "off", False, "iphone"),  # click_text on the page source
    Cell("eval_mobile_eval", "ui_tars", False, "off", False, "iphone"),  # PS of a grounded dialect
)


def pairwise(axes: Mapping[str, Sequence[object]], required: Sequence[Mapping[str, object]] = ()) -> list[dict[str, object]]:
    """Rows (axis -> value) covering every pair of values of every two axes: ``required``
    first, then one greedy row at a time, each started from the first pair not yet covered
    and filled axis by axis with the value that covers most pairs still uncovered (ties:
    the axis's first value). Deterministic."""
    names = list(axes)
    uncovered = uncovered_pairs(axes, [])
    rows: list[dict[str, object]] = []

    def take(row: dict[str, object]) -> None:
        rows.append(row)
        for a, b in itertools.combinations(names, 2):
            uncovered.discard((a, row[a], b, row[b]))

    for row in required:
        take(dict(row))
    order = {name: {v: i for i, v in enumerate(axes[name])} for name in names}
    while uncovered:
        a, va, b, vb = min(uncovered, key=lambda p: (names.index(p[0]), order[p[0]][p[1]], names.index(p[2]), order[p[2]][p[3]]))
        row = {a: va, b: vb}
        for name in names:
            if name not in row:  # max keeps the first of equal gains
                row[name] = max(axes[name], key=lambda value, name=name, row=row: _gain(names, uncovered, row, name, value))
        take({name: row[name] for name in names})
    return rows


def _gain(names: list[str], uncovered: set[tuple[str, object, str, object]], row: dict[str, object], name: str,
          value: object) -> int:
    """How many uncovered pairs ``name = value`` would cover beside the values in ``row``."""
    def pair(x: str) -> tuple[str, object, str, object]:
        return (x, row[x], name, value) if names.index(x) < names.index(name) else (name, value, x, row[x])

    return sum(pair(x) in uncovered for x in row)


def uncovered_pairs(axes: Mapping[str, Sequence[object]], rows: Sequence[Mapping[str, object]]) -> set[tuple[str, object, str, object]]:
    """The pairs (axis a, value, axis b, value), a before b in ``axes``' order, that no row holds."""
    names = list(axes)
    pairs = {(a, va, b, vb) for a, b in itertools.combinations(names, 2) for va in axes[a] for vb in axes[b]}
    for row in rows:
        for a, b in itertools.combinations(names, 2):
            pairs.discard((a, row[a], b, row[b]))
    return pairs


_CELL_FIELDS = [f.name for f in fields(Cell)]
assert _CELL_FIELDS == [*AXES, "device"], "Cell's fields are the axes, in order, then the device"


def axes_for(device: str) -> dict[str, tuple[object, ...]]:
    """The axes of ``device``'s design: an iPhone's interfaces are those that reach one."""
    return {**AXES, "interface": IPHONE_INTERFACES} if device == "iphone" else AXES


def _design(device: str, required: Sequence[Cell]) -> list[Cell]:
    rows = pairwise(axes_for(device), [{n: getattr(c, n) for n in AXES} for c in required])
    return [Cell(**row, device=device) for row in rows]  # type: ignore[arg-type]


CELLS: tuple[Cell, ...] = tuple(dict.fromkeys([*_design("android", REQUIRED), *_design("iphone", IPHONE_REQUIRED)]))
PROFILE_CELLS: tuple[ProfileCell, ...] = tuple(ProfileCell(i, p) for i in PROFILE_INTERFACES for p in PROFILES)


# --- where the service's own features meet ----------------------------------------------------
# The axes above are a task's settings. The service's own features (who may see what, who holds
# a phone, what ends a run, whose plans replay) are no axis: they meet in named rows, each a
# test of its own in ``tests/matrix/test_meetings.py`` through the interface it names, every
# feature of the row on at once. A fix where two of them met adds its row here (``fixed`` names
# the commits whose fix the row holds); a new one of these features joins ``FEATURES``.

FEATURES: dict[str, str] = {
    "cancel": "POST /v1/tasks/{id}/cancel",
    "hung_adb": "an adb server that stops answering in the middle of a call (tests/adb_wedge.py)",
    "secret": "a {{secret:pin}} typed: the secret mask armed",
    "person": "person in the loop: the run asks, a person answers (POST /v1/tasks/{id}/reply)",
    "tenancy": "several tokens (server.tokens): users who may not see each other's tasks",
    "held_phone": "a phone another interface's run holds (its PhoneLease: mobile-agent run, an MCP run)",
    "any_phone": '"device": "any"',
    "cache": "the plan cache on",
    "teams": "tokens of one team (server.tokens team) share their cached plans",
    "grounded": "a grounded dialect (its own coordinate space)",
    "revoked": "a token taken out of server.tokens (the service restarted with the new tokens)",
    "schedule": "a recurring schedule (POST /v1/schedules)",
    "queued": "a task still queued when the service restarts",
    "webhook": "a callback_url hearing task_finished",
    "farm": "the farm: the API server and a `mobile-agent worker` on PostgreSQL",
}


@dataclass(frozen=True)
class Meeting:
    name: str
    interface: str  # the interface of the matrix the row runs through
    dialect: str
    features: frozenset[str]
    fixed: str  # the commits whose fix the row holds where the features meet


MEETINGS: tuple[Meeting, ...] = (
    Meeting("cancel-hung-adb-secret-person", "rest_task", "paper",
            frozenset({"cancel", "hung_adb", "secret", "person"}), "e0a33d5 0d7cc71"),
    Meeting("held-phone-two-tokens-any", "rest_task", "paper",
            frozenset({"held_phone", "tenancy", "any_phone", "person"}), "8a49add bdd3bbf 109afa4 aa82c96"),
    Meeting("farm-held-phone-two-tokens-any", "rest_task", "paper",
            frozenset({"farm", "held_phone", "tenancy", "any_phone"}), "30558f5 d6afbb9 aa82c96"),
    Meeting("mcp-cache-teams-grounded", "mcp", "ui_tars",
            frozenset({"cache", "teams", "tenancy", "grounded"}), "3e2532e ad04deb"),
    Meeting("revoked-token-schedule-queued-webhook", "rest_task", "paper",
            frozenset({"revoked", "schedule", "queued", "webhook", "tenancy"}), "c46c15a 9662e87 61a45ed"),
)


# --- the cells waiting for another engineer's fix --------------------------------------------
# name -> (the bug, which cells it fails). Such a cell is xfail(strict=True): when the fix
# lands it passes, the strict xfail fails, and the entry is removed here.


@dataclass(frozen=True)
class KnownBug:
    reason: str
    applies: Callable[[Cell | ProfileCell], bool]


def _cell(test: Callable[[Cell], bool]) -> Callable[[Cell | ProfileCell], bool]:
    return lambda cell: isinstance(cell, Cell) and test(cell)


KNOWN_BUGS: dict[str, KnownBug] = {
}


def known_bug(cell: Cell | ProfileCell) -> KnownBug | None:
    """The bugs that fail ``cell`` today, as one (their reasons joined), or None."""
    bugs = [bug for bug in KNOWN_BUGS.values() if bug.applies(cell)]
    if not bugs:
        return None
    return KnownBug("; ".join(bug.reason for bug in bugs), lambda _: True)


# --- the README's table ----------------------------------------------------------------------

_INTERFACE_NAMES = {
    "cli_run": "`mobile-agent run`",
    "rest_task": "REST task",
    "mcp": "MCP tools + `run_instruction`",
    "eval_mobile_eval": "`eval mobile-eval`",
    "eval_families": "`eval families`",
    "data_collect": "`data collect`",
    "test_flow": "`mobile-agent test` (a flow's `run:`)",
}
_DIALECT_NAMES = {
    "paper": "paper",
    "function_calling": "function calling",
    "ui_tars": "UI-TARS",
    "mobile_use": "Qwen `mobile_use`",
    "autoglm": "AutoGLM",
}


def _settings_text(cell: Cell) -> str:
    parts = ["a11y" if cell.accessibility else "pixels", {"off": "no cache", "cold": "cache cold", "warm": "cache warm"}[cell.cache]]
    if cell.secret:
        parts.append("secret")
    return " · ".join(parts) + (" ✗" if known_bug(cell) else "")


def readme_table() -> str:
    """The README's "Tested against" combinations table, made from the design (a test
    keeps the README's copy equal to it)."""
    head = "| interface | " + " | ".join(_DIALECT_NAMES[d] for d in DIALECTS) + " |"
    lines = [head, "|---" * (len(DIALECTS) + 1) + "|"]
    for device in DEVICES:
        for interface in axes_for(device)["interface"]:
            row = [_INTERFACE_NAMES[interface] + (" on an iPhone" if device == "iphone" else "")]
            for dialect in DIALECTS:
                cells = [c for c in CELLS if c.interface == interface and c.dialect == dialect and c.device == device]
                row.append("<br>".join(_settings_text(c) for c in cells) or " ")
            lines.append("| " + " | ".join(row) + " |")
    profiles = []
    for profile in PROFILES:
        marks = [i for i in PROFILE_INTERFACES if known_bug(ProfileCell(i, profile))]
        profiles.append(f"`{profile}`" + (" ✗ (" + ", ".join(_INTERFACE_NAMES[i] for i in marks) + ")" if marks else ""))
    lines.append("")
    lines.append("Every profile, default settings: `mobile-agent run` (paper dialect) and `eval mobile-eval --app "
                 "Settings --level 1` (reference solutions): " + ", ".join(profiles) + " (the iPhones: the "
                 "simulated phone over WebDriverAgent, `simphone serve --ios --scale 3` / `2`).")
    lines.append("")
    lines.append("Where the service's own features meet (`MEETINGS`, one test each): " + "; ".join(
        f"{_INTERFACE_NAMES[m.interface]} ({_DIALECT_NAMES[m.dialect]}): " + " + ".join(sorted(m.features))
        for m in MEETINGS) + ".")
    if IPHONE_LIMITS:
        lines.append("")
        lines.append("Not on an iPhone (known limitations): " + "; ".join(f"{_INTERFACE_NAMES[i]}: {why}"
                                                                       for i, why in IPHONE_LIMITS.items()) + ".")
    return "\n".join(lines)
