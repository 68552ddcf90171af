"""What the README and docs/*.md show a user can be typed as written: every ``mobile-agent``
and ``simphone`` command line parses with the real command line (its subcommands and options exist), every
TOML snippet loads through the settings loader (or, for a ``[safety]`` policy, through
``run --policy``'s reader), every YAML flow loads, Python snippets compile and import what
exists, JSON parses, the cheap commands run, and the README links every docs page.
No adb server and no service: the commands that need a phone are checked by
tests/device/test_readme_path.py."""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mobile_agent import __version__
from mobile_agent.cli import _split_adb, build_parser
from mobile_agent.cli.run import read_policy
from mobile_agent.errors import ConfigError
from mobile_agent.settings import load_settings
from mobile_agent.testing.flows import load_flow, parse_flow
from simphone.cli import build_parser as simphone_parser

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS, ROOT / "eval" / "mobile_eval" / "README.md"]
SYNOPSIS = ("[", "…", "...", "|", "<")  # a usage line (optional parts, placeholders), not a command


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block, fences taken line by line in order."""
    blocks: list[tuple[str, str]] = []
    language: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        if line.startswith("```"):
            if language is None:
                language, body = line[3:].strip(), []
            else:
                blocks.append((language, "\n".join(body) + "\n"))
                language = None
        elif language is not None:
            body.append(line)
    return blocks


def _commands() -> list[tuple[str, str]]:
    """(page, command) for each ``mobile-agent`` line of a shell block and each inline
    ``mobile-agent … --option`` in the prose."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for language, body in _blocks(text):
            if language not in ("bash", "sh", "shell", "console", ""):
                continue
            for line in body.replace("\\\n", " ").splitlines():
                line = line.split("  #")[0].strip()
                for program in ("mobile-agent ", "simphone "):
                    at = line.find(program)
                    if at == 0 or (at > 0 and line[at - 1] == " "):
                        found.append((page.name, line[at:].removesuffix("&").strip()))
        prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        found += [(page.name, m.group(1)) for m in re.finditer(r"`((?:mobile-agent|simphone) [^`]*\s-[^`]*)`", prose)]
    return [(page, command) for page, command in found if not any(mark in command for mark in SYNOPSIS)]


COMMANDS = _commands()


@functools.cache
def _parser(program: str) -> argparse.ArgumentParser:
    return build_parser() if program == "mobile-agent" else simphone_parser()


def test_the_docs_show_commands() -> None:
    pages = {page for page, _ in COMMANDS}
    assert {"README.md", "server.md", "testing.md", "farm.md", "local-serving.md"} <= pages, pages
    assert len(COMMANDS) > 40, COMMANDS


@pytest.mark.parametrize(("page", "command"), COMMANDS, ids=[f"{p}:{c[:60]}" for p, c in COMMANDS])
def test_every_command_shown_parses(page: str, command: str) -> None:
    program, *words = shlex.split(command)
    argv, _ = _split_adb(words) if program == "mobile-agent" else (words, None)
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            _parser(program).parse_args(argv)
    except SystemExit as exc:  # --help / --version exit 0; a usage error exits 2
        assert exc.code == 0, f"{page}: `{command}`: {said.getvalue().strip()}"


def _toml_blocks() -> list[tuple[str, str]]:
    return [(page.name, body) for page in PAGES
            for language, body in _blocks(page.read_text(encoding="utf-8")) if language == "toml"]


def test_every_toml_snippet_loads(tmp_path: Path) -> None:
    blocks = _toml_blocks()
    assert {"README.md", "security.md", "person.md"} <= {page for page, _ in blocks}
    for i, (page, body) in enumerate(blocks):
        path = tmp_path / f"{i}.toml"
        path.write_text(body, encoding="utf-8")
        try:
            if body.lstrip().startswith("[safety]"):  # a --policy file (docs/person.md)
                load_settings(overrides=read_policy(path))
            else:
                load_settings(path)
        except ConfigError as exc:
            raise AssertionError(f"{page}'s TOML snippet #{i}: {exc}") from exc


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    return subprocess.run([sys.executable, "-m", "mobile_agent.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_cheap_commands_run_as_written(tmp_path: Path) -> None:
    version = _cli("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"mobile-agent {__version__}"
    gc = _cli("gc", "--dry-run", cwd=tmp_path)  # README "Scaling out": where no service ran
    assert gc.returncode == 0 and "no database" in gc.stdout + gc.stderr, gc
    assert list(tmp_path.iterdir()) == []  # a dry run creates nothing
    for command in (["test", "--help"], ["gc", "--help"], ["run", "--help"]):
        done = _cli(*command, cwd=tmp_path)
        assert done.returncode == 0 and "usage: mobile-agent" in done.stdout, (command, done.stderr)


def test_the_readme_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in DOCS if f"(docs/{p.name}" not in readme]
    assert not missing, f"README.md links no {missing}"


def _blocks_of(language: str) -> list[tuple[str, str, str]]:
    """(page, the line before the block, body) of each ``language`` block."""
    found: list[tuple[str, str, str]] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(rf"^```{language}\n(.*?)^```$", text, re.S | re.M):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            found.append((page.name, before, match.group(1)))
    return found


def test_every_flow_shown_loads() -> None:
    """A YAML block is a flow (docs/testing.md): it loads as `mobile-agent test` loads it, and
    one introduced by its file's name is that file; every flow a command names exists."""
    blocks = _blocks_of("yaml")
    assert blocks
    for page, before, body in blocks:
        flow = parse_flow(body)
        assert flow.steps, (page, body)
        named = re.search(r"`(tests/flows/[\w/.-]+\.yaml)`", before)
        if named:
            assert (ROOT / named.group(1)).read_text(encoding="utf-8") == body, f"{page}: {named.group(1)} differs"
    for page, command in COMMANDS:
        if command.startswith("mobile-agent test "):
            for word in shlex.split(command):
                if word.endswith(".yaml"):
                    assert load_flow(ROOT / word).steps, f"{page}: {word}"


def test_every_python_and_json_snippet_is_valid() -> None:
    """Python blocks compile and what they import from the project exists; JSON blocks parse."""
    python = _blocks_of("python")
    assert python
    for page, _, body in python:
        tree = ast.parse(body, filename=page)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mobile_agent":
                module = importlib.import_module(node.module)
                missing = [a.name for a in node.names if not hasattr(module, a.name)]
                assert not missing, f"{page}: {node.module} has no {missing}"
    for page, _, body in _blocks_of("json"):
        try:
            json.loads(body)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{page}: a JSON block does not parse: {exc}") from exc


def test_every_make_target_shown_exists() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    shown = {m.group(1) for page in PAGES
             for m in re.finditer(r"(?:^|`)make ([\w-]+)", page.read_text(encoding="utf-8"), re.M)}
    assert {"demo", "test"} <= shown, shown
    assert shown <= targets, f"the docs show make {sorted(shown - targets)}, which the Makefile lacks"
