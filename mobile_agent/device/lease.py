"""One phone, one run: the lease every interface takes before it drives a phone.

A REST task, an MCP ``run_instruction`` or operation call, and ``mobile-agent run`` all hold the
phone's lease while they act on it, so two callers never interleave their steps on one phone,
whichever interfaces (and processes) they come through. A second caller waits (up to its
``wait_s``, or until its ``cancel``) and then gets ``PhoneBusyError`` naming the holder.

The lease is an exclusive ``flock`` on a file per phone (the adb server's host and port, and
the serial) in a folder of the user's temporary directory: an advisory lock of the kernel, held
per open file, so it excludes threads of one process as well as other processes, and it ends
with the process that held it (a crashed run never leaves a phone leased). The holder writes
its name into the file for whoever waits. ``flock`` rather than a lock library (``filelock``,
``portalocker``): on Linux and macOS it is these few lines, with no dependency; Windows, where
it does not exist, runs without the lease (said once in the log).

May import: the standard library, ``mobile_agent.errors``, ``mobile_agent.settings``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from mobile_agent.errors import PhoneBusyError
from mobile_agent.settings import AdbSettings

if sys.platform != "win32":
    import fcntl

__all__ = ["PhoneLease", "lease_holder"]

log = logging.getLogger(__name__)
_POLL_S = 0.05
# a caller that will not wait (``wait_s=0``) still tries for this long: a ``lease_holder``
# probe holds the lock (shared) for an instant, and must not make a free phone refuse a run
_PROBE_GRACE_S = 0.1


def _lease_dir() -> Path:
    folder = Path(tempfile.gettempdir()) / f"mobile-agent-leases-{os.getuid() if hasattr(os, 'getuid') else 0}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _lease_file(adb: AdbSettings, serial: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{adb.server_host}_{adb.server_port}_{serial}")
    return _lease_dir() / f"{name}.lease"


def lease_holder(adb: AdbSettings, serial: str) -> str | None:
    """Who holds the phone's lease now (as the holder wrote it), or None when it is free.

    A free phone's file is empty (``release`` empties it before it unlocks), and then the probe
    takes no lock at all: probes of a free phone can never keep a run that asks for it at once
    from getting it (two probes in a loop, taking the lock shared in turn, always held it, and
    ``mobile-agent run`` was refused a free phone). Only a file that names a holder is checked
    against the lock, shared and for an instant: a name a crashed process left is no holder."""
    path = _lease_file(adb, serial)
    if sys.platform == "win32":
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:  # never leased here
        return None
    if not text.strip():
        return None
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder_named(text)
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


def _read_holder(path: Path) -> str:
    try:
        return _holder_named(path.read_text(encoding="utf-8"))
    except OSError:
        return "another run"


def _holder_named(text: str) -> str:
    try:
        return str(json.loads(text)["holder"])
    except (ValueError, KeyError, TypeError):  # being written at this instant
        return "another run"


class PhoneLease:
    """``with PhoneLease(adb, serial, "REST task 12 (alice)", wait_s=30):`` — the phone is this
    caller's inside the block. ``wait_s`` = 0 refuses at once when it is held (within
    ``_PROBE_GRACE_S``); ``cancel`` stops the wait early (then ``PhoneBusyError`` too)."""

    def __init__(self, adb: AdbSettings, serial: str, holder: str, *, wait_s: float = 0.0,
                 cancel: threading.Event | None = None) -> None:
        self.path = _lease_file(adb, serial)
        self.serial = serial
        self.holder = holder
        self.wait_s = wait_s
        self.cancel = cancel
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        if sys.platform == "win32":
            log.info("no flock on this system: phone %s is not leased", self.serial)
            return
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115  (held until release)
        deadline = time.monotonic() + max(self.wait_s, _PROBE_GRACE_S)
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                stop = self.cancel is not None and self.cancel.is_set()
                if stop or time.monotonic() >= deadline:
                    holder = _read_holder(self.path)
                    handle.close()
                    raise PhoneBusyError(f"phone {self.serial} is busy: {holder} holds it", serial=self.serial,
                                         holder=holder) from None
                time.sleep(_POLL_S)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"holder": self.holder, "pid": os.getpid(), "since": time.time()}))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is None or sys.platform == "win32":
            return
        with contextlib.suppress(OSError):
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()

    def __enter__(self) -> PhoneLease:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()
