"""``--token-file``: the bearer token a command reads from a file (first line), one home for
``serve``, ``mcp`` and ``schedule``.

A token file is a secret kept out of the shell's history and the process list, so a bad one
must say what is wrong in one line and never echo what it read: missing or unreadable
(``OSError``), not UTF-8, empty (or a blank first line), or not one word of visible ASCII.
The last is what an ``Authorization: Bearer`` header can carry (RFC 9110 field values;
RFC 6750 section 2.1 puts no spaces in a token) — a token with a space or a non-ASCII
letter would be accepted here and then never match what a client can send.

May import: the standard library, ``mobile_agent.errors``.
"""

from __future__ import annotations

from pathlib import Path

from mobile_agent.errors import ConfigError

__all__ = ["MAX_TOKEN_CHARS", "read_token_file"]

MAX_TOKEN_CHARS = 4096  # far above any generated token; a bigger first line is not a token file


def _visible_ascii(text: str) -> bool:
    return all("!" <= char <= "~" for char in text)


def read_token_file(path: Path) -> str:
    """The token on the first line of ``path`` (surrounding spaces and a UTF-8 BOM dropped).

    Raises ``ConfigError`` (with ``path``) for a missing, unreadable, empty or malformed file;
    the message never contains the file's contents.
    """

    def bad(why: str) -> ConfigError:
        return ConfigError(f"cannot read a token from {path}: {why}", path=str(path))

    try:
        with path.open("rb") as stream:
            raw = stream.readline(MAX_TOKEN_CHARS + 1)
    except OSError as exc:
        raise bad(exc.strerror or type(exc).__name__) from exc
    try:
        line = raw.decode("utf-8-sig")  # -sig: a BOM from a Windows editor is not part of the token
    except UnicodeDecodeError as exc:
        raise bad("the file is not UTF-8 text") from exc
    if len(line.rstrip("\r\n")) > MAX_TOKEN_CHARS:
        raise bad(f"the first line is longer than {MAX_TOKEN_CHARS} characters")
    token = line.strip()
    if not token:
        raise bad("the file is empty (the token goes on its first line)")
    if not _visible_ascii(token):
        raise bad("the first line is not one token (visible ASCII, no spaces)")
    return token
