"""``simphone serve --ios``: each phone behind its own WebDriverAgent front-end (no ADB).

May import: the standard library, the rest of ``simphone``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from simphone.assembly import Phone
from simphone.ios.wda import WdaFrontEnd

__all__ = ["serve_ios"]


def serve_ios(phones: list[Phone], args: argparse.Namespace) -> int:
    """Serve ``phones`` as iPhones on ``--wda-port``, +1, … (0: any free) until Ctrl-C or
    SIGTERM; prints one ``NAME URL`` line per phone (``ios.devices`` takes them)."""
    fronts: list[WdaFrontEnd] = []
    try:
        for i, phone in enumerate(phones):
            port = 0 if args.wda_port == 0 else args.wda_port + i
            fronts.append(WdaFrontEnd(phone, scale=args.scale, host=args.host, port=port).start())
    except (ValueError, OSError) as exc:
        for front in fronts:
            front.stop()
        raise SystemExit(f"simphone: cannot serve WDA: {exc}") from None
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        for i, front in enumerate(fronts):
            print(f"simphone-{i + 1} {front.url} {front.phone.width}x{front.phone.height} scale={front.scale}", flush=True)
        print("serving WDA; Ctrl-C to stop", file=sys.stderr, flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        for front in fronts:
            front.stop()
    return 0
