"""The MCP server: tools, resources and the person behind a confirmation.

Tools:

- ``list_devices``, ``screenshot`` (an image content block, downscaled), ``find_text`` and
  ``find_icon`` (perception's answer with boxes in screen pixels);
- one tool per operation card (``open_app``, ``click_text``, ``click_icon``, ``tap_point``,
  ``type``, ``swipe_points``, ``back``, ``home``…): the name, the description and the
  argument schema come from the card (``mobile_agent.operations``), the one source the
  planner prompt and the parser read too;
- ``run_instruction``: a whole planned run, with progress notifications per step and the
  client's cancellation setting the run's cancel event;
- ``read_trajectory``.

One trajectory per MCP session (``sessions``): the session's ``McpSession`` lives in the
SDK's per-connection state and is closed from the connection's exit stack, which the SDK
unwinds however the connection ends (stdio closed, HTTP session deleted or idle, server
stopped). A client of the 2026-07-28 protocol has no session: each request is a
connection of its own, so each of its calls is a trajectory of its own.

Resources: ``phone://devices``, ``phone://devices/{serial}/screenshot`` (the last screenshot
a tool took of that phone), ``run://{run_id}/report`` (a run's HTML report).

The SDK calls the tools on its event loop; phone and model work runs in worker threads
(``anyio.to_thread``), and a confirmation the run asks for comes back to the loop with
``anyio.from_thread`` to ask the client by elicitation, when the client offers it. Over HTTP
each principal's calls take at most ``THREADS_PER_PRINCIPAL`` worker threads at once
(``ThreadShares``): calls that wait for a busy phone (up to ``--phone-wait``; a
``run_instruction`` up to 600 s) hold their own principal's threads, never the pool every other
principal's calls use. A cancelled call (the client's ``notifications/cancelled``) stops its
wait for the phone at once.
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request

from mobile_agent.agent.paths import inside_paths
from mobile_agent.agent.people import NoPersonChannel, UserChannel, UserReply, UserRequest
from mobile_agent.errors import MobileAgentError, PhoneBusyError
from mobile_agent.mcp_server.phone import (
    LOCAL,
    PhoneService,
    ToolFailure,
    describe_error,
    operation_cards,
    owner_settings,
    run_answer,
)
from mobile_agent.mcp_server.sessions import McpSession
from mobile_agent.operations.registry import OperationCard
from mobile_agent.settings import Settings

__all__ = ["build_server"]

log = logging.getLogger(__name__)

NO_ELICITATION = (
    "this MCP client cannot be asked (it offers no elicitation); a sensitive operation is refused. "
    'Set agent.safety.confirmations = "approve" in the server\'s settings to allow them unattended'
)

# the screenshot's words when its app area is one flat colour (mcp_server.phone.Shot.blank)
PROTECTED_NOTE = (
    "The app's area of this screenshot is one flat colour: the app may protect its screen from capture "
    "(Android's FLAG_SECURE), or it is not drawn yet. find_text, click_text and find_icon still locate through "
    "the phone's accessibility tree; take another screenshot to tell a screen still loading."
)

Serial = Annotated[
    str | None,
    Field(description="the phone's adb serial, or ios:NAME for an iPhone of ios.devices (default: adb.serial of "
                      "the settings, else the only attached phone)"),
]


class Confirmation(BaseModel):
    approve: bool = Field(description="yes: carry out the operation")
    note: str = Field(default="", description="a note for the agent (optional)")


class Answer(BaseModel):
    answer: str = Field(default="", description="your answer to the agent's question")
    done: bool = Field(default=False, description="yes: you did what was asked on the phone yourself; the agent looks again")


class ElicitChannel:
    """Asks the MCP client's user (elicitation) from the run's worker thread."""

    reason = ""  # a person may be there: a None reply is the wait running out

    def __init__(self, ctx: Context[Any, Any]) -> None:
        self.ctx = ctx
        self.loop = anyio.lowlevel.current_token()  # the run may ask from a thread anyio did not start

    def ask(self, request: UserRequest, cancel: threading.Event) -> UserReply | None:
        schema: type[BaseModel] = Confirmation if request.kind == "confirm" else Answer
        try:
            result = anyio.from_thread.run(self.ctx.elicit, request.question, schema, token=self.loop)
        except Exception:  # the client went away, or the tool call was cancelled
            return None
        if result.action != "accept":
            return UserReply("deny", text=f"the MCP client answered {result.action}", by="mcp")
        data = result.data
        if isinstance(data, Confirmation):
            return UserReply("approve" if data.approve else "deny", text=data.note, by="mcp")
        if isinstance(data, Answer):
            if data.done:
                return UserReply("done", text=data.answer, by="mcp")
            if not data.answer.strip():
                return UserReply("deny", text="the MCP client gave no answer", by="mcp")
            return UserReply("answer", text=data.answer, by="mcp")
        return None


SESSION_STATE = "mobile_agent.mcp_session"  # our key in the SDK's per-connection state
SESSION_ENDED = "the MCP session ended"


@asynccontextmanager
async def _session_of(ctx: Context[Any, Any], settings: Settings) -> AsyncIterator[McpSession]:
    """The MCP session this call belongs to: made on its first call, kept in the SDK's
    ``Connection.state`` and closed by the connection's ``exit_stack`` (the SDK's teardown
    hook: "push cleanup from handlers"). The 2.x SDK hands a tool its connection only as
    ``ServerSession._connection``; without it a call is a session of its own. Its steps may type
    only the named secrets of the call's principal (``phone.owner_settings``): a trajectory of
    that principal's in the connection."""
    owner = _principal(ctx)[0]
    settings = owner_settings(settings, owner)
    params = ctx.session.client_params
    client = params.client_info if params is not None else None
    connection = getattr(ctx.request_context.session, "_connection", None)
    session_id = getattr(connection, "session_id", None)
    title = "MCP session" + (f" of {client.name} {client.version}" if client is not None else "")
    title += f" (HTTP session {session_id})" if session_id else ""
    if connection is None:
        log.warning("the MCP SDK gives no connection to keep the session in: this call is a trajectory of its own")
        alone = McpSession(settings, title)
        try:
            yield alone
        finally:
            await anyio.to_thread.run_sync(alone.close, SESSION_ENDED)
        return
    key = f"{SESSION_STATE}:{owner}"  # one connection, one principal; keyed so that no other's settings are used
    session = connection.state.get(key)
    if not isinstance(session, McpSession):
        session = connection.state[key] = McpSession(settings, title)
        connection.exit_stack.push_async_callback(anyio.to_thread.run_sync, session.close, SESSION_ENDED)
    yield session


PRINCIPAL_STATE = "mobile_agent_principal"  # set in the HTTP request's scope by cli.bearer_protected


def _principal(ctx: Context[Any, Any]) -> tuple[str, str]:
    """(name, role) of the token the HTTP request came with (``cli.bearer_protected`` maps the
    bearer token to its principal, as the REST service does); over stdio the local user, an
    admin: the client that started the process is the only one talking to it."""
    request = ctx.request_context.request
    if isinstance(request, Request):
        found = request.scope.get("state", {}).get(PRINCIPAL_STATE)
        if isinstance(found, tuple) and len(found) == 3:
            return str(found[0]), str(found[1])
    return LOCAL, "admin"


def _team(ctx: Context[Any, Any]) -> str | None:
    """The team of the HTTP request's token (``server.tokens``' team: its members share their
    cached plans, as in the REST service); None for none, and over stdio."""
    request = ctx.request_context.request
    if isinstance(request, Request):
        found = request.scope.get("state", {}).get(PRINCIPAL_STATE)
        if isinstance(found, tuple) and len(found) == 3 and isinstance(found[2], str):
            return found[2]
    return None


def _actor(ctx: Context[Any, Any]) -> str:
    """The principal of a call that acts on the phone (its runs are theirs; the lease names
    it); a viewer's token may not act."""
    name, role = _principal(ctx)
    if role == "viewer":
        raise ToolError(f"the token {name!r} is a viewer: it may look at the phone, not act on it")
    return name


def _reader(ctx: Context[Any, Any]) -> str | None:
    """Whose runs a call may read: None (every run) for an admin, else the principal's own."""
    name, role = _principal(ctx)
    return None if role == "admin" else name


def _outward(ctx: Context[Any, Any], settings: Settings, data: Any) -> Any:
    """A tool's answer or error text as it leaves over HTTP: no path of this server in it, whole
    or inside a text (the REST service's rule and function, ``mobile_agent.agent.paths``): a path
    under ``agent.output_dir`` becomes its part below that folder (a run's folder, its report),
    any other that names a folder of this machine "[a path on the server]". Over stdio the
    client is the local user, on the same machine: the paths stay (they are where its runs are)."""
    if not isinstance(ctx.request_context.request, Request):
        return data
    return inside_paths(data, Path(settings.agent.output_dir).resolve())


THREADS_PER_PRINCIPAL = 4  # over HTTP: one principal's calls in worker threads at once; the rest wait their turn


class ThreadShares:
    """One ``anyio.CapacityLimiter`` per principal over HTTP, so that a principal whose calls
    wait (a held phone) never holds anyio's one process-wide pool of worker threads, which every
    other principal's calls (``list_devices`` included) would then queue behind. The principals
    are the configured tokens: the table is bounded. Over stdio (one client) anyio's own pool."""

    def __init__(self, per_principal: int = THREADS_PER_PRINCIPAL) -> None:
        self.per_principal = per_principal
        self._limiters: dict[str, anyio.CapacityLimiter] = {}

    def of(self, ctx: Context[Any, Any]) -> anyio.CapacityLimiter | None:
        if not isinstance(ctx.request_context.request, Request):
            return None
        name = _principal(ctx)[0]
        limiter = self._limiters.get(name)
        if limiter is None:  # made on the event loop, in the first call of that principal's
            limiter = self._limiters[name] = anyio.CapacityLimiter(self.per_principal)
        return limiter


def _channel(ctx: Context[Any, Any]) -> UserChannel:
    caps = ctx.client_capabilities
    if caps is not None and caps.elicitation is not None:
        return ElicitChannel(ctx)
    return NoPersonChannel(NO_ELICITATION)


async def _in_thread(call: Callable[[], Any], *, cancel: threading.Event | None = None,
                     admin: bool = True, outward: Callable[[str], str] = str,
                     limiter: anyio.CapacityLimiter | None = None) -> Any:
    """``call()`` in a worker thread (one of ``limiter``'s: the principal's, ``ThreadShares``);
    this project's errors become tool errors (the client reads them and the server goes on),
    their text ``outward`` (``_outward``: over HTTP, no path of the server). With ``cancel``, a
    cancelled call (the client's ``notifications/cancelled``) sets it and returns at once: a
    wait for the phone stops, a run or an operation under way ends on its own. Who holds a busy
    phone is said to an admin only (docs/security.md)."""
    try:
        if cancel is None:
            return await anyio.to_thread.run_sync(call, limiter=limiter)
        try:
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=limiter)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            raise
    except PhoneBusyError as exc:
        holder = exc.fields.get("holder") if admin else "another run"
        raise ToolError(f"phone {exc.fields.get('serial')} is busy: {holder} holds it") from exc
    except (MobileAgentError, ToolFailure) as exc:
        raise ToolError(outward(describe_error(exc))) from exc
    except ValidationError as exc:
        raise ToolError(outward(f"invalid arguments: {exc}")) from exc


def _card_description(card: OperationCard) -> str:
    text = f"{card.syntax}: {card.description}"
    for limitation in card.limitations:
        text += f"\nLimitation: {limitation}"
    return text + ("\nCarried out by the agent (safety policy applies) as the next step of this MCP session's "
                   "trajectory; answers its feedback, the step and the trajectory's run_id.")


def _card_tool(service: PhoneService, card: OperationCard, shares: ThreadShares) -> Callable[..., Awaitable[dict[str, Any]]]:
    """An async function whose signature is the card's parameter model plus ``serial``:
    the SDK reads the tool's JSON schema from it."""

    async def tool(ctx: Context[Any, Any], **kwargs: Any) -> dict[str, Any]:
        serial = kwargs.pop("serial", None)
        candidate = kwargs.pop("candidate", None)
        owner = _actor(ctx)
        channel = _channel(ctx)
        cancel = threading.Event()  # a cancelled call stops waiting for a held phone
        async with _session_of(ctx, service.settings) as session:
            answer: dict[str, Any] = await _in_thread(
                lambda: service.operate(card, kwargs, serial, channel, session, candidate, owner, cancel=cancel),
                cancel=cancel, admin=_reader(ctx) is None, outward=lambda text: _outward(ctx, service.settings, text),
                limiter=shares.of(ctx))
        outward: dict[str, Any] = _outward(ctx, service.settings, answer)
        return outward

    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)]
    for name, info in card.params_model.model_fields.items():
        annotation = cast(Any, Annotated)[info.annotation, info]  # keeps the field's description and bounds
        default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default))
    if card.name in ("click_text", "long_press", "click_icon"):
        parameters.append(inspect.Parameter(
            "candidate", inspect.Parameter.KEYWORD_ONLY, default=None,
            annotation=Annotated[int | None, Field(ge=1, description="when several places match: the one to use "
                                                  "(1-based, reading order, as find_text/find_icon number them)")],
        ))
    parameters.append(inspect.Parameter("serial", inspect.Parameter.KEYWORD_ONLY, annotation=Serial, default=None))
    tool.__signature__ = inspect.Signature(parameters, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    tool.__name__ = card.name
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": dict[str, Any]}
    return tool


def build_server(settings: Settings, service: PhoneService) -> MCPServer[Any]:
    """The MCP server whose tools drive ``service``'s phones. The caller built ``service`` and
    closes it when the server has stopped (``PhoneService.close``: the phones its tools opened,
    an iPhone's WDA connections, a USB iPhone's forward), as ``mobile-agent mcp`` does: a service
    made here would have had no owner to close it."""
    shares = ThreadShares()
    server: MCPServer[Any] = MCPServer(
        "mobile-agent",
        instructions="Drive an Android phone or an iPhone: look (screenshot, find_text, find_icon), act (one tool per "
        "operation), or hand a whole instruction to the agent (run_instruction). Points and boxes are in "
        "screen pixels.",
    )

    @server.tool(description="The phones: the Android phones adb sees (serial, state: device, offline, "
                 "unauthorized; model) and the iPhones of ios.devices (serial ios:NAME, state: ready or not "
                 "answering), each with its platform (android, ios).")
    async def list_devices(ctx: Context[Any, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = await _in_thread(service.list_devices, limiter=shares.of(ctx))
        return answer

    @server.tool(description="A screenshot of the phone, downscaled so that its longer side is at most max_side "
                 "pixels (the image's size and the screen's are in the text block: scale points by their ratio).",
                 structured_output=False)
    async def screenshot(
        ctx: Context[Any, Any],
        serial: Serial = None,
        max_side: Annotated[int, Field(ge=64, le=4096, description="longest side of the returned image")] = 1024,
    ) -> list[Any]:
        (name, role), admin = _principal(ctx), _reader(ctx) is None
        shot = await _in_thread(lambda: service.screenshot(serial, max_side, principal=name, admin=admin,
                                                     viewer=role == "viewer"),
                                admin=admin, outward=lambda text: _outward(ctx, settings, text), limiter=shares.of(ctx))
        info: dict[str, Any] = {"image": [shot.width, shot.height], "screen": [shot.screen_width, shot.screen_height]}
        if shot.blank:
            info["note"] = PROTECTED_NOTE
        return [Image(data=shot.png, format="png"), json.dumps(info)]

    @server.tool(description="Find a text on the screen (OCR, fuzzy match): status, the point to tap, its box "
                 "and every candidate with its box, in screen pixels.")
    async def find_text(
        ctx: Context[Any, Any],
        text: Annotated[str, Field(min_length=1, max_length=500, description="the text to look for")],
        serial: Serial = None,
    ) -> dict[str, Any]:
        (name, role), admin = _principal(ctx), _reader(ctx) is None
        found: dict[str, Any] = await _in_thread(lambda: service.find(serial, text=text, principal=name, admin=admin,
                                                                      viewer=role == "viewer"),
                                                 admin=admin, outward=lambda text: _outward(ctx, settings, text),
                                                 limiter=shares.of(ctx))
        return found

    @server.tool(description="Find an icon on the screen by a description (detector + CLIP when the ml extra is "
                 "installed): status, point, box and candidates in screen pixels.")
    async def find_icon(
        ctx: Context[Any, Any],
        icon: Annotated[str, Field(min_length=1, max_length=200, description=(
            "what the icon shows, e.g. 'gear'; among look-alikes, which one, by count or by a quoted text beside it: "
            "'the second play button', \"play button in the 'News' row\""))],
        position: Annotated[str | None, Field(description="where on the screen, e.g. 'top right'")] = None,
        serial: Serial = None,
    ) -> dict[str, Any]:
        (name, role), admin = _principal(ctx), _reader(ctx) is None
        found: dict[str, Any] = await _in_thread(
            lambda: service.find(serial, icon=icon, position=position, principal=name, admin=admin,
                                 viewer=role == "viewer"), admin=admin,
            outward=lambda text: _outward(ctx, settings, text), limiter=shares.of(ctx))
        return found

    for card in operation_cards():
        server.add_tool(_card_tool(service, card, shares), name=card.name, title=card.syntax, description=_card_description(card))

    @server.tool(description="Carry out a whole instruction with the agent (planner model, the server's settings). "
                 "Long-running: one progress notification per step; cancelling the call cancels the run. "
                 "Answers the run's result (status, reason, steps, trajectory folder, report). The run has a "
                 "trajectory of its own; this MCP session's trajectory gets a step that links to it.")
    async def run_instruction(
        ctx: Context[Any, Any],
        instruction: Annotated[str, Field(min_length=1, max_length=2000, description="what to do, e.g. 'Turn on dark mode'")],
        max_steps: Annotated[int | None, Field(ge=1, le=200, description="step budget (default agent.max_steps; "
                                                     "over HTTP at most server.max_steps_limit)")] = None,
        serial: Serial = None,
    ) -> dict[str, Any]:
        owner = _actor(ctx)
        limit = settings.server.max_steps_limit
        if isinstance(ctx.request_context.request, Request) and max_steps is not None and max_steps > limit:
            # the server's key pays for each step: a token is held to the REST service's bound
            raise ToolError(f"max_steps is over the limit of {limit} (server.max_steps_limit)")
        cancel = threading.Event()
        total = float(max_steps or settings.agent.max_steps)
        channel = _channel(ctx)
        loop = anyio.lowlevel.current_token()  # events come from the run's own threads

        def on_event(event: Any) -> None:  # the run's thread: back to the loop to notify
            if event.kind != "step_finished":
                return
            data = event.data
            message = f"step {event.step}: {data.get('action') or '(no action)'} -> {'ok' if data.get('ok') else 'failed'}"
            try:
                anyio.from_thread.run(ctx.report_progress, float(event.step or 0), total, message, token=loop)
            except Exception:  # a cancelled call or a closed session: the run goes on to its end
                log.debug("progress of step %s not sent", event.step, exc_info=True)

        async with _session_of(ctx, settings) as session:
            result = await _in_thread(
                lambda: service.run_instruction(instruction, serial, cancel=cancel, on_event=on_event,
                                                channel=channel, max_steps=max_steps, session=session,
                                                owner=owner, team=_team(ctx)),
                cancel=cancel, admin=_reader(ctx) is None, outward=lambda text: _outward(ctx, settings, text),
                limiter=shares.of(ctx),
            )
        answer: dict[str, Any] = _outward(ctx, settings, run_answer(settings, result))
        return answer

    @server.tool(description="Read a run's trajectory (this server's runs and MCP sessions, or any under "
                 "agent.output_dir): the run header, every step (action, feedback, tap point, timings) and the "
                 "result (none yet for a session still open).")
    async def read_trajectory(
        ctx: Context[Any, Any],
        run_id: Annotated[str, Field(min_length=1, max_length=200, description="the run's id")],
        max_steps: Annotated[int, Field(ge=1, le=1000, description="the last this many steps")] = 50,
    ) -> dict[str, Any]:
        reader = _reader(ctx)
        data: dict[str, Any] = await _in_thread(lambda: service.trajectory(run_id, reader),
                                                outward=lambda text: _outward(ctx, settings, text),
                                                limiter=shares.of(ctx))
        data["steps"] = data["steps"][-max_steps:]
        outward: dict[str, Any] = _outward(ctx, service.settings, data)
        return outward

    @server.resource("phone://devices", name="devices", mime_type="application/json",
                     description="The Android phones adb sees and the configured iPhones (as list_devices).")
    async def devices_resource() -> str:
        return json.dumps(await _resource(service.list_devices))

    @server.resource("phone://devices/{serial}/screenshot", name="last_screenshot", mime_type="image/png",
                     description="The last screenshot the screenshot tool took of this phone for this "
                     "token's principal (PNG).")
    async def screenshot_resource(serial: str, ctx: Context[Any, Any]) -> bytes:
        shot = service.last_screenshot(serial, _principal(ctx)[0])
        if shot is None:
            raise ResourceError(f"no screenshot of {serial!r} yet: call the screenshot tool first")
        return shot.png

    @server.resource("run://{run_id}/report", name="run_report", mime_type="text/html",
                     description="A run's HTML report.")
    async def report_resource(run_id: str, ctx: Context[Any, Any]) -> str:
        reader = _reader(ctx)
        report: str = await _resource(lambda: service.report(run_id, reader),
                                      outward=lambda text: _outward(ctx, settings, text), limiter=shares.of(ctx))
        return report

    return server


async def _resource(call: Callable[[], Any], outward: Callable[[str], str] = str,
                    limiter: anyio.CapacityLimiter | None = None) -> Any:
    """A resource's ``call()`` in a worker thread; ``phone://devices`` (the SDK gives a static
    resource no context, so no principal) takes anyio's pool, which no principal's calls hold."""
    try:
        return await anyio.to_thread.run_sync(call, limiter=limiter)
    except (MobileAgentError, ToolFailure) as exc:
        raise ResourceError(outward(describe_error(exc))) from exc
