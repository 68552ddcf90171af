"""`mobile-agent run` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="(not yet available)")
    parser.set_defaults(func=lambda args: print("mobile-agent run: not yet available") or 2)
