"""Free space on the disk that holds a folder: the one reading the REST service's and MCP's
``server.retention.min_free_mb`` refusals share.

May import: the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["free_mb"]


def free_mb(folder: Path) -> float | None:
    """Megabytes an unprivileged writer may still use on the disk of ``folder``, or None when it
    cannot be read. A folder not made yet (before the first run) is read at its nearest parent."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize / 1e6
