"""Work on a daemon thread, waited for in slices so that the waiting thread stays
responsive: the step loop watches its cancel event while the model thinks
(``RunSession.ask_model``), the CLI catches Ctrl-C while the run goes on (``cli/run``).

A daemon thread rather than an executor: interpreter exit joins executor threads, so
abandoned work (a model call after a cancel) would hold the process until it ends. And
a ``Future`` rather than ``Thread.join``: a join interrupted by Ctrl-C can report a
live thread as finished (CPython gh-90882).

May import: the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, wait
from threading import Thread
from typing import TypeVar

__all__ = ["start_in_background", "wait_for"]

T = TypeVar("T")


def start_in_background(call: Callable[[], T], name: str) -> Future[T]:
    """``call()`` on a new daemon thread; its result or exception lands in the future."""
    future: Future[T] = Future()

    def work() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(call())
        except BaseException as exc:  # handed to whoever waits
            future.set_exception(exc)

    Thread(target=work, name=name, daemon=True).start()
    return future


def wait_for(future: Future[T], *, every_s: float, between: Callable[[], None] = lambda: None) -> T:
    """The future's result; ``between()`` runs every ``every_s`` seconds while it is not
    done (it may raise to stop waiting: the work goes on, its answer is dropped)."""
    while not wait([future], timeout=every_s).done:
        between()
    return future.result()
