"""Android shell commands of the simulated phone: one handler per program name.

Here: the registry (`command`, `run_command`), basics (echo, getprop, screencap),
`input` and the activity manager (am, monkey, ADB Keyboard broadcasts);
`simphone.system_commands` holds packages, ime, settings, svc, cmd and dumpsys, `simphone.wm` the
window manager's `wm size` / `wm density`. Each
handler gets the `Phone` and the arguments (already split by the shell grammar; nothing
here is ever interpreted by a shell) and returns a `CommandResult` whose text imitates
Android 13's. Unknown programs exit 127 with `/system/bin/sh: X: not found`.

May import: the standard library, `simphone.types`, `simphone.phone` (types only). The apps are
reached through `phone.apps`, the real phone's formats through `phone.profile`.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["COMMANDS", "KEYCODES", "Usage", "command", "component_of", "fail", "ok", "run_command", "short_hash",
           "to_int"]

Handler = Callable[["Phone", list[str]], CommandResult]
COMMANDS: dict[str, Handler] = {}

KEYCODES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "COMMA": 55, "PERIOD": 56,
    "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82, "SEARCH": 84, "MOVE_HOME": 122, "MOVE_END": 123,
    "FORWARD_DEL": 112, "ESCAPE": 111, "APP_SWITCH": 187, "WAKEUP": 224, "SLEEP": 223,
}
KEYCODES.update({str(d): 7 + d for d in range(10)})
KEYCODES.update({chr(ord("A") + i): 29 + i for i in range(26)})
CODE_NAMES = {v: k for k, v in KEYCODES.items()}


def command(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        COMMANDS[name] = fn
        return fn

    return register


def ok(text: str = "") -> CommandResult:
    return CommandResult(stdout=text.encode(), exit_code=0)


def fail(text: str, code: int = 1, stdout: str = "") -> CommandResult:
    return CommandResult(stdout=stdout.encode(), stderr=text.encode(), exit_code=code)


def run_command(phone: Phone, argv: list[str]) -> CommandResult:
    if not argv:
        return ok()
    program = argv[0].rsplit("/", 1)[-1]
    handler = COMMANDS.get(program)
    if handler is None or program in phone.profile.missing_programs:
        return fail(f"/system/bin/sh: {argv[0]}: not found\n", 127)
    try:
        return handler(phone, argv[1:])
    except Usage as exc:
        return fail(str(exc) + "\n", exc.code)


class Usage(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def to_int(text: str) -> int:
    try:
        return int(float(text))
    except (ValueError, OverflowError):  # "nan", "inf"
        raise Usage(f"Error: Invalid number: {text!r}") from None


def short_hash(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}"[:7]


def component_of(phone: Phone, package: str) -> str:
    activity = phone.activity_of(package)
    return f"{package}/{activity}"


# -- the profile's samples ---------------------------------------------------------------
ROTATION_NAMES = ("ROTATION_0", "ROTATION_90", "ROTATION_180", "ROTATION_270")


def template_values(phone: Phone, **extra: object) -> dict[str, object]:
    """What the profile's templates may use (simphone/profiles/README.md lists them)."""
    package = phone.foreground
    component = component_of(phone, package)
    locked = phone.keyguard_showing
    on = phone.screen_on
    override = phone.profile.override_size
    values: dict[str, object] = {
        "number": phone.number, "serial": phone.serial,
        "package": package, "component": component, "token": short_hash("w" + component),
        "app_token": short_hash(component), "task": phone.task_ids().get(package, 1),
        "focus": phone.profile.keyguard_window if locked else component,
        "keyguard": _bool(locked), "input_restricted": _bool(locked), "keyguard_secure": _bool(phone.keyguard_secure),
        "ime_shown": _bool(phone.keyboard_visible and not locked),
        "ime_target": f"Window{{{short_hash('w' + component)} u0 {component}}}" if phone.keyboard_visible else "null",
        "current_ime": phone.current_ime, "ime_bound": _bool(phone.ime_bound),
        "wakefulness": "Awake" if on else "Asleep", "screen_on": _bool(on), "display_state": "ON" if on else "OFF",
        "screen_state": "SCREEN_STATE_ON" if on else "SCREEN_STATE_OFF",
        "interactive_state": "INTERACTIVE_STATE_AWAKE" if on else "INTERACTIVE_STATE_SLEEP",
        "rotation": phone.rotation, "rotation_name": ROTATION_NAMES[phone.rotation],
        "width": phone.width, "height": phone.height, "density": phone.density,
        "natural_width": phone.profile.natural_width if not phone._sized_by_caller else phone._boot_display[0],
        "natural_height": phone.profile.natural_height if not phone._sized_by_caller else phone._boot_display[1],
        # a density given to Phone() replaces the profile's (as `wm density N` would, minus the Override line)
        "natural_density": phone.profile.density if phone.profile.override_density else phone._boot_display[2],
        "override_width": override[0] if override else phone.natural_width,
        "override_height": override[1] if override else phone.natural_height,
        "override_density": phone.profile.override_density or phone.density,
        "physical_id": phone.profile.physical_id,
    }
    values.update(extra)
    return values


def _bool(value: bool) -> str:
    return "true" if value else "false"


def render(phone: Phone, name: str, **extra: object) -> str:
    """The profile's sample `name` filled in ("" when the profile has none: the phone
    prints nothing there)."""
    output = phone.profile.output(name)
    return output.render(template_values(phone, **extra)) if output is not None else ""


def profile_output(phone: Phone, name: str, **extra: object) -> CommandResult:
    output = phone.profile.output(name)
    if output is None:
        return ok()
    text = output.render(template_values(phone, **extra)).encode()
    if output.stream == "stderr":
        return CommandResult(stderr=text, exit_code=output.exit_code)
    return CommandResult(stdout=text, exit_code=output.exit_code)


# -- basics --------------------------------------------------------------------------
@command("echo")
def _echo(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] == ["-n"]:
        return ok(" ".join(args[1:]))
    return ok(" ".join(args) + "\n")


@command("true")
def _true(phone: Phone, args: list[str]) -> CommandResult:
    return ok()


@command("getprop")
def _getprop(phone: Phone, args: list[str]) -> CommandResult:
    props = dict(phone.props)
    props["ro.sf.lcd_density"] = props.get("ro.sf.lcd_density", str(phone.profile.density))
    if args:
        return ok(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")
    return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


@command("screencap")
def _screencap(phone: Phone, args: list[str]) -> CommandResult:
    files, i, display = [], 0, None
    while i < len(args):  # -d DISPLAY takes a value; -p and -j are flags
        if args[i] == "-d":
            display = args[i + 1] if i + 1 < len(args) else ""
            i += 2
            continue
        if not args[i].startswith("-"):
            files.append(args[i])
        i += 1
    png = "-p" in args or bool(files and files[0].endswith(".png"))
    warning = b""
    if display is None and phone.profile.extra_displays:  # AOSP screencap.cpp: several displays, no -d
        warning = render(phone, "screencap_multi_display_warning").encode()
    elif display is not None and phone.profile.extra_displays and display != phone.profile.physical_id:
        # (a phone with one display captures it whatever -d says, as the simulator always did)
        other = next((d for d in phone.profile.extra_displays if d.physical_id == display), None)
        if other is None:
            return fail("Capturing failed.\n", 1)  # AOSP screencap.cpp: no such display to capture
        data = _dark_frame(other.width, other.height, png, phone.profile.raw_header_words)
        return CommandResult(stdout=data) if not files else _write_capture(phone, files[0], data)
    data = phone.screencap_png() if png else phone.screencap_raw()
    if files:  # screencap FILE: written to the virtual filesystem
        return _write_capture(phone, files[0], data, warning)
    return CommandResult(stdout=data, stderr=warning, stderr_first=True)


def _write_capture(phone: Phone, path: str, data: bytes, warning: bytes = b"") -> CommandResult:
    try:
        phone.fs.write_file(path, data)
    except OSError as exc:
        return fail(f"Error opening file: {path} ({exc.strerror or exc})\n", 1)
    return CommandResult(stderr=warning)


def _dark_frame(width: int, height: int, png: bool, header_words: int) -> bytes:
    """What a display that is off shows: black (a foldable's cover screen while unfolded)."""
    import io
    import struct

    from PIL import Image

    image = Image.new("RGB", (width, height))
    if png:
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=1)
        return out.getvalue()
    words = (width, height, 1, 0)[:header_words]
    return struct.pack(f"<{len(words)}I", *words) + image.tobytes("raw", "RGBX")


# -- input -----------------------------------------------------------------------------
INPUT_SOURCES = {"touchscreen", "touchpad", "keyboard", "mouse", "dpad", "gamepad", "stylus", "trackball"}


@command("input")
def _input(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] and args[0] in INPUT_SOURCES:
        args = args[1:]
    if args[:1] == ["-d"]:  # display id: logical display 0 is the one shown; others take nothing
        display = args[1] if len(args) > 1 else ""
        args = args[2:]
        if display not in ("0", "-1") and display.lstrip("-").isdigit():
            return ok()
    if not args:
        raise Usage("Usage: input [<source>] <command> [<arg>...]")
    verb, rest = args[0], args[1:]
    if verb == "tap" and len(rest) == 2:
        phone.tap(to_int(rest[0]), to_int(rest[1]))
    elif verb in ("swipe", "draganddrop") and len(rest) in (4, 5):
        x1, y1, x2, y2 = (to_int(v) for v in rest[:4])
        phone.swipe(x1, y1, x2, y2, to_int(rest[4]) if len(rest) == 5 else 300)
    elif verb == "text" and rest:
        return _input_text(phone, rest[0])  # InputShellCommand types its first argument only
    elif verb == "keyevent" and rest:
        long_press = "--longpress" in rest
        for key in (k for k in rest if not k.startswith("--")):
            _keyevent(phone, key, long_press)
    elif verb == "press":
        phone.tap(phone.width / 2, phone.height / 2)
    else:
        raise Usage(f"Error: Unknown command: {verb}" if verb not in ("tap", "swipe", "text", "keyevent")
                     else f"Error: Invalid arguments for command: {verb}")
    return ok()


def _input_text(phone: Phone, text: str) -> CommandResult:
    # Android's `input text` maps characters through the virtual keyboard's key map; any
    # character outside it (every non-ASCII one) makes the whole call fail, typing nothing.
    if any(ord(ch) > 126 or (ord(ch) < 32 and ch != "\n") for ch in text):
        return fail(
            "Exception occurred while executing 'text':\n"
            "java.lang.NullPointerException: Attempt to get length of null array\n"
            "\tat com.android.server.input.InputShellCommand.sendText(InputShellCommand.java:367)\n",
            255,
        )
    if phone.keyguard_showing:  # only the PIN entry, when it shows, takes text
        phone.bouncer_key(text)
        return ok()
    phone.type_text(text.replace("%s", " "))
    return ok()


def _keyevent(phone: Phone, key: str, long_press: bool) -> None:
    name = key.upper().removeprefix("KEYCODE_")
    code = int(key) if key.isascii() and key.isdigit() else KEYCODES.get(name)
    if code is None:
        raise Usage(f"Error: Unknown keycode: {key}")
    name = CODE_NAMES.get(code, "")
    if code in (26, 223, 224):  # POWER toggles, SLEEP / WAKEUP set
        phone.set_screen(not phone.screen_on if code == 26 else code == 224)
    elif not phone.screen_on:
        return  # a dark screen takes no keys but power
    elif phone.keyguard_showing:
        if code == 82:  # MENU dismisses an insecure keyguard (what `input keyevent 82` is used for)
            phone.unlock()
        elif phone.bouncer_entry is not None and (7 <= code <= 16 or code in (66, 67)):  # the PIN entry
            phone.bouncer_key({66: "\n", 67: "\b"}.get(code, str(code - 7)))
        return
    elif code == 4:
        phone.press_back()
    elif code == 3:
        phone.go_home()
    elif code == 187:
        phone.show_recents()
    elif code == 66:
        phone.press_enter()
    elif code == 67:
        phone.delete_char()
    elif code == 62:
        phone.type_text(" ")
    elif code == 55:
        phone.type_text(",")
    elif code == 56:
        phone.type_text(".")
    elif len(name) == 1:
        phone.type_text(name.lower())


# -- activities --------------------------------------------------------------------------
def _intent_args(args: list[str]) -> dict[str, object]:
    out: dict[str, object] = {"extras": {}}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-n", "-a", "-d", "-c", "-t", "-f") and i + 1 < len(args):
            out[a] = args[i + 1]
            i += 2
        elif a in ("--es", "--ei", "--ez", "--el", "--ef", "--esa") and i + 2 < len(args):
            out["extras"][args[i + 1]] = args[i + 2]  # type: ignore[index]
            i += 3
        elif a in ("--user",) and i + 1 < len(args):
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            out.setdefault("package", a)
            i += 1
    return out


SCHEME_APPS = {"http": "com.android.chrome", "https": "com.android.chrome", "geo": "com.google.android.apps.maps",
               "tel": "com.google.android.dialer", "mailto": "com.google.android.gm", "market": "com.android.vending"}


def _resolve_intent(phone: Phone, action: str, data: str | None) -> str | None:
    if action.startswith("android.settings."):
        return "com.android.settings"
    if data:
        scheme = data.split(":", 1)[0].lower()
        for package in phone.installed:
            if package in phone.apps and scheme in phone.apps[package].schemes:
                return package
        package = SCHEME_APPS.get(scheme)
        if package in phone.installed:
            return package
    return None


@command("am")
def _am(phone: Phone, args: list[str]) -> CommandResult:
    if not args:
        raise Usage("usage: am [subcommand] [options]")
    verb, rest = args[0], args[1:]
    if verb in ("start", "start-activity"):
        intent = _intent_args(rest)
        if "-n" in intent:
            component = str(intent["-n"])
            package, _, activity = component.partition("/")
            view = phone.apps[package].activity_view(activity) if package in phone.installed and package in phone.apps else None
            if view is None:
                return fail(f"Error type 3\nError: Activity class {{{component}}} does not exist.\n", 1,
                            stdout=f"Starting: Intent {{ cmp={component} }}\n")
            if package in phone.task_ids() and view == phone.apps[package].main_view():
                phone.launch(package)  # the main activity brings its task back as it was
            else:
                phone.launch(package, view)
            return ok(f"Starting: Intent {{ cmp={component} }}\n")
        if intent.get("-c") == "android.intent.category.HOME":
            phone.go_home()
            return ok("Starting: Intent { act=android.intent.action.MAIN cat=[android.intent.category.HOME] }\n")
        action = str(intent.get("-a", "android.intent.action.MAIN"))
        data = intent.get("-d")
        package = _resolve_intent(phone, action, str(data) if data else None)
        described = f"act={action}" + (f" dat={data}" if data else "")
        if package is None:
            return fail(f"Error: Activity not started, unable to resolve Intent {{ {described} flg=0x10000000 }}\n",
                        1, stdout=f"Starting: Intent {{ {described} }}\n")
        ctx = phone.app_context(package)
        view = phone.apps[package].on_intent(ctx, action, str(data) if data else None, dict(intent["extras"]))  # type: ignore[arg-type]
        phone.launch(package, view)
        return ok(f"Starting: Intent {{ {described} }}\n")
    if verb == "force-stop" and rest:
        phone.force_stop(rest[-1])
        return ok()
    if verb == "broadcast":
        return _broadcast(phone, _intent_args(rest))
    if verb == "stack" or verb == "task":
        return ok()
    raise Usage(f"Error: Unknown command: {verb}")


def _broadcast(phone: Phone, intent: dict[str, object]) -> CommandResult:
    action = str(intent.get("-a", ""))
    extras: dict[str, str] = intent["extras"]  # type: ignore[assignment]
    head = f"Broadcasting: Intent {{ act={action} flg=0x400000{' (has extras)' if extras else ''} }}\n"
    done = head + "Broadcast completed: result=0\n"
    # ADB Keyboard's receiver lives in its input method service: nothing receives the
    # broadcast until that service is bound (the broadcast still completes, result=0)
    adb_ime_active = phone.current_ime == "com.android.adbkeyboard/.AdbIME" and \
        "com.android.adbkeyboard" in phone.installed and phone.ime_bound
    if not adb_ime_active or action not in ("ADB_INPUT_TEXT", "ADB_INPUT_B64", "ADB_CLEAR_TEXT", "ADB_INPUT_CODE"):
        return ok(done)
    if action == "ADB_INPUT_TEXT":
        phone.type_text(extras.get("msg", ""))
    elif action == "ADB_INPUT_B64":
        try:
            phone.type_text(base64.b64decode(extras.get("msg", ""), validate=True).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):
            return ok(done)  # the real IME ignores what it cannot decode
    elif action == "ADB_CLEAR_TEXT":
        phone.clear_text()
    elif action == "ADB_INPUT_CODE":
        _keyevent(phone, extras.get("code", "0"), False)
    return ok(done)


@command("monkey")
def _monkey(phone: Phone, args: list[str]) -> CommandResult:
    package = args[args.index("-p") + 1] if "-p" in args and args.index("-p") + 1 < len(args) else None
    if package is None or package not in phone.installed or package not in phone.apps or not phone.apps[package].on_launcher:
        return fail("** No activities found to run, monkey aborted.\n", 251,
                    stdout="  bash arg: -p\n")
    syskeys = args[args.index("--pct-syskeys") + 1] if "--pct-syskeys" in args[:-1] else None
    if not phone.profile.hardware_keys and syskeys not in ("0", "0.0"):
        refused = profile_output(phone, "monkey_no_syskeys")
        if refused.exit_code:
            return CommandResult(stdout="".join(f"  bash arg: {a}\n" for a in args).encode(),
                                 stderr=refused.stderr, exit_code=refused.exit_code)
    phone.launch(package)
    return ok(f"  bash arg: -p\n  bash arg: {package}\n  bash arg: -c\n  bash arg: android.intent.category.LAUNCHER\n"
              "  bash arg: 1\nargs: [-p, " + package + ", -c, android.intent.category.LAUNCHER, 1]\n"
              "Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
