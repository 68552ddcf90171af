"""`mobile-agent devices`: attached Android phones, configured iPhones and iPhones attached
over USB (``ios:<UDID>``), with platform, state, model and screen size."""

from __future__ import annotations

import argparse
import json
import sys

from mobile_agent.device import Device, connect, list_devices, list_iphones
from mobile_agent.device.parsing import parse_wm_size
from mobile_agent.device.phones import usb_iphones
from mobile_agent.errors import DeviceError
from mobile_agent.settings import load_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "devices", help="list attached phones and configured iPhones (platform, serial, state, model, screen size)"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.add_argument(
        "--connect", metavar="HOST:PORT", action="append", default=[], help="`adb connect` this address first (repeatable)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = load_settings(getattr(args, "config", None))
    for address in args.connect:
        answer = connect(address, settings.adb)
        if not args.json:
            print(answer)
    rows: list[dict[str, object]] = []
    iphones = list_iphones(settings.ios)  # ios.devices and USB (docs/ios.md): each WDA asked whether it is ready
    if settings.ios.usb is True:  # asked for: say why no USB iPhone can be listed
        problem = usb_iphones(settings.ios)[1]
        if problem:
            print(f"no USB iPhones: {problem}", file=sys.stderr)
    try:
        android = list_devices(settings.adb)
    except DeviceError as exc:
        if not iphones:
            raise
        # iPhones need no adb server: list them, and say why no Android phone is listed
        print(f"no Android phones: {exc.message}", file=sys.stderr)
        android = []
    for info in android:
        row = {**info.to_dict(), "platform": "android", "screen": None}
        if info.state == "device":
            try:
                size = parse_wm_size(Device(info.serial, settings.adb).shell(["wm", "size"]))
                row["screen"] = f"{size[0]}x{size[1]}" if size else None
            except DeviceError:
                pass  # the state column already says what matters
        rows.append(row)
    for iphone in iphones:
        rows.append({**iphone.to_dict(), "screen": None})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no devices attached (plug in a phone with USB debugging on, or use --connect HOST:PORT; "
              "iPhones: set ios.devices or attach one over USB, docs/ios.md)")
        return 0
    header = ("PLATFORM", "SERIAL", "STATE", "MODEL", "SCREEN")
    table = [header] + [(r["platform"], r["serial"], r["state"], r["model"] or "-", r["screen"] or "-") for r in rows]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    for line in table:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    for row in rows:
        if row.get("problem"):
            print(f"{row['serial']}: {row['problem']}")
    return 0
