"""`mobile-agent doctor`: is everything in place to drive a phone?

Each check prints ok / warn / fail with a one-line fix; the exit code is 1 when any
check failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from mobile_agent.device import Device, adb_version, ensure_server, find_adb, list_devices
from mobile_agent.device.parsing import parse_wm_size
from mobile_agent.errors import DeviceError, PerceptionError, PlannerError, PlannerUnreachableError
from mobile_agent.settings import Settings, load_settings

__all__ = ["Check", "ios_checks", "register", "run", "run_checks"]


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str | None = None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "doctor", help="check adb, devices, ADB Keyboard, perception and the planner endpoint"
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument(
        "--planner-timeout", type=float, default=5.0, metavar="S", help="planner GET timeout (s)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = load_settings(getattr(args, "config", None))
    checks = run_checks(settings, planner_timeout_s=args.planner_timeout)
    if args.json:
        print(json.dumps([dataclasses.asdict(c) for c in checks], indent=2))
    else:
        for check in checks:
            print(f"[{check.status:^4}] {check.name}: {check.detail}")
            if check.fix and check.status != "ok":
                print(f"       fix: {check.fix}")
    return 1 if any(c.status == "fail" for c in checks) else 0


def run_checks(settings: Settings, planner_timeout_s: float = 5.0) -> list[Check]:
    checks: list[Check] = []
    checks.extend(_adb_checks(settings))
    checks.extend(ios_checks(settings))
    checks.append(_perception_check(settings))
    checks.append(_planner_check(settings, planner_timeout_s))
    checks.append(dialect_check(settings, _screen_size(checks)))
    return checks


def ios_checks(settings: Settings) -> list[Check]:
    """One check per iPhone of ``ios.devices`` and per iPhone attached over USB: its
    WebDriverAgent answers ready, and its screen; and whether usbmuxd answers (where
    ``ios.usb`` looks for USB iPhones: docs/ios.md)."""
    from mobile_agent.device.ios import IOS_PREFIX
    from mobile_agent.device.ios.usb import DEFAULT_USBMUXD, INSTALL_HINT, usb_enabled, usbmuxd_address
    from mobile_agent.device.ios.wda import shown_url
    from mobile_agent.device.phones import open_iphone, usb_iphones

    checks = []
    phones = sorted((name, shown_url(url)) for name, url in settings.ios.devices.items())  # no credentials
    try:
        usb_on = usb_enabled(settings.ios)
    except DeviceError as exc:  # ios.usb = true without the library
        checks.append(Check("usbmuxd", "fail", exc.message, INSTALL_HINT))
        usb_on = False
    if usb_on:
        attached, problem = usb_iphones(settings.ios)
        address = usbmuxd_address(settings.ios)
        # "auto" where no usbmuxd is installed (its default socket absent): USB iPhones are not used here
        unused = settings.ios.usb == "auto" and address == DEFAULT_USBMUXD and not os.path.exists(address)
        if problem and not unused:
            checks.append(Check("usbmuxd", "fail" if settings.ios.usb is True else "warn", problem,
                                "start usbmuxd (`apt install usbmuxd`, then plug the iPhone in), set ios.usbmuxd, "
                                "or ios.usb = false"))
        elif not problem:
            listed = ", ".join(p.serial for p in attached) or "none"
            checks.append(Check("usbmuxd", "ok", f"usbmuxd at {address} answers; iPhones attached over USB: {listed}"))
        phones += [(p.name, f"USB (usbmux://{p.udid}:{settings.ios.wda_port})") for p in attached]
    for name, url in phones:
        serial = IOS_PREFIX + name
        try:
            iphone = open_iphone(settings.ios, serial)
            try:
                status = iphone.client.status()
                info = iphone.screen_info()
            finally:
                iphone.client.close()
        except DeviceError as exc:
            checks.append(Check(serial, "fail", exc.message,
                                "start WebDriverAgent on the iPhone and forward its port (`iproxy 8100 8100`): docs/ios.md"))
            continue
        checks.append(Check(serial, "ok", f"WebDriverAgent at {url} is ready ({status.os_name or 'iOS'} "
                                          f"{status.os_version or '?'}), screen {info.width}x{info.height} px"))
    return checks


def _adb_checks(settings: Settings) -> list[Check]:
    adb = settings.adb
    from mobile_agent.device import iphone_names

    iphones = [f"ios:{name}" for name in iphone_names(settings.ios)]  # configured, and attached over USB
    checks: list[Check] = []
    try:
        checks.append(Check("adb", "ok", f"{adb_version(adb)} ({find_adb(adb)})"))
        have_binary = True
    except DeviceError as exc:
        checks.append(
            Check(
                "adb", "warn", exc.message, "install platform-tools (`apt install adb`) or set adb.adb_path"
            )
        )
        have_binary = False
    try:
        host = ensure_server(adb)
        checks.append(
            Check(
                "adb server", "ok", f"{adb.server_host}:{adb.server_port}, protocol {host.server_version()}"
            )
        )
    except DeviceError as exc:
        fix = "run `adb start-server`" if have_binary else "install adb so the server can be started"
        # with iPhones configured, no adb server only means no Android phone
        checks.append(Check("adb server", "warn" if iphones else "fail", exc.message, fix))
        return checks
    try:
        devices = list_devices(adb)
    except DeviceError as exc:
        checks.append(
            Check("devices", "fail", exc.message, "restart the server: `adb kill-server && adb start-server`")
        )
        return checks
    if not devices and iphones:
        checks.append(Check("devices", "ok", f"no Android phone attached; iPhones configured: {', '.join(iphones)} "
                                              "(each checked below)"))  # fmt: skip
        return checks
    if not devices:
        checks.append(
            Check("devices", "fail", "no device attached",
                  "plug in a phone with USB debugging on, or `mobile-agent devices --connect HOST:PORT`; "
                  "an iPhone: ios.devices (docs/ios.md)")
        )  # fmt: skip
        return checks
    for info in devices:
        checks.extend(_device_checks(settings, info.serial, info.state, info.model))
    serials = [info.serial for info in devices]
    # `run` would stop at this, so say it here (an adb.connect address is connected by `run` itself)
    if adb.serial and adb.serial not in serials + iphones and adb.serial not in adb.connect:
        checks.append(
            Check("adb.serial", "fail", f"{adb.serial!r} is not attached (attached: {', '.join(serials)})",
                  "set adb.serial (MOBILE_AGENT_ADB__SERIAL) to a serial `mobile-agent devices` lists, or connect that phone")
        )  # fmt: skip
    return checks


def _device_checks(settings: Settings, serial: str, state: str, model: str | None) -> list[Check]:
    name = f"device {serial}"
    if state == "unauthorized":
        return [
            Check(name, "fail", "unauthorized", "accept the 'Allow USB debugging?' RSA prompt on the phone")
        ]
    if state == "offline":
        return [Check(name, "fail", "offline", "reconnect the cable, or `adb disconnect` + `adb connect` it")]
    if state != "device":
        return [Check(name, "fail", state, "see `adb devices -l`; on Linux USB may need udev rules")]
    checks = [Check(name, "ok", f"ready ({model or 'unknown model'})")]
    device = Device(serial, settings.adb)
    try:
        size = parse_wm_size(device.shell(["wm", "size"]))
        checks.append(Check(f"{serial} screen", "ok" if size else "warn",
                            f"{size[0]}x{size[1]}" if size else "`wm size` gave no size"))  # fmt: skip
        if device.has_adb_keyboard():
            checks.append(Check(f"{serial} ADB Keyboard", "ok", "installed (non-ASCII text works)"))
        else:
            checks.append(
                Check(f"{serial} ADB Keyboard", "warn", "not installed: only ASCII text can be typed",
                      "install the APK from https://github.com/senzhk/ADBKeyBoard (`adb install ADBKeyboard.apk`)")
            )  # fmt: skip
    except DeviceError as exc:
        checks.append(Check(name, "fail", exc.message, "check the USB connection and `adb devices`"))
    return checks


def _perception_check(settings: Settings) -> Check:
    """The configured backends, and one OCR pass over a drawn word: the OCR backend loads
    (or fails with its install hint) and reads."""
    try:
        from mobile_agent.locate import build_locator

        locator = build_locator(settings)
        lines = locator.ocr(_ocr_probe())
        backends = locator.describe_backends()  # after the probe: the OCR backend is loaded now
    except ImportError as exc:
        return Check(
            "perception", "warn", f"cannot load perception: {exc}", "pip install 'mobile-agent[ml]' for icons"
        )
    except PerceptionError as exc:
        hint = exc.fields.get("hint") or "see the README (perception backends)"
        return Check("perception", "fail", exc.message, hint)
    except Exception as exc:  # noqa: BLE001 - a backend failing to load is a finding, not a crash
        return Check(
            "perception",
            "fail",
            f"{type(exc).__name__}: {exc}",
            "see `mobile-agent doctor -v` and the README",
        )
    detail = ", ".join(f"{k}={v}" for k, v in backends.items())
    read = " ".join(line.text for line in lines)
    if _OCR_PROBE_WORD not in read.lower():
        return Check("perception", "warn", f"{detail}; OCR read {read!r} where {_OCR_PROBE_WORD!r} is drawn",
                     "check perception.ocr_backend and its model files")  # fmt: skip
    return Check("perception", "ok", f"{detail}; OCR reads a drawn {_OCR_PROBE_WORD!r}")


_OCR_PROBE_WORD = "doctor"


def _ocr_probe() -> np.ndarray:
    image = Image.new("RGB", (320, 80), "white")
    ImageDraw.Draw(image).text((10, 15), _OCR_PROBE_WORD, fill="black", font=ImageFont.load_default(size=40))
    return np.asarray(image)


def _screen_size(checks: list[Check]) -> tuple[int, int]:
    """The first attached phone's screen, as the screen check read it; else a common phone's."""
    for check in checks:
        if check.name.endswith(" screen") and check.status == "ok" and "x" in check.detail:
            width, _, height = check.detail.partition("x")
            if width.isdigit() and height.isdigit():
                return int(width), int(height)
    return 1080, 2400


def dialect_check(settings: Settings, screen: tuple[int, int] = (1080, 2400)) -> Check:
    """Which dialect the model gets (planner.dialect, or its name's profile) and the image it sees."""
    from mobile_agent.planner.dialects import dialect_for
    from mobile_agent.planner.geometry import viewport_for

    planner = settings.planner
    dialect, profile = dialect_for(planner)
    rule = dialect.image_rule(profile.image)
    view = viewport_for(screen[0], screen[1], rule, profile.space)
    how = (
        "set by planner.dialect"
        if planner.dialect != "auto"
        else f"profile {profile.key!r} from the model's name"
    )
    detail = (f"{planner.model}: {dialect.name} dialect ({how}); points as {profile.space.describe()}; "
              f"a {screen[0]}x{screen[1]} screen is sent as {view.image_width}x{view.image_height} ({rule.describe()})")  # fmt: skip
    if dialect.name in ("ui_tars", "mobile_use", "autoglm"):
        detail += f"; snapping {'on' if planner.snap else 'off'}"
        if rule.factor is not None:
            detail += (f". The server's image limit must be at least {view.image_width * view.image_height} pixels "
                       "(vLLM/SGLang max_pixels), or set planner.image_max_pixels to its value")  # fmt: skip
    return Check("planner dialect", "ok", detail)


def _planner_check(settings: Settings, timeout_s: float) -> Check:
    """The endpoint's model list, through the same client the agent uses."""
    planner = settings.planner
    if not planner.base_url:
        return Check("planner", "warn", "no endpoint configured (skipped)",
                     "set planner.base_url (MOBILE_AGENT_PLANNER__BASE_URL) and planner.api_key")  # fmt: skip
    from mobile_agent.planner import Planner

    url = planner.base_url.rstrip("/") + "/models"
    try:
        models = Planner(planner.model_copy(update={"timeout_s": timeout_s})).list_models()
    except PlannerUnreachableError as exc:
        return Check("planner", "fail", f"GET {url}: {exc.message}", "check planner.base_url and the network")
    except PlannerError as exc:
        if exc.status_code in (401, 403):
            return Check("planner", "fail", f"GET {url}: HTTP {exc.status_code}", "check planner.api_key")
        return Check("planner", "warn", f"GET {url}: {exc.message}",
                     "the endpoint answers but has no usable /models; chat completions may still work")  # fmt: skip
    if models and planner.model not in models:
        listed = ", ".join(models[:8]) + (", …" if len(models) > 8 else "")
        return Check("planner", "warn", f"{url} answers but does not list model {planner.model!r} (it lists {listed})",
                     "set planner.model to one of the listed models")  # fmt: skip
    return Check("planner", "ok", f"{url} answers (model {planner.model})")
