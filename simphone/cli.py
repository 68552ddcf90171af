"""``simphone``: run simulated phones that any adb can connect to.

    simphone serve [--host 127.0.0.1] [--port 6100] [--count N] [--profile NAME[,NAME...]]
                   [--width W --height H] [--seed S] [--unauthorized] [--adb-keyboard]
                   [--connect [--adb PATH] [--adb-port P]]
    simphone profiles

``--profile`` picks the real phone each one plays (``simphone profiles`` lists them;
repeat it or give a comma list: one phone per name, ``--count`` more of the last).
Prints one line per phone (``SERIAL model profile WxH seed=S``), then serves until Ctrl-C or
SIGTERM. ``--connect`` also runs ``adb connect SERIAL`` for each phone. ``--port 0``
lets the system pick free ports.

May import: the standard library, ``simphone``.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["build_parser", "main"]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="simphone", description="Simulated Android phones over ADB.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve one or more phones until Ctrl-C")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=_port, default=6100, help="first port; phones use PORT, PORT+1, … (0: any free)"
    )
    serve.add_argument("--count", type=_positive, default=1, help="how many phones (default 1)")
    serve.add_argument(
        "--profile", action="append", default=None, metavar="NAME[,NAME...]",
        help="device profile(s), one phone each (default: simphone); see `simphone profiles`",
    )
    serve.add_argument("--width", type=_positive, default=None, help="screen width (default: the profile's)")
    serve.add_argument("--height", type=_positive, default=None, help="screen height (default: the profile's)")
    serve.add_argument(
        "--seed", type=int, default=0, help="seed of the first phone; the next ones get seed+1, …"
    )
    serve.add_argument(
        "--unauthorized", action="store_true", help="never accept the host's key (shows 'unauthorized')"
    )
    serve.add_argument(
        "--adb-keyboard", action="store_true",
        help="ADB Keyboard installed and enabled (as after `adb install ADBKeyboard.apk`): non-ASCII typing works",
    )  # fmt: skip
    serve.add_argument("--connect", action="store_true", help="run `adb connect` for each phone")
    serve.add_argument(
        "--adb", type=Path, default=None, help="adb binary for --connect (default: PATH, then adbutils')"
    )
    serve.add_argument("--adb-port", type=_port, default=None, help="adb server port for --connect")
    serve.add_argument("-v", "--verbose", action="store_true", help="log protocol events")
    serve.add_argument("--ios", action="store_true", help="serve each phone as an iPhone over WebDriverAgent's HTTP API, not ADB")
    serve.add_argument("--wda-port", type=_port, default=8100, help="with --ios: first WDA port (default 8100; 0: any free)")
    serve.add_argument("--scale", type=int, choices=(2, 3), default=3, help="with --ios: pixels per point (default 3)")
    commands.add_parser("profiles", help="list the device profiles and what each reproduces")
    return parser


def _profiles_of(args: argparse.Namespace) -> list[str]:
    """One profile name per phone: the --profile names in order, then the last one
    again until --count phones are made."""
    from simphone.profiles import DEFAULT_PROFILE, profile_names

    names = [n.strip() for given in (args.profile or []) for n in given.split(",") if n.strip()] or [DEFAULT_PROFILE]
    unknown = [n for n in names if n not in profile_names()]
    if unknown:
        raise SystemExit(f"simphone: unknown profile {', '.join(unknown)}; known: {', '.join(profile_names())}")
    while len(names) < args.count:
        names.append(names[-1])
    return names


def _list_profiles() -> int:
    from simphone.profiles import load_profile, profile_names

    for name in profile_names():
        profile = load_profile(name)
        print(f"{name:18} {profile.summary}\n{'':18} reproduces: {profile.reproduces}")
    return 0


def _find_adb(explicit: Path | None) -> str:
    if explicit is not None:
        if not explicit.is_file():
            raise SystemExit(f"simphone: no adb binary at {explicit}")
        if not os.access(explicit, os.X_OK):
            raise SystemExit(f"simphone: {explicit} is not executable")
        return str(explicit)
    found = shutil.which("adb")
    if found:
        return found
    try:
        import adbutils
    except ImportError:
        raise SystemExit("simphone: no adb on PATH; pass --adb PATH") from None
    bundled = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not bundled.is_file():
        raise SystemExit("simphone: no adb on PATH; pass --adb PATH")
    return str(bundled)


def _adb_connect(adb: str, adb_port: int | None, serial: str) -> None:
    command = [adb, *(["-P", str(adb_port)] if adb_port else []), "connect", serial]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:  # the phones keep serving; say why
        print(f"adb connect {serial} failed: {exc}", file=sys.stderr, flush=True)
        return
    message = (result.stdout + result.stderr).strip()
    print(f"adb connect {serial}: {message}", file=sys.stderr, flush=True)


def _serve(args: argparse.Namespace) -> int:
    from simphone import Phone
    from simphone.server import PhoneServer

    if (args.width is not None and args.width < 320) or (args.height is not None and args.height < 480):
        raise SystemExit(f"simphone: screen too small: {args.width}x{args.height} (at least 320x480)")
    profiles = _profiles_of(args)
    adb = _find_adb(args.adb) if args.connect else None  # a bad --adb is said before serving
    try:
        phones = [
            Phone(width=args.width, height=args.height, seed=args.seed + i, adb_keyboard=args.adb_keyboard,
                  profile=profile, number=i + 1)
            for i, profile in enumerate(profiles)
        ]
    except ValueError as exc:
        raise SystemExit(f"simphone: {exc}") from None
    if args.ios:
        from simphone.ios.cli import announce_wda, start_wda

        fronts = start_wda(phones, args)

        def stop_fronts() -> None:
            for front in fronts:
                front.stop()

        return serve_until_stopped(lambda: announce_wda(fronts), stop_fronts, "serving WDA")
    try:
        server = PhoneServer(phones, host=args.host, port=args.port, unauthorized=args.unauthorized)
        server.start()
    except (ValueError, OSError) as exc:
        raise SystemExit(f"simphone: cannot serve: {exc}") from None

    def announce() -> None:
        for index, (endpoint, phone) in enumerate(zip(server.endpoints, phones, strict=True)):
            print(
                f"{endpoint.serial} {phone.model.replace(' ', '_')} {phone.profile.name} "
                f"{phone.width}x{phone.height} seed={args.seed + index}",
                flush=True,
            )
        if adb is not None:
            for serial in server.serials:
                _adb_connect(adb, args.adb_port, serial)

    return serve_until_stopped(announce, server.stop, "serving")


def serve_until_stopped(announce: Callable[[], None], stop: Callable[[], None], serving: str) -> int:
    """``announce`` the phones (their lines on stdout), then serve until Ctrl-C or SIGTERM;
    ``stop`` runs whatever happened. Exit status 0."""
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        announce()
        print(f"{serving}; Ctrl-C to stop", file=sys.stderr, flush=True)
        try:
            while not stopped.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "serve":
        return _serve(args)
    if args.command == "profiles":
        return _list_profiles()
    raise AssertionError(args.command)  # argparse only lets known commands through


if __name__ == "__main__":
    sys.exit(main())
