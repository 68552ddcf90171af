"""Android shell commands of the simulated phone: one handler per program name.

Each handler gets the `Phone` and the arguments (already split by the shell grammar;
nothing here is ever interpreted by a shell) and returns a `CommandResult` whose text
imitates Android 13's. Unknown programs exit 127 with `/system/bin/sh: X: not found`.
`cmd package query-activities` prints each activity's label as `nonLocalizedLabel=`
(the line a device layer reads to map app labels to packages).

May import: the standard library, `simphone.types`, `simphone.apps`, `simphone.ui.chrome`.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from simphone.apps import APPS
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import Phone

__all__ = ["COMMANDS", "KEYCODES", "run_command"]

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
    handler = COMMANDS.get(argv[0].rsplit("/", 1)[-1])
    if handler is None:
        return fail(f"/system/bin/sh: {argv[0]}: not found\n", 127)
    try:
        return handler(phone, argv[1:])
    except _Usage as exc:
        return fail(str(exc) + "\n", exc.code)


class _Usage(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _int(text: str) -> int:
    try:
        return int(float(text))
    except ValueError:
        raise _Usage(f"Error: Invalid number: {text!r}") from None


def _hash(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}"[:7]


def _component(phone: Phone, package: str) -> str:
    activity = phone.activity_of(package)
    return f"{package}/{activity}"


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
    props = {
        "ro.product.model": phone.model, "ro.product.name": phone.name, "ro.product.device": phone.device,
        "ro.product.brand": "SimPhone", "ro.product.manufacturer": "SimPhone", "ro.build.version.release": "13",
        "ro.build.version.sdk": "33", "ro.build.type": "user", "ro.serialno": phone.name,
        "ro.sf.lcd_density": str(phone.density), "ro.product.cpu.abi": "arm64-v8a", "sys.boot_completed": "1",
        "persist.sys.locale": "en-US", "ro.kernel.qemu": "0",
    }
    if args:
        return ok(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")
    return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


@command("wm")
def _wm(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] == ["size"]:
        return ok(f"Physical size: {phone.width}x{phone.height}\n")
    if args[:1] == ["density"]:
        return ok(f"Physical density: {phone.density}\n")
    raise _Usage(f"Error: unknown command '{' '.join(args)}'", 255)


@command("screencap")
def _screencap(phone: Phone, args: list[str]) -> CommandResult:
    files, i = [], 0
    while i < len(args):  # -d DISPLAY takes a value; -p and -j are flags
        if args[i] == "-d":
            i += 2
            continue
        if not args[i].startswith("-"):
            files.append(args[i])
        i += 1
    data = phone.screencap_png() if ("-p" in args or (files and files[0].endswith(".png"))) else phone.screencap_raw()
    if files:  # screencap FILE: written to the virtual filesystem
        try:
            phone.fs.write_file(files[0], data)
        except OSError as exc:
            return fail(f"Error opening file: {files[0]} ({exc.strerror or exc})\n", 1)
        return ok()
    return CommandResult(stdout=data)


# -- input -----------------------------------------------------------------------------
INPUT_SOURCES = {"touchscreen", "touchpad", "keyboard", "mouse", "dpad", "gamepad", "stylus", "trackball"}


@command("input")
def _input(phone: Phone, args: list[str]) -> CommandResult:
    if args[:1] and args[0] in INPUT_SOURCES:
        args = args[1:]
    if args[:1] == ["-d"]:  # display id: there is one display
        args = args[2:]
    if not args:
        raise _Usage("Usage: input [<source>] <command> [<arg>...]")
    verb, rest = args[0], args[1:]
    if verb == "tap" and len(rest) == 2:
        phone.tap(_int(rest[0]), _int(rest[1]))
    elif verb in ("swipe", "draganddrop") and len(rest) in (4, 5):
        x1, y1, x2, y2 = (_int(v) for v in rest[:4])
        phone.swipe(x1, y1, x2, y2, _int(rest[4]) if len(rest) == 5 else 300)
    elif verb == "text" and rest:
        return _input_text(phone, " ".join(rest))
    elif verb == "keyevent" and rest:
        long_press = "--longpress" in rest
        for key in (k for k in rest if not k.startswith("--")):
            _keyevent(phone, key, long_press)
    elif verb == "press":
        phone.tap(phone.width / 2, phone.height / 2)
    else:
        raise _Usage(f"Error: Unknown command: {verb}" if verb not in ("tap", "swipe", "text", "keyevent")
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
    phone.type_text(text.replace("%s", " "))
    return ok()


def _keyevent(phone: Phone, key: str, long_press: bool) -> None:
    name = key.upper().removeprefix("KEYCODE_")
    code = int(key) if key.isdigit() else KEYCODES.get(name)
    if code is None:
        raise _Usage(f"Error: Unknown keycode: {key}")
    name = CODE_NAMES.get(code, "")
    if code in (26, 223, 224):  # POWER toggles, SLEEP / WAKEUP set
        phone.set_screen(not phone.screen_on if code == 26 else code == 224)
    elif not phone.screen_on:
        return  # a dark screen takes no keys but power
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
            if package in APPS and scheme in APPS[package].schemes:
                return package
        package = SCHEME_APPS.get(scheme)
        if package in phone.installed:
            return package
    return None


@command("am")
def _am(phone: Phone, args: list[str]) -> CommandResult:
    if not args:
        raise _Usage("usage: am [subcommand] [options]")
    verb, rest = args[0], args[1:]
    if verb in ("start", "start-activity"):
        intent = _intent_args(rest)
        if "-n" in intent:
            component = str(intent["-n"])
            package, _, activity = component.partition("/")
            view = APPS[package].activity_view(activity) if package in phone.installed and package in APPS else None
            if view is None:
                return fail(f"Error type 3\nError: Activity class {{{component}}} does not exist.\n", 1,
                            stdout=f"Starting: Intent {{ cmp={component} }}\n")
            if package in phone.task_ids() and view == APPS[package].main_view():
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
        view = APPS[package].on_intent(ctx, action, str(data) if data else None, dict(intent["extras"]))  # type: ignore[arg-type]
        phone.launch(package, view)
        return ok(f"Starting: Intent {{ {described} }}\n")
    if verb == "force-stop" and rest:
        phone.force_stop(rest[-1])
        return ok()
    if verb == "broadcast":
        return _broadcast(phone, _intent_args(rest))
    if verb == "stack" or verb == "task":
        return ok()
    raise _Usage(f"Error: Unknown command: {verb}")


def _broadcast(phone: Phone, intent: dict[str, object]) -> CommandResult:
    action = str(intent.get("-a", ""))
    extras: dict[str, str] = intent["extras"]  # type: ignore[assignment]
    head = f"Broadcasting: Intent {{ act={action} flg=0x400000{' (has extras)' if extras else ''} }}\n"
    done = head + "Broadcast completed: result=0\n"
    adb_ime_active = phone.current_ime == "com.android.adbkeyboard/.AdbIME" and \
        "com.android.adbkeyboard" in phone.installed
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
    if package is None or package not in phone.installed or package not in APPS or not APPS[package].on_launcher:
        return fail("** No activities found to run, monkey aborted.\n", 251,
                    stdout="  bash arg: -p\n")
    phone.launch(package)
    return ok(f"  bash arg: -p\n  bash arg: {package}\n  bash arg: -c\n  bash arg: android.intent.category.LAUNCHER\n"
              "  bash arg: 1\nargs: [-p, " + package + ", -c, android.intent.category.LAUNCHER, 1]\n"
              "Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")


# -- packages ------------------------------------------------------------------------------
@command("pm")
def _pm(phone: Phone, args: list[str]) -> CommandResult:
    if args[:2] == ["list", "packages"]:
        flags = [a for a in args[2:] if a.startswith("-")]
        filters = [a for a in args[2:] if not a.startswith("-")]
        from simphone.phone import SYSTEM_PACKAGES

        packages = sorted(set(phone.installed) | set(SYSTEM_PACKAGES))
        if "-3" in flags:
            packages = [p for p in packages if p in APPS and not APPS[p].preinstalled or p == "com.android.adbkeyboard"]
        if filters:
            packages = [p for p in packages if filters[0] in p]
        return ok("".join(f"package:{p}\n" for p in packages))
    if args[:1] == ["path"] and len(args) > 1:
        if args[1] in phone.installed:
            return ok(f"package:/data/app/{args[1]}-1/base.apk\n")
        return fail("", 1)
    raise _Usage(f"Unknown command: {' '.join(args[:2])}", 255)


def _resolve_lines(phone: Phone, package: str, brief: bool) -> str:
    app = APPS[package]
    activity = app.activity if app.activity.startswith(".") is False else package + app.activity
    short = app.activity
    head = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false"
    if brief:
        return f"{head}\n{package}/{short}\n"
    return (f"  {head}\n  ActivityInfo:\n    name={activity}\n    packageName={package}\n"
            f"    labelRes=0x7f1400{zlib.crc32(package.encode()) % 256:02x} nonLocalizedLabel={app.label} "
            f"icon=0x7f0800{zlib.crc32(app.label.encode()) % 256:02x}\n"
            f"    enabled=true exported=true directBootAware=false\n")


def _launchable(phone: Phone) -> list[str]:
    return [p for p in phone.installed if p in APPS and APPS[p].on_launcher]


@command("cmd")
def _cmd(phone: Phone, args: list[str]) -> CommandResult:
    if not args:
        raise _Usage("cmd: No service specified; use -l to list all running services.", 255)
    service, rest = args[0], args[1:]
    if service == "package":
        brief = "--brief" in rest
        rest = [a for a in rest if a not in ("--brief", "--components")]
        if rest[:1] == ["resolve-activity"]:
            packages = [a for a in rest[1:] if not a.startswith("-") and "." in a and not a.startswith("android.")]
            if packages and packages[-1] in _launchable(phone):
                return ok(_resolve_lines(phone, packages[-1], brief))
            return ok("No activity found\n")
        if rest[:1] == ["query-activities"]:
            packages = _launchable(phone)
            if brief:
                return ok("".join(_resolve_lines(phone, p, True) for p in packages))
            body = "".join(f"Activity #{i}:\n{_resolve_lines(phone, p, False)}" for i, p in enumerate(packages))
            return ok(f"{len(packages)} activities found:\n{body}")
        if rest[:2] == ["list", "packages"]:
            return _pm(phone, rest)
        raise _Usage(f"Unknown command: {' '.join(rest[:1])}", 255)
    if service == "simphone":
        return _cmd_simphone(phone, rest)
    if service == "connectivity" and rest[:1] == ["airplane-mode"]:
        if rest[1:2] in (["enable"], ["disable"]):
            phone.set_airplane_mode(rest[1] == "enable")
            return ok()
        return ok("enabled\n" if phone.airplane_mode else "disabled\n")
    if service == "uimode" and rest[:1] == ["night"]:
        if rest[1:2] in (["yes"], ["no"]):
            phone.settings_put("secure", "ui_night_mode", "2" if rest[1] == "yes" else "1")
        return ok(f"Night mode: {'yes' if phone.dark_mode else 'no'}\n")
    return fail(f"Can't find service: {service}\n", 20)


def _cmd_simphone(phone: Phone, args: list[str]) -> CommandResult:
    verb = args[0] if args else ""
    if verb == "reset":
        seed = None
        if "--seed" in args:
            i = args.index("--seed")
            if i + 1 >= len(args):
                raise _Usage("Error: --seed needs a number", 2)
            seed = _int(args[i + 1])
        phone.reset(seed)
        return ok(f"reset seed={phone.seed}\n")
    if verb == "clock":
        if len(args) < 2:
            return ok(phone.clock.isoformat() + "\n")
        try:
            when = datetime.fromisoformat(args[1])
        except ValueError:
            raise _Usage(f"Error: not an ISO 8601 time: {args[1]!r}", 2) from None
        phone.set_clock(when)
        return ok(phone.clock.isoformat() + "\n")
    if verb == "ground-truth":
        return ok(json.dumps(phone.ground_truth(), ensure_ascii=False) + "\n")
    if verb == "state":
        return ok(json.dumps(phone.state(), ensure_ascii=False, sort_keys=True) + "\n")
    raise _Usage("usage: cmd simphone reset [--seed N] | clock [ISO8601] | ground-truth | state", 2)


# -- ime / settings -----------------------------------------------------------------------
@command("ime")
def _ime(phone: Phone, args: list[str]) -> CommandResult:
    from simphone.phone import ADB_KEYBOARD_IME, LATIN_IME

    installed = [LATIN_IME] + ([ADB_KEYBOARD_IME] if "com.android.adbkeyboard" in phone.installed else [])
    verb = args[0] if args else ""
    if verb == "list":
        shown = installed if "-a" in args else phone.enabled_imes
        if "-s" in args:
            return ok("".join(f"{i}\n" for i in shown))
        return ok("".join(f"{i}:\n  mId={i} mSettingsActivity=null\n" for i in shown))
    if verb in ("set", "enable", "disable") and len(args) > 1:
        ime = args[-1]
        if ime not in installed:
            return fail(f"Unknown input method {ime} cannot be {'selected' if verb == 'set' else verb + 'd'} for user #0\n",
                        255)
        enabled = phone.enabled_imes
        if verb == "enable":
            if ime not in enabled:
                phone.settings_put("secure", "enabled_input_methods", ":".join(enabled + [ime]))
                return ok(f"Input method {ime}: now enabled for user #0\n")
            return ok(f"Input method {ime}: already enabled for user #0\n")
        if verb == "disable":
            phone.settings_put("secure", "enabled_input_methods", ":".join(i for i in enabled if i != ime))
            if phone.current_ime == ime:
                phone.settings_put("secure", "default_input_method", LATIN_IME)
            return ok(f"Input method {ime}: now disabled for user #0\n")
        if ime not in enabled:
            return fail(f"Unknown input method {ime} cannot be selected for user #0\n", 255)
        phone.settings_put("secure", "default_input_method", ime)
        return ok(f"Input method {ime} selected for user #0\n")
    if verb == "reset":
        phone.settings_put("secure", "default_input_method", LATIN_IME)
        return ok()
    raise _Usage("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n  reset", 255)


NAMESPACES = ("system", "secure", "global")


@command("settings")
def _settings(phone: Phone, args: list[str]) -> CommandResult:
    args = [a for a in args if a not in ("--user", "current")]
    if len(args) >= 2 and args[1] not in NAMESPACES:
        raise _Usage(f"Invalid namespace '{args[1]}'", 255)
    if args[:1] == ["get"] and len(args) == 3:
        value = phone.settings_get(args[1], args[2])
        return ok(f"{'null' if value is None else value}\n")
    if args[:1] == ["put"] and len(args) >= 4:
        # as on Android, writing airplane_mode_on alone does not switch the radios (the UI
        # and `cmd connectivity airplane-mode` do)
        phone.settings_put(args[1], args[2], args[3])
        return ok()
    if args[:1] == ["delete"] and len(args) == 3:
        phone.settings_put(args[1], args[2], None)
        return ok("Deleted 1 rows\n")
    if args[:1] == ["list"] and len(args) == 2:
        table = phone.settings_table(args[1])
        return ok("".join(f"{k}={v}\n" for k, v in sorted(table.items())))
    raise _Usage("usage:  settings [--user <USER_ID> | current] get namespace key\n"
                 "        settings [--user <USER_ID> | current] put namespace key value", 255)


@command("svc")
def _svc(phone: Phone, args: list[str]) -> CommandResult:
    keys = {"wifi": "wifi_on", "bluetooth": "bluetooth_on", "data": "mobile_data"}
    if len(args) == 2 and args[0] in keys and args[1] in ("enable", "disable"):
        phone.settings_put("global", keys[args[0]], "1" if args[1] == "enable" else "0")
        return ok()
    raise _Usage("Available commands: wifi data bluetooth (enable|disable)", 1)


# -- dumpsys ----------------------------------------------------------------------------------
@command("dumpsys")
def _dumpsys(phone: Phone, args: list[str]) -> CommandResult:
    service = args[0] if args else ""
    package = phone.foreground
    component = _component(phone, package)
    token = _hash(component)
    if service == "simphone":
        return ok(json.dumps(phone.state(), ensure_ascii=False, sort_keys=True, indent=1) + "\n")
    if service == "window":
        focus = f"Window{{{token} u0 {component}}}"
        ime = "  mInputMethodWindow=Window{ime u0 InputMethod}\n" if phone.keyboard_visible else ""
        return ok(f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus={focus}\n"
                  f"  mFocusedApp=ActivityRecord{{{token} u0 {component} t{_task_id(phone, package)}}}\n{ime}"
                  f"  mInputMethodTarget={focus if phone.keyboard_visible else 'null'}\n"
                  f"  mIsInputMethodShown={'true' if phone.keyboard_visible else 'false'}\n")
    if service == "display":
        return ok(f"DISPLAY MANAGER (dumpsys display)\n  mScreenState={'ON' if phone.screen_on else 'OFF'}\n"
                  f"  DisplayDeviceInfo{{\"Built-in Screen\": {phone.width} x {phone.height}, density {phone.density}, "
                  f"rotation 0}}\n  mCurrentOrientation=0\n  orientation=0\n")
    if service == "activity" and args[1:2] == ["top"]:
        return ok(f"TASK {package} id={_task_id(phone, package)} userId=0\n"
                  f"  ACTIVITY {component} {token} pid={1000 + _task_id(phone, package)}\n")
    if service == "activity" and args[1:2] in (["activities"], ["a"], []):
        record = f"ActivityRecord{{{token} u0 {component} t{_task_id(phone, package)}}}"
        return ok(f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n  mResumedActivity: {record}\n"
                  f"  ResumedActivity: {record}\n  mFocusedApp={record}\n")
    if service == "battery":
        b = phone.battery
        return ok(f"Current Battery Service state:\n  AC powered: false\n  USB powered: {str(b['charging']).lower()}\n"
                  f"  Wireless powered: false\n  status: {2 if b['charging'] else 3}\n  health: 2\n  present: true\n"
                  f"  level: {b['level']}\n  scale: 100\n  voltage: 4123\n  temperature: 250\n  technology: Li-ion\n")
    if service == "power":
        on = phone.screen_on
        return ok(f"POWER MANAGER (dumpsys power)\n  mWakefulness={'Awake' if on else 'Asleep'}\n"
                  f"  mWakefulnessChanging=false\n  mIsPowered=false\n"
                  f"  mHoldingDisplaySuspendBlocker={'true' if on else 'false'}\n"
                  f"  Display Power: state={'ON' if on else 'OFF'}\n")
    if service == "input_method":
        return ok(f"  mCurSelectedId={phone.current_ime}\n  mInputShown={str(phone.keyboard_visible).lower()}\n")
    if service == "package" and len(args) > 1:
        pkg = args[-1]
        if pkg not in phone.installed or pkg not in APPS:
            return ok("")
        return ok(f"Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n"
                  f"        {_hash(pkg)} {pkg}/{APPS[pkg].activity} filter {_hash(pkg + 'f')}\n"
                  f"          Action: \"android.intent.action.MAIN\"\n"
                  f"          Category: \"android.intent.category.LAUNCHER\"\n\n"
                  f"Packages:\n  Package [{pkg}] ({_hash(pkg)}):\n    versionName=1.0\n    label={APPS[pkg].label}\n")
    return ok("")


def _task_id(phone: Phone, package: str) -> int:
    return phone.task_ids().get(package, 1)
