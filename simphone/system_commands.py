"""Android shell commands about the system: packages (`pm`, `cmd package`), input methods
(`ime`), settings (`settings`, `svc`), services (`cmd connectivity|uimode|simphone`) and
`dumpsys`. Registered with `simphone.commands.command` when imported (`simphone.assembly` does).

`cmd package query-activities` prints each activity as the profile's sample does: real
phones print `nonLocalizedLabel=null` (no labels); the default SimPhone prints the label.

May import: the standard library, `simphone.types`, `simphone.commands`, `simphone.phone`.
Outputs that differ between real phones are the device profile's samples (`render`).
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime
from typing import TYPE_CHECKING

from simphone.commands import Usage, command, component_of, fail, ok, render, short_hash, to_int
from simphone.phone import ADB_KEYBOARD_IME, LATIN_IME, SYSTEM_PACKAGES
from simphone.types import CommandResult

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__: list[str] = []


# -- packages ------------------------------------------------------------------------------
@command("pm")
def _pm(phone: Phone, args: list[str]) -> CommandResult:
    if args[:2] == ["list", "packages"]:
        flags = [a for a in args[2:] if a.startswith("-")]
        filters = [a for a in args[2:] if not a.startswith("-")]
        packages = sorted(set(phone.installed) | set(SYSTEM_PACKAGES))
        if "-3" in flags:
            packages = [p for p in packages if p in phone.apps and not phone.apps[p].preinstalled or p == "com.android.adbkeyboard"]
        if filters:
            packages = [p for p in packages if filters[0] in p]
        return ok("".join(f"package:{p}\n" for p in packages))
    if args[:1] in (["grant"], ["revoke"]) and len(args) >= 3:
        error = phone.change_permission(args[0], args[-2], args[-1])
        return fail(error, 255) if error else ok()
    if args[:1] == ["path"] and len(args) > 1:
        if args[1] in phone.installed:
            return ok(f"package:/data/app/{args[1]}-1/base.apk\n")
        return fail("", 1)
    raise Usage(f"Unknown command: {' '.join(args[:2])}", 255)


def _resolve_lines(phone: Phone, package: str, brief: bool) -> str:
    app = phone.apps[package]
    activity = app.activity if app.activity.startswith(".") is False else package + app.activity
    if brief:
        return f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n{package}/{app.activity}\n"
    return render(phone, "query_activities_entry", activity_name=activity, package=package, label=app.label,
                  label_res=f"0x7f1400{zlib.crc32(package.encode()) % 256:02x}",
                  icon_res=f"0x7f0800{zlib.crc32(app.label.encode()) % 256:02x}")


def _launchable(phone: Phone) -> list[str]:
    return [p for p in phone.installed if p in phone.apps and phone.apps[p].on_launcher]


@command("cmd")
def _cmd(phone: Phone, args: list[str]) -> CommandResult:
    if not args:
        raise Usage("cmd: No service specified; use -l to list all running services.", 255)
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
        raise Usage(f"Unknown command: {' '.join(rest[:1])}", 255)
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
                raise Usage("Error: --seed needs a number", 2)
            seed = to_int(args[i + 1])
        phone.reset(seed)
        return ok(f"reset seed={phone.seed}\n")
    if verb == "clock":
        if len(args) < 2:
            return ok(phone.clock.isoformat() + "\n")
        try:
            when = datetime.fromisoformat(args[1])
        except ValueError:
            raise Usage(f"Error: not an ISO 8601 time: {args[1]!r}", 2) from None
        phone.set_clock(when)
        return ok(phone.clock.isoformat() + "\n")
    if verb == "ground-truth":
        return ok(json.dumps(phone.ground_truth(), ensure_ascii=False) + "\n")
    if verb == "state":
        return ok(json.dumps(phone.state(), ensure_ascii=False, sort_keys=True) + "\n")
    raise Usage("usage: cmd simphone reset [--seed N] | clock [ISO8601] | ground-truth | state", 2)


# -- ime / settings -----------------------------------------------------------------------
@command("ime")
def _ime(phone: Phone, args: list[str]) -> CommandResult:
    installed = [LATIN_IME] + ([ADB_KEYBOARD_IME] if "com.android.adbkeyboard" in phone.installed else [])
    verb = args[0] if args else ""
    if verb == "list":
        shown = installed if "-a" in args else phone.enabled_imes
        if "-s" in args:
            return ok("".join(f"{i}\n" for i in shown))
        # the head of each InputMethodInfo dump, as appium-adb test/unit/general-commands.spec.ts@8eea1a8 quotes it
        return ok("".join(f"{i}:\n  mId={i} mSettingsActivityName=null\n" for i in shown))
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
    raise Usage("ime <command>:\n  list [-a] [-s]\n  enable ID\n  disable ID\n  set ID\n  reset", 255)


NAMESPACES = ("system", "secure", "global")


@command("settings")
def _settings(phone: Phone, args: list[str]) -> CommandResult:
    args = _without_user_option(args)
    if len(args) >= 2 and args[1] not in NAMESPACES:
        raise Usage(f"Invalid namespace '{args[1]}'", 255)
    if args[:1] == ["get"] and len(args) == 3:
        value = phone.settings_get(args[1], args[2])
        return ok(f"{'null' if value is None else value}\n")
    if args[:1] == ["put"] and len(args) >= 4:
        # as on Android, writing airplane_mode_on alone does not switch the radios (the UI
        # and `cmd connectivity airplane-mode` do)
        phone.settings_put(args[1], args[2], args[3])
        if args[1] == "system" and args[2] == "user_rotation" and args[3] in ("0", "1", "2", "3") \
                and phone.settings_get("system", "accelerometer_rotation") != "1":
            phone.set_rotation(int(args[3]))
        return ok()
    if args[:1] == ["delete"] and len(args) == 3:
        phone.settings_put(args[1], args[2], None)
        return ok("Deleted 1 rows\n")
    if args[:1] == ["list"] and len(args) == 2:
        table = phone.settings_table(args[1])
        return ok("".join(f"{k}={v}\n" for k, v in sorted(table.items())))
    raise Usage("usage:  settings [--user <USER_ID> | current] get namespace key\n"
                 "        settings [--user <USER_ID> | current] put namespace key value", 255)


def _without_user_option(args: list[str]) -> list[str]:
    """``args`` less every ``--user ID`` pair (SettingsService reads it anywhere)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--user":
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out


# -- the lock credential -------------------------------------------------------------------
# AOSP services/core/java/com/android/server/locksettings/LockSettingsShellCommand.java:
# `locksettings set-pin [--old CREDENTIAL] PIN` prints "Pin set to 'PIN'", `clear --old
# CREDENTIAL` "Lock credential cleared"; a wrong or missing --old on a secure phone prints
# "Old password '…' didn't match" (checkCredential) and the command fails.
@command("locksettings")
def _locksettings(phone: Phone, args: list[str]) -> CommandResult:
    if not args:
        raise Usage("lockSettings service commands: set-pin, clear, get-disabled (see `locksettings help`)")
    verb, rest = args[0], args[1:]
    old = ""
    values: list[str] = []
    while rest:
        item = rest.pop(0)
        if item == "--old" and rest:
            old = rest.pop(0)
        elif item == "--user" and rest:
            rest.pop(0)
        elif item.startswith("--"):
            return fail(f"Unknown option: {item}\n", 255)
        else:
            values.append(item)
    if verb == "get-disabled":
        return ok("false\n")
    if verb not in ("set-pin", "clear"):
        raise Usage(f"Unknown command: {verb}", 255)
    if phone.keyguard_secure and not phone.lock_pin_matches(old):
        return CommandResult(stdout=f"Old password '{old}' didn't match\n".encode(), exit_code=255)
    if not phone.keyguard_secure and old:
        return CommandResult(stdout=b"Old password provided but user has no password\n", exit_code=255)
    if verb == "clear":
        phone.set_lock_pin(None)
        return ok("Lock credential cleared\n")
    if not values or not values[0].isdigit() or len(values[0]) < 4:
        return CommandResult(stdout=b"New credential doesn't satisfy admin policies: TOO_SHORT\n", exit_code=255)
    phone.set_lock_pin(values[0])
    return ok(f"Pin set to '{values[0]}'\n")


@command("svc")
def _svc(phone: Phone, args: list[str]) -> CommandResult:
    keys = {"wifi": "wifi_on", "bluetooth": "bluetooth_on", "data": "mobile_data"}
    if len(args) == 2 and args[0] in keys and args[1] in ("enable", "disable"):
        phone.settings_put("global", keys[args[0]], "1" if args[1] == "enable" else "0")
        return ok()
    raise Usage("Available commands: wifi data bluetooth (enable|disable)", 1)


# -- dumpsys ----------------------------------------------------------------------------------
@command("dumpsys")
def _dumpsys(phone: Phone, args: list[str]) -> CommandResult:
    service = args[0] if args else ""
    package = phone.foreground
    component = component_of(phone, package)
    token = short_hash(component)
    if service == "simphone":
        return ok(json.dumps(phone.state(), ensure_ascii=False, sort_keys=True, indent=1) + "\n")
    if service == "window":
        return ok(render(phone, "dumpsys_window"))
    if service == "display":
        return ok(render(phone, "dumpsys_display"))
    if service == "input":
        return ok(render(phone, "dumpsys_input"))
    if service == "SurfaceFlinger" and "--display-id" in args:
        return ok(render(phone, "dumpsys_surfaceflinger_display_id"))
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
        return ok(render(phone, "dumpsys_power"))
    if service == "input_method":
        return ok(render(phone, "input_method"))
    if service == "package" and args[1:2] == ["r"] and phone.profile.output("dumpsys_package_resolver"):
        return ok(render(phone, "dumpsys_package_resolver", entries="".join(
            render(phone, "dumpsys_package_resolver_entry", package=p, activity_short=phone.apps[p].activity,
                   hash=short_hash(p), filter_hash=short_hash(p + "f")) for p in _launchable(phone))))
    if service == "package" and len(args) > 1:
        pkg = args[-1]
        if pkg not in phone.installed or pkg not in phone.apps:
            return ok("")
        return ok(f"Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n"
                  f"        {short_hash(pkg)} {pkg}/{phone.apps[pkg].activity} filter {short_hash(pkg + 'f')}\n"
                  f"          Action: \"android.intent.action.MAIN\"\n"
                  f"          Category: \"android.intent.category.LAUNCHER\"\n\n"
                  f"Packages:\n  Package [{pkg}] ({short_hash(pkg)}):\n    versionName=1.0\n    label={phone.apps[pkg].label}\n")
    return ok("")


def _task_id(phone: Phone, package: str) -> int:
    return phone.task_ids().get(package, 1)
