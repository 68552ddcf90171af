"""One step of a process's shutdown (the service's lifespan, a farm worker's): an error in it
is logged and the next steps still run, so a part that fails to stop never leaves the phones
(a USB iPhone's forward) or the database open behind it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

__all__ = ["shutdown_step", "shutdown_step_async"]


def shutdown_step(log: logging.Logger, name: str, step: Callable[[], object]) -> None:
    try:
        step()
    except Exception:
        log.exception("shutdown: stopping %s failed; the shutdown goes on", name)


async def shutdown_step_async(log: logging.Logger, name: str, step: Callable[[], Awaitable[object]]) -> None:
    try:
        await step()
    except Exception:
        log.exception("shutdown: stopping %s failed; the shutdown goes on", name)
