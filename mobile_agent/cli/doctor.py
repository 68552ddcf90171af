"""`mobile-agent doctor` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("doctor", help="(not yet available)")
    parser.set_defaults(func=lambda args: print("mobile-agent doctor: not yet available") or 2)
