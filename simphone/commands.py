"""Android shell commands of the simulated phone: one handler per program name.

May import: the standard library and `simphone.types`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import Phone

Handler = Callable[["Phone", list[str]], CommandResult]
COMMANDS: dict[str, Handler] = {}


def command(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        COMMANDS[name] = fn
        return fn

    return register


def ok(text: str = "") -> CommandResult:
    return CommandResult(stdout=text.encode(), exit_code=0)


def fail(text: str, code: int = 1) -> CommandResult:
    return CommandResult(stderr=text.encode(), exit_code=code)


def run_command(phone: Phone, argv: list[str]) -> CommandResult:
    if not argv:
        return ok()
    handler = COMMANDS.get(argv[0].rsplit("/", 1)[-1])
    if handler is None:
        return fail(f"/system/bin/sh: {argv[0]}: not found\n", 127)
    return handler(phone, argv[1:])


@command("echo")
def _echo(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] == ["-n"]:
        return ok(" ".join(args[1:]))
    return ok(" ".join(args) + "\n")


@command("getprop")
def _getprop(phone: Phone, args: list[str]) -> CommandResult:
    props = {
        "ro.product.model": phone.model,
        "ro.product.name": phone.name,
        "ro.product.device": phone.device,
        "ro.product.manufacturer": "SimPhone",
        "ro.build.version.release": "13",
        "ro.build.version.sdk": "33",
        "ro.serialno": phone.name,
        "ro.sf.lcd_density": "420",
    }
    if args:
        return ok(props.get(args[0], "") + "\n")
    return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


@command("wm")
def _wm(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] == ["size"]:
        return ok(f"Physical size: {phone.width}x{phone.height}\n")
    if args[:1] == ["density"]:
        return ok("Physical density: 420\n")
    return fail("Unknown command\n", 255)


@command("screencap")
def _screencap(phone: Phone, args: list[str]) -> CommandResult:
    if "-p" in args:
        return CommandResult(stdout=phone.screencap_png())
    return CommandResult(stdout=phone.screencap_raw())


@command("input")
def _input(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] == ["tap"] and len(args) == 3:
        phone.taps.append((int(float(args[1])), int(float(args[2]))))
        return ok()
    return fail("Error: Unknown command\n", 1)
