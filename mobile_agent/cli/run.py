"""`mobile-agent run`: carry out one instruction on a phone, or run a script of operations.

Exit codes (also in ``--help``):

    0    completed
    1    not completed, or a budget ran out
    2    usage error (bad flags, no planner configured and no --script, bad script,
         a script opening apps by the other platform's ids than the phone's, a
         serial that is not attached, several phones and no --serial)
    3    error (device lost, planner unreachable, …)
    130  cancelled (Ctrl-C)

A person in the loop: when the agent hands over (a login, a code, a choice) or is about to
do something sensitive (pay, send, delete, install…), the question is printed with the
progress and answered on the terminal (``mobile_agent.cli.asking``). ``--yes`` approves
every confirmation; ``--policy FILE`` sets the safety settings (``agent.safety``: apps to
deny / allow / always confirm, ``confirmations = "approve"``…). Without a terminal on stdin
a pause ends the run not completed (exit 1), never waiting for nobody.

Ctrl-C sets the run's cancel event: the run stops at once while it waits for the model,
else before its next action, and still writes its trajectory and report. A second
Ctrl-C aborts at once (exit 130; the trajectory keeps the steps written so far, no report).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from concurrent.futures import Future

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mobile_agent.errors import ConfigError, OperationError

if TYPE_CHECKING:
    from mobile_agent.agent import AgentEvent, RunResult

EXIT_CODES = {
    "completed": 0,
    "not_completed": 1,
    "budget_exhausted": 1,
    "error": 3,
    "cancelled": 130,
}
EXIT_USAGE = 2
_POLL_S = 0.2  # how often the main thread wakes up to take a Ctrl-C while the run goes on

_EPILOG = """exit codes: 0 completed; 1 not completed or budget exhausted; 2 usage error (also a
--serial that is not attached, or several phones and no --serial);
3 error (device lost, planner unreachable...); 130 cancelled (Ctrl-C).

Without a planner endpoint (--base-url / MOBILE_AGENT_PLANNER__BASE_URL and an API key),
use --script FILE: one operation per line in the model's syntax, e.g. "Click text (Display)";
"Click text (Save) #2" taps the second of several matches (numbered in reading order).
"""

CONFIGURE_HINT = """No planner endpoint is configured. Point mobile-agent at any OpenAI-compatible
chat-completions endpoint that accepts images, for example:

  export MOBILE_AGENT_PLANNER__BASE_URL=https://api.openai.com/v1
  export MOBILE_AGENT_PLANNER__API_KEY=sk-...
  export MOBILE_AGENT_PLANNER__MODEL=gpt-4o

(or pass --base-url / --api-key / --model), or run a script of operations with --script FILE."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help="carry out an instruction on a phone (or run a script of operations)",
        description="Carry out an instruction on an Android phone: screenshots in, taps out.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--instruction", "-i", help='what to do, e.g. "Turn on the dark mode"')
    parser.add_argument("--script", metavar="FILE", type=Path, help="run these operations, no LLM")
    device = parser.add_argument_group("device")
    device.add_argument("--serial", "-s", help="device serial (default: the only attached device)")
    device.add_argument("--connect", metavar="HOST:PORT", action="append", help="`adb connect` first (repeatable)")
    model = parser.add_argument_group("planner")
    model.add_argument("--model", help="model name (default: settings, gpt-4o)")
    model.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    model.add_argument("--api-key", help="API key (prefer MOBILE_AGENT_PLANNER__API_KEY: flags show in `ps`)")
    loop = parser.add_argument_group("run")
    loop.add_argument("--max-steps", type=int, help="step budget of a planned run (default 20; a --script runs all its lines)")
    loop.add_argument("--output", "-o", type=Path, metavar="DIR", help="trajectories folder (default: runs/)")
    loop.add_argument("--no-reflection", action="store_true", help="no 'screen did not change' feedback")
    loop.add_argument("--no-completion-check", action="store_true", help="trust the model's Stop")
    cache = loop.add_mutually_exclusive_group()
    cache.add_argument("--cache", dest="cache", action="store_true", default=None,
                       help="replay a cached plan of this instruction without the model, and cache this run's if it completes")
    cache.add_argument("--no-cache", dest="cache", action="store_false", help="neither replay nor cache (cache.enabled)")
    person = parser.add_argument_group("a person in the loop")
    person.add_argument("--yes", "-y", action="store_true",
                        help="approve every sensitive operation without asking (unattended runs)")
    person.add_argument("--policy", metavar="FILE", type=Path,
                        help='TOML of safety settings: deny_apps, allow_apps, confirm_apps, confirmations = "approve"|"deny"|"ask", '
                             "confirm_sensitive, rules_file, user_timeout_s")
    loop.add_argument("--quiet", "-q", action="store_true", help="no live progress, only the result")
    loop.add_argument("--json", action="store_true", help="no progress; print the result as one JSON object")
    parser.set_defaults(func=run_command)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {
        "adb.serial": args.serial,
        "adb.connect": args.connect,
        "planner.model": args.model,
        "planner.base_url": args.base_url,
        "planner.api_key": args.api_key,
        "agent.max_steps": args.max_steps,
        "agent.output_dir": str(args.output) if args.output else None,
        "cache.enabled": args.cache,
    }
    if args.yes:
        overrides["agent.safety.confirmations"] = "approve"
    if args.no_reflection:
        overrides["agent.reflection"] = False
    if args.no_completion_check:
        overrides["agent.completion_check"] = False
    return overrides


class ProgressPrinter:
    """Live progress in the terminal, from the run's events."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: AgentEvent) -> None:
        data = event.data
        out = self.stream
        if event.kind == "run_started":
            print(f"run {event.run_id}: {data.get('instruction')}", file=out)
            folder = data.get("trajectory_dir")
            print(f"  trajectory: {Path(folder).resolve() if folder else '-'}", file=out)  # as absolute as the result's
        elif event.kind == "user_replied":
            reply = data.get("reply") or {}
            said = f"{reply.get('kind')}" + (f": {_one_line(reply['text'])}" if reply.get("text") else "")
            print(f"  the user: {said}" if reply else "  no reply from the user", file=out)
        elif event.kind == "step_finished":
            t = data.get("timings") or {}
            status = "ok" if data.get("ok") else "failed"
            if data.get("screen_changed") is False:
                status = "no change"
            replayed = "  (replayed, no model call)" if data.get("by") == "replay" else ""
            print(f"[step {event.step}] {data.get('action') or '(no action)'}  -> {status}{replayed}", file=out)
            if data.get("thought"):
                print(f"  thought: {_one_line(data['thought'])}", file=out)
            if data.get("feedback") and not data.get("ok"):
                print(f"  feedback: {_one_line(data['feedback'])}", file=out)
            spent = ", ".join(f"{k.removesuffix('_ms')} {v:.0f} ms" for k, v in t.items() if v)
            if spent:
                print(f"  time: {spent}", file=out)
        out.flush()


_POLICY_KEYS = ("confirm_sensitive", "confirmations", "rules_file", "allow_apps", "deny_apps", "confirm_apps")


def read_policy(path: Path) -> dict[str, Any]:
    """The overrides of a ``--policy`` file (``ConfigError`` for an unreadable file or an
    unknown key); ``rules_file`` is relative to the policy file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the policy file {path}: {exc}") from exc
    data = data.get("safety", data)  # a [safety] table, or the keys at the top
    overrides: dict[str, Any] = {}
    for key, value in data.items():
        if key == "user_timeout_s":
            overrides["agent.user_timeout_s"] = value
        elif key in _POLICY_KEYS:
            if key == "rules_file" and isinstance(value, str):
                value = str(path.parent / value)
            overrides[f"agent.safety.{key}"] = value
        else:
            raise ConfigError(f"the policy file {path} has an unknown key {key!r} (known: {', '.join(_POLICY_KEYS)}, user_timeout_s)")
    return overrides


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _wait_for_run(future: Future[RunResult], cancel: threading.Event, started: dict[str, str]) -> RunResult:
    """The run's result; a first Ctrl-C sets ``cancel`` and waits on, a second one
    exits at once (not waiting for the run's threads: a model call, a Wait)."""
    from mobile_agent.agent.background import wait_for

    err = sys.stderr
    try:
        return wait_for(future, every_s=_POLL_S)
    except KeyboardInterrupt:
        print("\ncancelling: stopping before the next action (Ctrl-C again to abort)…", file=err)
        cancel.set()
    try:
        return wait_for(future, every_s=_POLL_S)
    except KeyboardInterrupt:
        where = started.get("trajectory_dir") or "(not started)"
        print(f"aborted: the run did not finish; what it wrote so far is in {where}", file=err)
        sys.stdout.flush()
        err.flush()
        os._exit(EXIT_CODES["cancelled"])


def run_command(args: argparse.Namespace) -> int:
    from mobile_agent.settings import load_settings

    err = sys.stderr
    if not args.instruction and not args.script:
        print("mobile-agent run: give --instruction TEXT, or --script FILE", file=err)
        return EXIT_USAGE
    try:
        overrides = _overrides(args)
        if args.policy is not None:
            overrides.update(read_policy(args.policy))
        settings = load_settings(args.config, overrides)
    except ConfigError as exc:
        print(f"mobile-agent run: {exc.message}", file=err)
        return EXIT_USAGE
    from mobile_agent.apps.platforms import PinnedApps, PlatformPinError

    script_text = None
    pins = PinnedApps("instruction")  # an instruction in words pins no platform
    if args.script:
        from mobile_agent.agent import parse_script, script_app_platforms

        try:
            script_text = args.script.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"mobile-agent run: cannot read the script {args.script}: {exc}", file=err)
            return EXIT_USAGE
        try:  # parsed before the phone is touched: its app ids say which phone it is written for
            pins = PinnedApps("script", script_app_platforms(parse_script(script_text)))
            pins.platform()
        except (OperationError, PlatformPinError) as exc:
            print(f"mobile-agent run: {exc.message}", file=err)
            return EXIT_USAGE
    elif not settings.planner.configured:
        print(CONFIGURE_HINT, file=err)
        return EXIT_USAGE

    # The phone first: a wrong serial or an ambiguous choice is a usage error (2), and a run
    # that cannot open its phone leaves no trajectory folder behind.
    from mobile_agent.cli.pinned import pinned_serial
    from mobile_agent.device.phones import close_phone, open_phone
    from mobile_agent.errors import DeviceError, DeviceNotFoundError, MultipleDevicesError

    try:
        serial = pinned_serial(settings, pins)  # no --serial and an iPhone's app ids: the one ready iPhone
    except (PlatformPinError, MultipleDevicesError) as exc:
        print(f"mobile-agent run: {exc.message}", file=err)
        return EXIT_USAGE
    refused = pins.on_device(serial) if serial else None
    if refused is not None:  # Open App (com.android.settings) on an iPhone: as REST refuses it
        print(f"mobile-agent run: {refused.message}", file=err)
        return EXIT_USAGE
    try:
        device = open_phone(settings, serial)  # an `ios:NAME` serial is an iPhone (docs/ios.md)
    except (DeviceNotFoundError, MultipleDevicesError) as exc:
        print(f"mobile-agent run: {exc.message}", file=err)
        return EXIT_USAGE
    except DeviceError as exc:
        print(f"mobile-agent run: {exc.message}", file=err)
        return EXIT_CODES["error"]
    refused = pins.on_device(device.serial)  # the only attached phone, when no serial was given
    if refused is not None:
        close_phone(device)
        print(f"mobile-agent run: {refused.message}", file=err)
        return EXIT_USAGE
    # one phone, one run: a phone a REST task or an MCP session is driving is refused, not shared
    from mobile_agent.device import PhoneLease
    from mobile_agent.errors import PhoneBusyError

    lease = PhoneLease(settings.adb, device.serial, f"mobile-agent run (pid {os.getpid()})")
    try:
        lease.acquire()
    except PhoneBusyError as exc:
        close_phone(device)
        print(f"mobile-agent run: {exc.message}; run again when it is free", file=err)
        return EXIT_CODES["error"]

    cancel = threading.Event()
    printer = None if args.quiet or args.json else ProgressPrinter(sys.stdout)
    started: dict[str, str] = {}

    def on_event(event: AgentEvent) -> None:
        if event.kind == "run_started":
            started["trajectory_dir"] = str(event.data.get("trajectory_dir"))
        if printer is not None:
            printer(event)

    from mobile_agent.agent import Agent, run_script
    from mobile_agent.agent.background import start_in_background
    from mobile_agent.cli.asking import terminal_channel

    def run() -> RunResult:
        if script_text is not None:
            return run_script(settings, script_text, device=device, on_event=on_event, cancel=cancel,
                              instruction=args.instruction)
        channel = terminal_channel(out=sys.stderr if args.json else sys.stdout)
        return Agent(settings, device=device, on_event=on_event, channel=channel).run(args.instruction, cancel=cancel)

    try:
        result = _wait_for_run(start_in_background(run, "mobile-agent-run"), cancel, started)
    except (OperationError, ConfigError) as exc:
        print(f"mobile-agent run: {exc.message}", file=err)
        return EXIT_USAGE
    finally:
        lease.release()
        close_phone(device)  # the phone it opened (an iPhone's WDA connections, a USB iPhone's forward)
    if args.json:
        from mobile_agent.agent.redact import Redactor

        data = Redactor.from_settings(settings)(result.to_dict())  # the instruction may hold a secret
        data["trajectory_dir"] = str(result.trajectory_dir.resolve())
        data["report"] = str(result.report_path.resolve())
        print(json.dumps(data, ensure_ascii=False))
        return EXIT_CODES[result.status.value]
    steps = len(result.steps)
    print(f"result: {result.status.value} after {steps} step{'' if steps == 1 else 's'} — {result.reason}")
    if result.error:
        print(f"error: {result.error.get('cause')}: {result.error.get('message')}", file=err)
    usage = result.usage
    if usage.calls:
        print(f"tokens: {usage.prompt_tokens} in / {usage.completion_tokens} out, cost ${usage.cost_usd:.4f}")
    print(f"trajectory: {result.trajectory_path.resolve()}")
    print(f"report: {result.report_path.resolve()}")
    return EXIT_CODES[result.status.value]
