"""``--token-file`` of ``serve``, ``mcp`` and ``schedule``: one reader (``mobile_agent.cli.token_file``),
and each bad file is a one-line error through the real command line, never a traceback and
never the file's contents echoed back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mobile_agent.cli.token_file import MAX_TOKEN_CHARS, read_token_file
from mobile_agent.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

# what a careless file holds; the marker must never come back in an error
LEAK = "s3cret-marker"

BAD_FILES: dict[str, tuple[bytes | None, str]] = {
    # name: (contents, None = a folder where the file should be; the error's telling words)
    "missing": (b"", "No such file"),
    "unreadable": (None, "directory"),
    "empty": (b"", "empty"),
    "blank first line": (b"   \n" + LEAK.encode() + b"\n", "empty"),
    "not utf-8": (b"\xff\xfe" + LEAK.encode() + b"\x80\n", "not UTF-8"),
    "two words": (f"Bearer {LEAK}\n".encode(), "not one token"),
    "non-ascii": (f"{LEAK}-é\n".encode(), "not one token"),
    "too long": (LEAK.encode() * (MAX_TOKEN_CHARS // len(LEAK) + 2), "longer than"),
}

COMMANDS = {
    "serve": ["serve", "--port", "1"],
    "mcp": ["mcp", "--transport", "http", "--port", "1"],
    "schedule": ["schedule", "--url", "http://127.0.0.1:1", "list"],
}


def _bad_file(tmp_path: Path, case: str) -> Path:
    contents, _ = BAD_FILES[case]
    path = tmp_path / "token"
    if case == "missing":
        return path
    if contents is None:
        path.mkdir()  # as root, a mode of 000 still reads: a folder is what cannot be read as a file
    else:
        path.write_bytes(contents)
    return path


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_token_file_is_one_clear_line(tmp_path: Path, command: str, case: str) -> None:
    path = _bad_file(tmp_path, case)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    done = subprocess.run([sys.executable, "-m", "mobile_agent.cli", *COMMANDS[command][:1], "--token-file",
                           str(path), *COMMANDS[command][1:]],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode in (2, 3), (done.returncode, done.stderr)
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"cannot read a token from {path}" in lines[0] and BAD_FILES[case][1] in lines[0], lines[0]
    assert LEAK not in done.stderr + done.stdout


def test_the_token_is_the_first_line_without_spaces_or_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_bytes("\ufefftok-3f9a_Z.~+/=  \r\nsecond line is ignored\n".encode())
    assert read_token_file(path) == "tok-3f9a_Z.~+/="
    path.write_bytes(b"x" * MAX_TOKEN_CHARS)  # the longest accepted, no newline at the end
    assert read_token_file(path) == "x" * MAX_TOKEN_CHARS


def test_the_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_bytes(b"\n")
    with pytest.raises(ConfigError) as caught:
        read_token_file(path)
    assert caught.value.fields["path"] == str(path)
