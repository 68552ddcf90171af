"""What the MCP tools do, as plain synchronous calls (the server runs them in threads).

Every operation goes through the agent's own step parts (``sessions.SessionTrajectory``,
``guarded.guarded_step``): the same localization as ``mobile-agent run --script``, the
planned run's safety guard and confirmation policy (``agent.safety``), the same secrets
and redaction, and a step of the MCP session's trajectory, recorded like any run's.
Nothing here taps the phone directly.

Screens and perception: a screenshot is downscaled for the client (``max_side``); the
boxes of ``find_text`` / ``find_icon`` stay in screen pixels, as the operations take them.
"""

from __future__ import annotations

import io
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image as PILImage

from mobile_agent.agent.disk import free_mb as disk_free_mb
from mobile_agent.agent.mask import SecretMask, black_out, mask_live_frame, secret_values
from mobile_agent.apps.platforms import PinnedApps, app_id_platform
from mobile_agent.errors import MobileAgentError, PhoneBusyError
from mobile_agent.operations.context import AgentDevice
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import REGISTRY, OperationCard
from mobile_agent.settings import Settings
from perception.blank_screen import blank_app_area

if TYPE_CHECKING:
    from mobile_agent.agent import RunResult
    from mobile_agent.agent.people import UserChannel
    from mobile_agent.device import Phone
    from mobile_agent.mcp_server.sessions import McpSession, SessionTrajectory
    from perception.types import Location

__all__ = ["LOCAL", "NOT_TOOLS", "PhoneService", "operation_cards", "owner_settings"]

LOCAL = "local"  # the stdio user's name (the client that started the process): no token may take it

# Cards that end or pause a planned run: they mean nothing as a one-off tool call
# (the MCP client is the one who decides when it is done, and asks its own user).
NOT_TOOLS = frozenset({"stop", "ask_user", "finished", "give_up", "hand_over"})


def operation_cards() -> list[OperationCard]:
    """The operations offered as tools: the paper's, then the coordinate ones (tap at a
    point, swipe between points…) that the first set does not already name."""
    cards: list[OperationCard] = []
    names: set[str] = set()
    for registry in (REGISTRY, COORDINATE_REGISTRY):
        for card in registry:
            if card.name in NOT_TOOLS or card.name in names:
                continue
            names.add(card.name)
            cards.append(card)
    return cards


def owner_settings(settings: Settings, owner: str) -> Settings:
    """``settings`` as ``owner``'s calls and runs use them: they may type only the named secrets
    ``owner`` may (``ServerSettings.may_type``: an admin's every one, a user's those its
    ``server.tokens.NAME.secrets`` lists; the stdio user, ``LOCAL``, every one), as a REST task's
    run (``server.runner.task_settings``). The others' values stay among those hidden
    (``agent.secrets``: masked and redacted, never typed)."""
    agent = settings.agent
    if owner == LOCAL or not agent.named_secrets:
        return settings
    named = {name: value for name, value in agent.named_secrets.items() if settings.server.may_type(owner, name)}
    if len(named) == len(agent.named_secrets):
        return settings
    hidden = [value for name, value in agent.named_secrets.items() if name not in named]
    return settings.model_copy(update={"agent": agent.model_copy(
        update={"named_secrets": named, "secrets": [*agent.secrets, *hidden]})})


class ToolFailure(Exception):
    """A call the client can correct (a bad serial, an unknown run): a tool error."""


def disk_refusal(settings: Settings) -> str | None:
    """Why an acting call must be refused now, or None: every operation writes a step (its
    screenshots) under ``agent.output_dir`` and a run its folder, so while that folder's disk has
    less than ``server.retention.min_free_mb`` free nothing acts, as the REST service refuses a
    task then (507; ``server.retention``). No path in the text: it goes to the client."""
    limit = settings.server.retention.min_free_mb
    if not limit:
        return None
    free_mb = disk_free_mb(Path(settings.agent.output_dir).resolve())
    if free_mb is None or free_mb >= limit:
        return None
    return (f"the disk of the runs folder (agent.output_dir) has {free_mb:.0f} MB free, under "
            f"server.retention.min_free_mb = {limit:g}: nothing acts until there is more free space")


# how long a call waits for a phone another run holds, before it answers "phone busy"
OPERATION_WAIT_S = 30.0
RUN_WAIT_S = 600.0


@dataclass
class Shot:
    png: bytes
    width: int  # of the PNG
    height: int
    screen_width: int  # of the phone's screen
    screen_height: int
    # the app's area is one flat colour: a FLAG_SECURE window captures so (``perception.blank_screen``)
    blank: bool = False


@dataclass
class PhoneService:
    """The phones of one MCP server, with the settings every call follows."""

    settings: Settings
    max_side: int = 1024
    operation_wait_s: float = OPERATION_WAIT_S  # an operation call's wait for a phone another run holds
    _devices: dict[str, Phone] = field(default_factory=dict)  # the phones it opened, by name and by serial
    _shots: dict[tuple[str, str], Shot] = field(default_factory=dict)  # (principal, serial) -> its last shot
    _mask: SecretMask | None = None  # the secrets' OCR lines of each look (``agent.mask``)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    runs: dict[str, Path] = field(default_factory=dict)  # run id -> trajectory folder, this server's runs
    owners: dict[str, str] = field(default_factory=dict)  # run id -> the principal whose session made it

    # -- devices ------------------------------------------------------------------
    def list_devices(self) -> dict[str, Any]:
        """The Android phones adb sees and the iPhones of ``ios.devices`` and USB (each WDA asked
        whether it is ready), each with its ``platform``. With iPhones there, an adb
        server that does not answer lists them alone and says why in ``problem``."""
        from mobile_agent.device import list_devices, list_iphones
        from mobile_agent.errors import DeviceError

        answer: dict[str, Any] = {"devices": []}
        iphones = [iphone.to_dict() for iphone in list_iphones(self.settings.ios)]
        try:
            android = list_devices(self.settings.adb)
        except DeviceError as exc:
            if not iphones:
                raise
            answer["problem"] = f"no Android phones: {exc.message}"
            android = []
        answer["devices"] += [{**info.to_dict(), "platform": "android"} for info in android]
        answer["devices"] += iphones
        return answer

    def device(self, serial: str | None) -> AgentDevice:
        """The phone to drive: ``serial``, else ``adb.serial`` of the settings, else the
        only one attached (the CLI's rule, ``open_phone``: ``ios:NAME`` is the iPhone that
        ``ios.devices`` names). Opened once and kept until ``close``: of two first calls at
        once, the one that opens first is kept and the other closes its own (no lock is held
        while a phone opens, so a phone that does not answer holds up no other call)."""
        from mobile_agent.device import close_phone, open_phone

        key = serial or self.settings.adb.serial or ""
        with self._lock:
            known = self._devices.get(key)
        if known is not None:
            return known
        device = open_phone(self.settings, serial)
        with self._lock:
            kept = self._devices.get(key)
            if kept is None:
                kept = self._devices.get(device.serial)
            if kept is None:
                self._devices[key] = self._devices[device.serial] = device
            else:  # another call opened it meanwhile (or under another of its names)
                self._devices[key] = kept
        if kept is not None:
            close_phone(device)
            return kept
        return device

    def close(self) -> None:
        """Close every phone this service opened (an iPhone's WDA connections, a USB iPhone's
        forward): the MCP server has stopped (``mobile-agent mcp``'s end)."""
        from mobile_agent.device import close_phone

        with self._lock:
            opened = list({id(phone): phone for phone in self._devices.values()}.values())
            self._devices.clear()
        for phone in opened:
            close_phone(phone)

    # -- looking ------------------------------------------------------------------
    def screenshot(self, serial: str | None, max_side: int | None = None, *, principal: str = "local",
                   admin: bool = True, viewer: bool = False) -> Shot:
        """What the phone shows (masked, downscaled), kept as ``principal``'s last screenshot."""
        device = self.device(serial)
        self._may_look(device.serial, principal, admin, viewer)
        frame = device.screenshot()
        image = PILImage.fromarray(self._shown(device.serial, frame.pixels))
        side = max_side or self.max_side
        scale = min(1.0, side / max(frame.width, frame.height))
        if scale < 1.0:
            image = image.resize((max(1, round(frame.width * scale)), max(1, round(frame.height * scale))),
                                 PILImage.Resampling.LANCZOS)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=False)
        shot = Shot(buffer.getvalue(), image.width, image.height, frame.width, frame.height,
                    blank=blank_app_area(frame.pixels))
        with self._lock:
            self._shots[(principal, device.serial)] = shot
        return shot

    def last_screenshot(self, serial: str, principal: str = "local") -> Shot | None:
        """The last screenshot ``principal`` took of the phone (never another principal's)."""
        with self._lock:
            return self._shots.get((principal, serial))

    def _may_look(self, serial: str, principal: str, admin: bool, viewer: bool = False) -> None:
        """A phone that another principal's run holds shows to an admin only, a free one to a
        principal that may act (the REST device screenshot's rule, docs/security.md):
        ``PhoneBusyError`` / ``ToolFailure`` otherwise."""
        from mobile_agent.device import lease_holder

        holder = None if admin else lease_holder(self.settings.adb, serial)
        if holder is not None and holder != f"MCP session of {principal}":
            raise PhoneBusyError(f"phone {serial} is busy: {holder} holds it", serial=serial, holder=holder)
        if viewer:
            raise ToolFailure(f"the token {principal!r} is a viewer: the screen of a free phone (what the last run "
                              "left there) is for those who may act on it")

    def find(self, serial: str | None, *, text: str | None = None, icon: str | None = None,
             position: str | None = None, principal: str = "local", admin: bool = True,
             viewer: bool = False) -> dict[str, Any]:
        from mobile_agent.locate import build_locator
        from mobile_agent.operations.catalog import find_icon_on, find_text_on

        device = self.device(serial)
        self._may_look(device.serial, principal, admin, viewer)
        frame = device.screenshot()
        locator = build_locator(self.settings)
        shown = self._shown(device.serial, frame.pixels)
        secrets = self._secret_mask().text
        if text is not None and (shown is not frame.pixels or secrets.shows(text)):
            # a secret on the screen, or asked for: looked for where the screen shows no secret (the
            # screenshot's own copy, not the accessibility tree, which holds the typed value), so that
            # the value and its parts are "not found" like any text the screen does not show
            location = locator.find_text(shown, text)
        elif text is not None:
            location = find_text_on(device, locator, frame.pixels, text, self.settings)
        else:
            location = find_icon_on(device, locator, shown, icon or "", position, self.settings)
        answer = {"serial": device.serial, "screen": [frame.width, frame.height], **_location_dict(location)}
        if text is not None and secrets.shows(text):
            return answer  # the masked frame's texts: it echoes the query, never says it was a secret
        # the texts read (candidates, closest, feedback) less any that shows a secret: the tree holds what
        # the pixels hide (a protected screen's, a field OCR cannot read)
        redacted: dict[str, Any] = secrets(answer)
        return redacted

    def _secret_mask(self) -> SecretMask:
        with self._lock:
            if self._mask is None:
                from mobile_agent.locate import build_locator

                settings = self.settings
                self._mask = SecretMask(secret_values(settings), lambda: build_locator(settings))
            return self._mask

    def _shown(self, serial: str, pixels: np.ndarray) -> np.ndarray:
        """A capture of phone ``serial`` as it may leave (``agent.mask``): what the run or MCP
        session on the phone hides (its password fields, the field a secret was typed into),
        and every line of this frame's OCR that shows a secret or a part of one."""
        live = mask_live_frame(serial, pixels)
        mask = self._secret_mask()
        return black_out(live, mask.boxes(pixels)) if mask.active else live

    # -- acting -------------------------------------------------------------------
    def operate(self, card: OperationCard, params: dict[str, Any], serial: str | None,
                channel: UserChannel | None, session: McpSession, candidate: int | None = None,
                owner: str = "local", *, cancel: threading.Event | None = None) -> dict[str, Any]:
        """One operation, as the next step of ``session``'s trajectory on the phone, holding the
        phone's lease (``mobile_agent.device.lease``: never between another run's steps; the wait
        for it ends early when ``cancel`` is set: the call was cancelled). ``owner`` is the
        principal the session belongs to (its runs are theirs)."""
        from mobile_agent.device import PhoneLease

        guess = params.get("text") if card.name in LOCATE_BY_TEXT else None
        if isinstance(guess, str) and self._secret_mask().text.shows(guess):
            # a secret's value or a part of it is looked for as a text no screen shows, so that the
            # answer is an absent text's (nothing pressed, no "[REDACTED]"): no client confirms a guess
            stand_in = f"zq{uuid.uuid4().hex[:12]}"
            answer = self.operate(card, {**params, "text": stand_in}, serial, channel, session, candidate, owner,
                                  cancel=cancel)
            echoed: dict[str, Any] = _replaced(answer, stand_in, guess)
            return echoed
        model = card.params_model.model_validate(params)  # ValidationError: the caller's mistake
        full = disk_refusal(self.settings)
        if full is not None:
            raise ToolFailure(full)
        text = card.render(model)
        action = ParsedAction(card.name, model, raw=text, text=text)
        device = self.device(serial)
        opened = action.opened_app
        platform = app_id_platform(opened) if opened else None
        if opened and platform is not None:  # Open App (com.android.settings) on an iPhone: as REST refuses it
            refused = PinnedApps("operation", {opened.strip(): platform}).on_device(device.serial)
            if refused is not None:
                raise refused
        with PhoneLease(self.settings.adb, device.serial, f"MCP session of {owner}", wait_s=self.operation_wait_s,
                        cancel=cancel):
            return session.trajectory(device, self._remembered_for(owner)).operate(action, candidate, channel)

    def run_instruction(self, instruction: str, serial: str | None, *, cancel: threading.Event, on_event: Any,
                        channel: UserChannel | None, max_steps: int | None, session: McpSession,
                        owner: str = "local", team: str | None = None) -> RunResult:
        """A planned run with its own trajectory, linked from ``session``'s on that phone; the
        phone's lease is held from its first step to its last (a second run waits for it)."""
        from mobile_agent.agent import Agent
        from mobile_agent.device import PhoneLease

        full = disk_refusal(self.settings)
        if full is not None:
            raise ToolFailure(full)
        if not self.settings.planner.configured:
            raise ToolFailure(
                "no planner endpoint is configured: set MOBILE_AGENT_PLANNER__BASE_URL and "
                "MOBILE_AGENT_PLANNER__API_KEY (any OpenAI-compatible endpoint that takes images) for the server"
            )
        settings = owner_settings(self.settings, owner)
        if max_steps is not None:
            settings = settings.model_copy(update={"agent": settings.agent.model_copy(update={"max_steps": max_steps})})
        if owner != LOCAL and not settings.cache.shared:
            # a token's cached plans are its team's, else its own (docs/security.md), as a REST task's
            # (server.runner.cache_namespace); over stdio the local user's (""), as mobile-agent run's
            namespace = f"team:{team}" if team else f"token:{owner}"
            namespaced = settings.cache.model_copy(update={"namespace": namespace})
            settings = settings.model_copy(update={"cache": namespaced})
        device = self.device(serial)

        def start() -> RunResult:
            result = Agent(settings, device=device, on_event=on_event, channel=channel).run(instruction, cancel=cancel)
            with self._lock:
                self.runs[result.run_id] = result.trajectory_dir
                self.owners[result.run_id] = owner
            return result

        with PhoneLease(self.settings.adb, device.serial, f"MCP session of {owner}", wait_s=RUN_WAIT_S, cancel=cancel):
            return session.trajectory(device, self._remembered_for(owner)).linked(instruction, start)

    # -- records ------------------------------------------------------------------
    def _remembered_for(self, owner: str) -> Callable[[str, SessionTrajectory], None]:
        def remember(run_id: str, trajectory: SessionTrajectory) -> None:
            with self._lock:
                self.runs[run_id] = trajectory.run.trajectory_dir
                self.owners[run_id] = owner

        return remember

    def run_folder(self, run_id: str, reader: str | None = None) -> Path:
        """The trajectory folder of ``run_id``: one of this server's runs, else a folder of
        ``agent.output_dir`` whose header names it. With ``reader`` (a principal that is not an
        admin), only a run of that principal's own sessions: any other is "no run", as one
        that does not exist (docs/security.md)."""
        with self._lock:
            known = self.runs.get(run_id)
            owner = self.owners.get(run_id)
        if reader is not None:
            if known is None or owner != reader:
                raise ToolFailure(f"no run {run_id!r} of yours on this server")
            return known
        if known is not None:
            return known
        if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
            raise ToolFailure(f"{run_id!r} is not a run id")
        root = Path(self.settings.agent.output_dir)
        for path in sorted(root.glob("*/trajectory.jsonl")) if root.is_dir() else []:
            if path.parent.name == run_id or path.parent.name.endswith(run_id):
                return path.parent
            try:
                with path.open(encoding="utf-8") as fh:
                    header = json.loads(fh.readline() or "{}")
            except (OSError, ValueError):
                continue
            if header.get("run_id") == run_id:
                return path.parent
        raise ToolFailure(f"no run {run_id!r} in agent.output_dir")  # the folder's path stays on the server

    def trajectory(self, run_id: str, reader: str | None = None) -> dict[str, Any]:
        from mobile_agent.agent import load_trajectory

        folder = self.run_folder(run_id, reader)
        try:
            header, steps, result = load_trajectory(folder)
        except (OSError, ValueError) as exc:
            raise ToolFailure(f"cannot read the trajectory of {run_id!r}: {exc}") from exc
        return {"folder": str(folder.resolve()), "run": header, "steps": steps, "result": result}

    def report(self, run_id: str, reader: str | None = None) -> str:
        """The run's HTML report; one still open (an MCP session's) or left unfinished by a
        process that died is rendered from its trajectory file as it stands."""
        from mobile_agent.agent.report import render_report
        from mobile_agent.agent.trajectory import load_trajectory

        folder = self.run_folder(run_id, reader)
        try:
            header, steps, result = load_trajectory(folder)
            written = folder / "report.html"
            if result is not None and written.is_file():
                return written.read_text(encoding="utf-8")
            return render_report(folder, header, steps, result)
        except (OSError, ValueError) as exc:
            raise ToolFailure(f"run {run_id!r} has no report: {exc}") from exc


def run_answer(settings: Settings, result: RunResult) -> dict[str, Any]:
    """A planned run's result, as ``mobile-agent run --json`` prints it (redacted: the
    instruction may hold a secret)."""
    from mobile_agent.agent.redact import Redactor

    data: dict[str, Any] = Redactor.from_settings(settings)(result.to_dict())
    data["trajectory_dir"] = str(result.trajectory_dir.resolve())
    data["report"] = str(result.report_path.resolve())
    return data


def _box(box: Any) -> list[float] | None:
    if box is None:
        return None
    return [round(float(box.left), 1), round(float(box.top), 1), round(float(box.right), 1), round(float(box.bottom), 1)]


def _location_dict(location: Location) -> dict[str, Any]:
    return {
        "status": str(location.status.value),
        "target": location.target,
        "point": list(location.point) if location.point else None,
        "box": _box(location.box),
        "candidates": [
            {"index": c.index, "box": _box(c.box), "text": c.text, "score": round(float(c.score), 3)}
            for c in location.candidates
        ],
        "closest": list(location.closest),
        "feedback": location.feedback,
        "backend": location.backend,
    }


# the operation cards that look for a text on the screen before they act
LOCATE_BY_TEXT = frozenset({"click_text", "long_press"})


def _replaced(value: Any, old: str, new: str) -> Any:
    """``value`` (an answer: dicts, lists, texts) with ``old`` replaced by ``new`` in every text."""
    if isinstance(value, dict):
        return {key: _replaced(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    return value.replace(old, new) if isinstance(value, str) else value


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, MobileAgentError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"

