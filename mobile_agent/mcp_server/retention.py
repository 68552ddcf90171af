"""What `mobile-agent mcp --transport http` deletes, and when (``server.retention``, as the REST
service's cleanup: ``server.retention``).

Each operation call writes a step with its screenshots into its MCP session's trajectory, and
each ``run_instruction`` a run folder, under ``agent.output_dir`` (review8 #9: about 135 KB a
call). Here ended MCP sessions are finished tasks: a folder whose header says ``"mode": "mcp"``
and whose result line is written, with the run folders its steps link to (``linked_run``: the
session's ``run_instruction`` runs), goes

- when it ended more than ``task_days`` ago (its trajectory's last write: the result line);
- then, while the ended sessions' folders together are over ``runs_max_mb``, oldest first.

A session still open (no result line) is never touched, nor its runs; nothing outside the runs
folder is. ``McpRetentionTimer`` runs a pass when the server starts and every ``interval_s``.

May import: ``mobile_agent`` (agent, settings), the standard library.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from mobile_agent.settings import RetentionSettings

__all__ = ["EndedSession", "McpRetentionTimer", "ended_sessions", "run_retention"]

log = logging.getLogger(__name__)

DAY_S = 86400.0


@dataclass(frozen=True)
class EndedSession:
    folder: Path
    ended_at: float  # the last write of its trajectory (the result line)
    runs: tuple[Path, ...]  # the run folders its steps link to, inside the runs folder
    bytes: int  # its folder's and its runs' files together


def _bytes(folder: Path) -> int:
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            try:
                total += (Path(parent) / name).lstat().st_size
            except OSError:
                continue
    return total


def ended_sessions(root: Path) -> list[EndedSession]:
    """The ended MCP sessions' folders under ``root``, oldest first."""
    from mobile_agent.agent import load_trajectory

    found = []
    for path in sorted(root.glob("*/trajectory.jsonl")) if root.is_dir() else []:
        folder = path.parent
        try:
            header, steps, result = load_trajectory(folder)
            ended_at = path.stat().st_mtime
        except (OSError, ValueError):
            continue
        if header.get("mode") != "mcp" or result is None or folder.is_symlink():
            continue
        runs = []
        for step in steps:
            linked = step.get("linked_run")
            name = linked.get("folder") if isinstance(linked, dict) else None
            # a name of a folder beside this one, nothing else (the step's record is data)
            if isinstance(name, str) and name and name not in (".", "..") and "/" not in name and "\\" not in name:
                run = root / name
                if run.is_dir() and not run.is_symlink():
                    runs.append(run)
        size = _bytes(folder) + sum(_bytes(run) for run in runs)
        found.append(EndedSession(folder, ended_at, tuple(runs), size))
    return sorted(found, key=lambda session: session.ended_at)


def doomed(root: Path, limits: RetentionSettings, now: float) -> list[EndedSession]:
    """The ended sessions a pass at ``now`` deletes (``task_days``, then ``runs_max_mb``)."""
    sessions = ended_sessions(root)
    going = [s for s in sessions if limits.task_days and now - s.ended_at > limits.task_days * DAY_S]
    if limits.runs_max_mb:
        left = [s for s in sessions if s not in going]
        total = sum(s.bytes for s in left)
        for session in left:  # oldest first
            if total <= limits.runs_max_mb * 1e6:
                break
            going.append(session)
            total -= session.bytes
    return going


def run_retention(root: Path, limits: RetentionSettings, now: float | None = None) -> list[EndedSession]:
    """Delete what ``doomed`` names; a folder another pass (or a person) removed first is skipped."""
    gone = []
    for session in doomed(root, limits, time.time() if now is None else now):
        for folder in (*session.runs, session.folder):  # the session's folder last: its record names the runs
            shutil.rmtree(folder, ignore_errors=True)
        log.info("retention: MCP session %s deleted (%d bytes with its runs)", session.folder.name, session.bytes)
        gone.append(session)
    return gone


class McpRetentionTimer:
    """A thread: a retention pass at once, then every ``limits.interval_s``."""

    def __init__(self, root: Path, limits: RetentionSettings) -> None:
        self.root = root
        self.limits = limits
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mcp-retention", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        while True:
            try:
                run_retention(self.root, self.limits)
            except Exception:  # a folder changing under the pass: the next one tries again
                log.exception("MCP retention failed")
            if self._stop.wait(self.limits.interval_s):
                return
