"""``simphone serve --ios``: each phone behind its own WebDriverAgent front-end (no ADB).

May import: the standard library, the rest of ``simphone``.
"""

from __future__ import annotations

import argparse

from simphone.assembly import Phone
from simphone.ios.wda import WdaFrontEnd

__all__ = ["announce_wda", "start_wda"]


def start_wda(phones: list[Phone], args: argparse.Namespace) -> list[WdaFrontEnd]:
    """Serve ``phones`` as iPhones on ``--wda-port``, +1, … (0: any free); all or none
    (``SystemExit`` naming why). ``simphone.cli.serve_until_stopped`` serves them until Ctrl-C
    or SIGTERM."""
    fronts: list[WdaFrontEnd] = []
    try:
        for i, phone in enumerate(phones):
            port = 0 if args.wda_port == 0 else args.wda_port + i
            fronts.append(WdaFrontEnd(phone, scale=args.scale, host=args.host, port=port).start())
    except (ValueError, OSError) as exc:
        for front in fronts:
            front.stop()
        raise SystemExit(f"simphone: cannot serve WDA: {exc}") from None
    return fronts


def announce_wda(fronts: list[WdaFrontEnd]) -> None:
    """One ``NAME URL WxH scale=S`` line per phone (``ios.devices`` takes NAME and URL)."""
    for i, front in enumerate(fronts):
        print(f"simphone-{i + 1} {front.url} {front.phone.width}x{front.phone.height} scale={front.scale}", flush=True)
