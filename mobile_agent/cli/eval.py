"""`mobile-agent eval` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="(not yet available)")
    parser.set_defaults(func=lambda args: print("mobile-agent eval: not yet available") or 2)
