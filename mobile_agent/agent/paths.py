"""The server's own paths stay inside: a text that leaves the service (an API answer, an event, a
webhook's payload, an MCP answer or error over HTTP) names a trajectory's file by its name inside the trajectory and any other
path of this machine as "[a path on the server]" (docs/security.md).

May import: the standard library.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["inside_paths", "relative_inside", "server_path"]

# an absolute path inside a text: after its start, a space, a quote or "=" (not a URL's or a fraction's slash)
PATH_IN_TEXT = re.compile(r"(?<![\w/:.~-])/[^\s'\"<>()\[\]{},;]+")


def inside_paths(value: Any, base: Path | None) -> Any:
    """``value`` (a message, or a dict/list of them) with every server path named inside its
    texts replaced: a trajectory's file by its relative name, another path of this server by
    "[a path on the server]" (a phone's path, a URL, a slash in prose stay)."""
    if isinstance(value, dict):
        return {key: inside_paths(item, base) for key, item in value.items()}
    if isinstance(value, list):
        return [inside_paths(item, base) for item in value]
    if not isinstance(value, str) or "/" not in value or len(value) > 65536:
        return value

    def replace(match: re.Match[str]) -> str:
        found = match.group(0).rstrip(".")
        relative = relative_inside(base, found) if base is not None else None
        if relative is not None:
            shown = relative
        elif server_path(found):
            shown = "[a path on the server]"
        else:
            return match.group(0)
        return shown + match.group(0)[len(found):]

    return PATH_IN_TEXT.sub(replace, value)


def server_path(value: str) -> bool:
    """Whether ``value`` is an absolute path on this server (its folder exists here): not a
    phone's path (/sdcard/…) nor a text that starts with a slash."""
    if not value.startswith("/") or any(c.isspace() for c in value):
        return False
    try:
        return Path(value).parent != Path("/") and Path(value).parent.is_dir()
    except (OSError, ValueError):
        return False


def relative_inside(base: Path, value: str) -> str | None:
    path = Path(value)
    try:
        target = (path if path.is_absolute() else base / path).resolve()
    except (OSError, ValueError):
        return None
    if not target.is_relative_to(base):
        return None
    return target.relative_to(base).as_posix()
