"""One driver per interface of the matrix: it runs a cell's task through that interface only
(the CLI's argv, REST over HTTP, the MCP SDK's client over stdio) and reports what came
back, for ``tests/matrix/test_cells.py`` to check against the phone's state.

The task: with no secret, "Turn on the dark mode" (Mobile-Eval settings-1: the theme
becomes dark); with a secret, a Chrome search typed from ``{{secret:pin}}`` (the search the
phone records is the secret's value). The interfaces that take no instruction (``eval
mobile-eval``, ``eval families``, ``data collect``) run their benchmark's Settings task,
with the secret configured. ``mobile-agent test`` runs a one-step flow whose ``run:`` is the
instruction (the plan cache on unless the cell's cache is off: ``--no-cache``). The model is the scripted grounding model of
``tests/grounding_model.py``, answering in the cell's dialect from the phone's ground truth.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from tests.grounding_model import GroundingModel, find_target
from tests.llm_server import RecordedRequest, chat_text
from tests.matrix.design import DIALECT_MODELS, Cell

__all__ = ["DARK_MODE", "SECRET_VALUE", "Iphone", "Ran", "ResyncingModel", "Rig", "Task", "cli_main", "focused_field", "run_cell",
           "simulated_iphone", "task_for"]

SECRET_VALUE = "Kestrel4817zq"  # distinctive: found in a file only if it leaked there
SETTINGS = "com.android.settings"
CHROME = "com.android.chrome"


@dataclass(frozen=True)
class Task:
    instruction: str
    lines: tuple[str, ...]
    check: Callable[[dict[str, Any]], str | None]  # the phone's state -> what is wrong, or None


def _dark(state: dict[str, Any]) -> str | None:
    return None if state["theme"] == "dark" else f"the theme is {state['theme']!r}, not dark"


def _searched_secret(state: dict[str, Any]) -> str | None:
    searches = state["apps"][CHROME]["searches"]
    last = searches[-1]["query"] if searches else None
    return None if last == SECRET_VALUE else f"Chrome's last search is {last!r}, not the secret's value"


DARK_MODE = Task("Turn on the dark mode.",
                 ("Open App (Settings)", "Click text (Display & brightness)", "Click text (Dark mode)"), _dark)
SECRET_SEARCH = Task("Search for {{secret:pin}} in Chrome.",
                     ("Open App (Chrome)", "Click text (Search or type web address)", "Type ({{secret:pin}})", "Enter"),
                     _searched_secret)


def task_for(cell: Cell) -> Task:
    takes_instruction = cell.interface in ("cli_run", "rest_task", "mcp", "test_flow")
    return SECRET_SEARCH if cell.secret and takes_instruction else DARK_MODE


@dataclass(frozen=True)
class Iphone:
    """A simulated iPhone as the interfaces name it: ``serial`` (ios:NAME), ``phone`` (the
    simulated phone behind it), ``url`` (its WDA front-end: ``ios.devices``' value)."""

    serial: str
    phone: Any
    url: str

    @property
    def ios_devices(self) -> dict[str, str]:
        return {self.serial.removeprefix("ios:"): self.url}


@contextlib.contextmanager
def simulated_iphone(name: str, scale: int = 3, **phone_kwargs: Any) -> Iterator[Iphone]:
    """The simulated phone served as an iPhone over WDA (what `simphone serve --ios` serves)."""
    from simphone import Phone
    from simphone.ios import WdaFrontEnd

    front = WdaFrontEnd(Phone(**phone_kwargs), scale=scale).start()
    try:
        yield Iphone(f"ios:{name}", front.phone, front.url)
    finally:
        front.stop()


@dataclass
class Rig:
    """What a cell runs with: the phone (a ``SimPhoneHandle``, or an ``Iphone``), the scripted
    model server, the adb server's port, a scratch folder, the ``service`` fixture (REST) and
    a way to set environment variables for the in-process CLI (pytest's ``monkeypatch.setenv``)."""

    phone: Any
    llm: Any
    adb_port: int
    tmp: Path
    service: Callable[..., Any]
    setenv: Callable[[str, str], None]

    @property
    def ios_devices(self) -> dict[str, str]:
        """``ios.devices`` for the phone: its WDA for an iPhone, none for an Android phone."""
        return self.phone.ios_devices if isinstance(self.phone, Iphone) else {}

    @property
    def runs(self) -> Path:
        return self.tmp / "runs"

    @property
    def cache_db(self) -> Path:
        return self.tmp / "plans.sqlite3"


@dataclass
class Ran:
    """What the interface answered for each run of the cell (two for a warm cache: cold, then warm)."""

    ok: list[bool] = field(default_factory=list)
    detail: list[str] = field(default_factory=list)
    model_calls: list[int] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # every output folder the runs wrote
    sent: list[RecordedRequest] = field(default_factory=list)  # every request the model server received, all runs

    def took(self, llm: Any) -> None:
        """A run ended: its model calls (the server's record, cleared before each run)."""
        self.model_calls.append(len(llm.chat_requests))
        self.sent.extend(llm.requests)

    def steps(self) -> list[dict[str, Any]]:
        """Every step line of every trajectory under the folders."""
        out = []
        for folder in self.folders:
            for path in sorted(folder.rglob("trajectory.jsonl")):
                for line in path.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        record = json.loads(line)
                        if record.get("type") == "step":
                            out.append(record)
        return out

    def serials(self) -> set[str | None]:
        """The phone every trajectory under the folders says it ran on (its header's device)."""
        found: set[str | None] = set()
        for folder in self.folders:
            for path in folder.rglob("trajectory.jsonl"):
                first = path.read_text(encoding="utf-8").split("\n", 1)[0]
                found.add((json.loads(first).get("device") or {}).get("serial") if first.strip() else None)
        return found

    def last_steps(self) -> list[dict[str, Any]]:
        """The step lines of the newest planned trajectory (the warm run's, for a warm cell)."""
        trajectories = []
        for folder in self.folders:
            for path in folder.rglob("trajectory.jsonl"):
                lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
                if lines and lines[0].get("mode") != "mcp":
                    trajectories.append((lines[0].get("started_at", 0), lines))
        if not trajectories:
            return []
        return [x for x in max(trajectories, key=lambda t: t[0])[1] if x.get("type") == "step"]


@dataclass
class ResyncingModel(GroundingModel):
    """The grounding model, which answers the reference lines in order, made to follow a
    plan cache: when replayed steps went ahead of it (it was not asked for them), it picks
    up at the furthest line that can be played on the screen now (its text is there; a
    Type needs an empty focused field, an Enter a filled one)."""

    focused: Any = None  # () -> "empty" | "filled" | None: the focused text field
    done: Any = None  # () -> bool: the phone's state is the task's goal (the completion check's verdict)

    def __call__(self, request_json: dict[str, Any]) -> Any:
        text = chat_text(request_json)
        if "Answer with its number only" in text:  # several places match: the first, as a model would
            return "1"
        if "Verdict" in text and "Reason" in text and "tools" not in request_json:
            if self.done is None or self.done():
                return "Verdict: done\nReason: the screen shows the instruction carried out."
            return "Verdict: not done\nReason: the screen does not show the instruction carried out."
        with self._lock:
            playable = [k for k in range(self._next, len(self.lines)) if self._playable(self.lines[k])]
            self._next = max([self._next, *playable[-1:]])
        return super().__call__(request_json)

    def _aim(self, box: list[int]) -> tuple[float, float]:
        """As a grounding model may aim: at the control a label sits in (a card, a text field),
        on its part right of the label where nothing else is drawn. Snapping sees that control
        only in the accessibility tree (a node; the pixels show the label, not the control's
        bounds), so with the tree on the tap snaps to the control's centre, with it off to the
        label nearby; both are in the control, so the task is done either way, and the step's
        ``snap.target`` says which (tests/matrix/test_cells.py). A label in no control, or with
        too little of the control beside it, is aimed at its centre."""
        control = self._control_around(box)
        if control is not None and control[2] - box[2] >= _CONTROL_MARGIN:
            return super()._aim([box[2], box[1], control[2], box[3]])
        return super()._aim(box)

    def _control_around(self, box: list[int]) -> list[int] | None:
        """The smallest clickable widget of the ground truth that holds ``box`` (itself excluded)."""
        around = [e["box"] for e in self.ground_truth()
                  if e["kind"] == "widget" and e.get("clickable") and list(e["box"]) != list(box)
                  and e["box"][0] <= box[0] and e["box"][1] <= box[1] and e["box"][2] >= box[2] and e["box"][3] >= box[3]]  # fmt: skip
        return min(around, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), default=None)

    def _playable(self, line: str) -> bool:
        name, _, rest = line.partition("(")
        name, arg = name.strip().lower(), rest.rstrip(")").strip()
        if name == "open app":
            return True
        if name in ("click text", "long press"):
            return find_target(self.ground_truth(), "text", arg) is not None
        if name == "type":
            return self.focused is not None and self.focused() == "empty"
        if name == "enter":
            return self.focused is not None and self.focused() == "filled"
        return False  # other keys and scrolls: only in their turn


# How much of a control beside its label (px) the model aims at instead of the label: more
# than snapping's reach from the label would leave ambiguous.
_CONTROL_MARGIN = 40


def focused_field(state: dict[str, Any]) -> str | None:
    """Whether a text field has focus: "empty" (what a Type is for), "filled" (what Enter
    is for), None."""
    field_name = state["focus"]
    if field_name is None:
        return None
    view = state["tasks"][state["foreground"]][-1]
    return "filled" if view.get("fields", {}).get(field_name) else "empty"


def model_for(cell: Cell, rig: Rig, task: Task) -> GroundingModel:
    _, _, space = DIALECT_MODELS[cell.dialect]
    phone = rig.phone.phone
    return ResyncingModel(cell.dialect, space, list(task.lines), phone.ground_truth, screen=(phone.width, phone.height),
                          focused=lambda: focused_field(phone.state()),
                          done=lambda: task.check(phone.state()) is None)


def settings_env(cell: Cell, rig: Rig) -> dict[str, str]:
    """The cell's settings as a user sets them: MOBILE_AGENT_* variables."""
    model, dialect, _ = DIALECT_MODELS[cell.dialect]
    env = {
        "MOBILE_AGENT_ADB__SERVER_PORT": str(rig.adb_port),
        "MOBILE_AGENT_PLANNER__BASE_URL": rig.llm.base_url,
        "MOBILE_AGENT_PLANNER__API_KEY": "k-matrix",
        "MOBILE_AGENT_PLANNER__MODEL": model,
        "MOBILE_AGENT_PLANNER__DIALECT": dialect,
        "MOBILE_AGENT_PLANNER__MAX_RETRIES": "1",
        "MOBILE_AGENT_PERCEPTION__ACCESSIBILITY": "true" if cell.accessibility else "false",
        "MOBILE_AGENT_PERCEPTION__DETECTOR": "proposals",
        "MOBILE_AGENT_PERCEPTION__RANKER": "heuristic",
        "MOBILE_AGENT_AGENT__SETTLE_TIMEOUT_S": "1.5",
        "MOBILE_AGENT_AGENT__SETTLE_INTERVAL_S": "0.1",
        "MOBILE_AGENT_AGENT__OUTPUT_DIR": str(rig.runs),
        "MOBILE_AGENT_CACHE__DATABASE_URL": f"sqlite:///{rig.cache_db}",
    }
    if cell.secret:
        env["MOBILE_AGENT_AGENT__NAMED_SECRETS"] = json.dumps({"pin": SECRET_VALUE})
    if rig.ios_devices:
        env["MOBILE_AGENT_IOS__DEVICES"] = json.dumps(rig.ios_devices)
    return env


def _runs_of(cell: Cell) -> int:
    return 2 if cell.cache == "warm" else 1


def _fresh(rig: Rig) -> None:
    """The phone as freshly set up (between a warm cell's two runs)."""
    rig.phone.phone.reset()


@contextlib.contextmanager
def _captured() -> Iterator[io.StringIO]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        yield out


def cli_main(argv: list[str]) -> tuple[int, str]:
    from mobile_agent.cli import main

    with _captured() as out:
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refused the arguments
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue()


# --- the interfaces ---------------------------------------------------------------------------


def _cli_run(cell: Cell, rig: Rig, task: Task, ran: Ran) -> None:
    for name, value in settings_env(cell, rig).items():
        rig.setenv(name, value)
    for n in range(_runs_of(cell)):
        if n:
            _fresh(rig)
        rig.llm.script([], default=model_for(cell, rig, task))
        args = ["run", "--serial", rig.phone.serial, "-i", task.instruction, "--json", "--yes", "-o", str(rig.runs)]
        if cell.cache != "off":
            args.append("--cache")
        code, out = cli_main(args)
        result = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        ran.ok.append(code == 0 and result.get("status") == "completed")
        ran.detail.append(f"exit {code}: {result.get('status')} — {result.get('reason')}")
        ran.took(rig.llm)
    ran.folders.append(rig.runs)


def _rest_task(cell: Cell, rig: Rig, task: Task, ran: Ran) -> None:
    model, dialect, _ = DIALECT_MODELS[cell.dialect]
    overrides: dict[str, Any] = {
        "planner.model": model,
        "planner.dialect": dialect,
        "perception.accessibility": cell.accessibility,
        "perception.detector": "proposals",
        "perception.ranker": "heuristic",
        "cache.database_url": f"sqlite:///{rig.cache_db}",
        "agent.completion_check": True,
    }
    if cell.secret:
        overrides["agent.named_secrets"] = {"pin": SECRET_VALUE}
    if rig.ios_devices:
        overrides["ios.devices"] = rig.ios_devices
    live = rig.service([rig.phone], **overrides)
    for n in range(_runs_of(cell)):
        if n:
            _fresh(rig)
        rig.llm.script([], default=model_for(cell, rig, task))
        body: dict[str, Any] = {"instruction": task.instruction, "device": rig.phone.serial}
        if cell.cache != "off":
            body["cache"] = True
        created = live.client.post("/v1/tasks", json=body)
        if created.status_code != 202:
            ran.ok.append(False)
            ran.detail.append(f"POST /v1/tasks answered {created.status_code}: {created.text[:300]}")
            ran.took(rig.llm)
            continue
        done = live.wait_task(created.json()["id"], timeout=120)
        ran.ok.append(done["status"] == "completed")
        ran.detail.append(f"{done['status']}: {(done.get('result') or {}).get('reason')} {done.get('error') or ''}")
        ran.took(rig.llm)
    ran.folders.append(live.settings.agent.output_dir)


def _mcp(cell: Cell, rig: Rig, task: Task, ran: Ran) -> None:
    from tests.mcp_helpers import mcp_env, stdio_session, tool_json

    env = mcp_env(rig.adb_port, MCP_TEST_LOG=str(rig.tmp / "mcp.log"),
                  **{k: v for k, v in settings_env(cell, rig).items() if k != "MOBILE_AGENT_ADB__SERVER_PORT"})
    if cell.cache != "off":
        env["MOBILE_AGENT_CACHE__ENABLED"] = "true"
    runs = rig.tmp / "mcp-runs"
    first, target = task.lines[0], task.lines[1]
    app = first[first.index("(") + 1 : -1]
    text = target[target.index("(") + 1 : -1]

    async def main() -> None:
        async with stdio_session(env, "--serial", rig.phone.serial, "--runs-dir", str(runs)) as session:
            # the tool calls: open the app and tap the task's first target, as a client's model would
            opened = await session.call_tool("open_app", {"app": app})
            after_open = rig.phone.phone.state()
            clicked = await session.call_tool("click_text", {"text": text})
            tools_ok = not opened.is_error and not clicked.is_error and bool(tool_json(clicked).get("ok"))
            after_click = rig.phone.phone.state()
            # the tap landed: the app's page or its focused field changed (the foreground alone
            # was already right after open_app)
            tapped = (after_click["current"], after_click["focus"]) != (after_open["current"], after_open["focus"])
            ran.ok.append(tools_ok and tapped and after_click["foreground"] == (CHROME if task is SECRET_SEARCH else SETTINGS))
            ran.detail.append(f"tool calls: open_app {opened.content[0].text[:200]!r}, click_text {clicked.content[0].text[:300]!r}")
            ran.model_calls.append(0)
            for _ in range(_runs_of(cell)):
                _fresh(rig)  # run_instruction does the whole task from a fresh phone
                rig.llm.script([], default=model_for(cell, rig, task))
                answer = await session.call_tool("run_instruction", {"instruction": task.instruction})
                result = tool_json(answer) if not answer.is_error else {}
                ran.ok.append(result.get("status") == "completed")
                ran.detail.append(f"run_instruction: {result.get('status')} — {result.get('reason')} {answer.content[0].text[:200] if answer.is_error else ''}")
                ran.took(rig.llm)

    anyio.run(main)
    ran.folders.append(runs)


def _eval(cell: Cell, rig: Rig, task: Task, ran: Ran, command: list[str], lines: tuple[str, ...]) -> None:
    for name, value in settings_env(cell, rig).items():
        rig.setenv(name, value)
    model, _, _ = DIALECT_MODELS[cell.dialect]
    for n in range(_runs_of(cell)):
        if n:
            _fresh(rig)
        rig.llm.script([], default=model_for(cell, rig, Task(task.instruction, lines, task.check)))
        out = rig.tmp / f"eval-{n}"
        args = [*command, "--device", rig.phone.serial, "--model", model, "--base-url", rig.llm.base_url,
                "--api-key", "k-matrix", "-o", str(out)]
        if cell.cache != "off":
            args.append("--cache")
        code, printed = cli_main(args)
        records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()] \
            if (out / "results.jsonl").is_file() else []  # fmt: skip
        # judged on the phone's state, and the reference played step by step scores every step
        success = bool(records) and all(
            r.get("success") and r.get("judged_by") == "state" and (r.get("ps"), r.get("sr_act"), r.get("sr")) == (1.0, 1.0, 1.0)
            for r in records
        )
        if command[0] == "data":  # collected: verified and exported as training samples
            exported = out / "dataset" / "runs.jsonl"
            success = success and exported.is_file() and len(exported.read_text().splitlines()) == len(records)
        ran.ok.append(code == 0 and success)
        scores = [(r.get("task_id"), r.get("success"), r.get("judged_by"), r.get("ps"), r.get("sr_act"), r.get("sr"), r.get("error"))
                  for r in records]  # fmt: skip
        ran.detail.append(f"exit {code}; records (id, success, judged_by, ps, sr_act, sr, error) {scores}; {printed[-300:]!r}")
        ran.took(rig.llm)
        ran.folders.append(out)


def _test_flow(cell: Cell, rig: Rig, task: Task, ran: Ran) -> None:
    for name, value in settings_env(cell, rig).items():
        rig.setenv(name, value)
    flow = rig.tmp / "flow.yaml"
    flow.write_text(json.dumps({"name": "matrix cell", "steps": [{"run": task.instruction}]}), encoding="utf-8")  # JSON is YAML
    for n in range(_runs_of(cell)):
        if n:
            _fresh(rig)
        rig.llm.script([], default=model_for(cell, rig, task))
        out = rig.tmp / f"flow-{n}"
        args = ["test", str(flow), "--serial", rig.phone.serial, "--json", "-o", str(out)]
        if cell.cache == "off":
            args.append("--no-cache")
        code, printed = cli_main(args)
        suite = json.loads(printed.strip().splitlines()[-1]) if printed.strip() else {}
        flows = suite.get("flows") or [{}]
        ran.ok.append(code == 0 and suite.get("passed") == 1)
        ran.detail.append(f"exit {code}: {flows[0].get('status')} — {flows[0].get('message')}")
        ran.took(rig.llm)
        ran.folders.append(out)


FAMILY = "settings-theme"
FAMILY_SEED = 1  # "Switch the phone to dark mode": the fresh phone is light, so the state check can fail


def family_task() -> Any:
    from eval.families import FAMILIES

    return FAMILIES[FAMILY].instance(FAMILY_SEED)


def _family_check(state: dict[str, Any]) -> str | None:
    spec = family_task().validator
    path, value = spec.params["path"], spec.params["value"]
    return None if state[path] == value else f"{path} is {state[path]!r}, not {value!r}"


def run_cell(cell: Cell, rig: Rig) -> tuple[Task, Ran]:
    """Run ``cell``'s task through its interface; the task (whose ``check`` reads the phone's
    state) and what came back."""
    task = task_for(cell)
    ran = Ran()
    if cell.interface == "cli_run":
        _cli_run(cell, rig, task, ran)
    elif cell.interface == "rest_task":
        _rest_task(cell, rig, task, ran)
    elif cell.interface == "mcp":
        _mcp(cell, rig, task, ran)
    elif cell.interface == "test_flow":
        _test_flow(cell, rig, task, ran)
    elif cell.interface == "eval_mobile_eval":
        _eval(cell, rig, task, ran, ["eval", "mobile-eval", "--task", "settings-1"], DARK_MODE.lines)
    elif cell.interface in ("eval_families", "data_collect"):
        instance = family_task()
        lines = tuple(line.split(" || ")[0].strip() for line in instance.reference_lines())
        verb = ["eval", "families"] if cell.interface == "eval_families" else ["data", "collect"]
        task = Task(instance.instruction, lines, _family_check)
        _eval(cell, rig, task, ran, [*verb, "--family", FAMILY, "--seeds", f"{FAMILY_SEED}:{FAMILY_SEED + 1}"], lines)
    else:
        raise AssertionError(f"no driver for the interface {cell.interface!r}")
    return task, ran
