"""The simulated phone's ``/system/bin/sh``: the small POSIX-ish grammar adb sends.

``run_script(script, phone)`` parses a command line the way Android's mksh does (the
grammar is ``simphone.shell_grammar``) and runs each simple command through
``phone.run(argv)``. Understood: ``;`` / newline / ``&``
(run in order), ``&&``, ``||``, ``|`` (with ``grep``/``head``/``tail``/``wc -l`` as
filters), single and double quotes, backslash escapes, ``$?`` ``$$`` ``$NAME``
``${NAME}``, ``# comments``, ``NAME=value`` assignments, redirections ``>`` ``>>``
``2>`` ``2>&1`` ``>&2`` (to ``/dev/null`` or to a file on ``phone.fs``), and the
builtins ``echo``, ``true``, ``false``, ``:``, ``exit [N]``, ``cd``, ``export``.
Whether any other command exists is the phone's business. Text never reaches a real
shell: quoting is undone here, exactly, and the words go to the phone as a list.

Unsupported syntax (command substitution, here-documents, subshells) and unbalanced
quotes give the phone's answer for a syntax error: a message on stderr and exit code 1,
not an exception, because that is what a device does.

May import: the standard library, ``simphone.shell_grammar`` and ``simphone.types``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from simphone.shell_grammar import (
    NAME_RE,
    AndOr,
    Pipeline,
    ShellSyntaxError,
    SimpleCommand,
    Word,
    parse_script,
)
from simphone.types import CommandResult, PhoneLike

__all__ = ["SHELL_PATH", "ShellOutput", "ShellSyntaxError", "parse_script", "run_script"]

SHELL_PATH = "/system/bin/sh"
STDOUT = 1
STDERR = 2

log = logging.getLogger(__name__)


@dataclass
class ShellOutput:
    """What a script printed, in order: ``(fd, bytes)`` chunks (1 stdout, 2 stderr)."""

    chunks: list[tuple[int, bytes]] = field(default_factory=list)
    exit_code: int = 0
    exited: bool = False  # the script ran `exit` (an interactive shell ends there)

    @property
    def stdout(self) -> bytes:
        return b"".join(data for fd, data in self.chunks if fd == STDOUT)

    @property
    def stderr(self) -> bytes:
        return b"".join(data for fd, data in self.chunks if fd == STDERR)

    def merged(self) -> list[bytes]:
        """Both streams in order, as ``shell:`` v1 and ``exec:`` deliver them."""
        return [data for _fd, data in self.chunks if data]


# --- execution --------------------------------------------------------------------------


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


# runs the rest of a long-running program (``CommandResult.pending``) and answers its result
PendingRunner = Callable[[Callable[[], CommandResult]], CommandResult]


def _run_inline(pending: Callable[[], CommandResult]) -> CommandResult:
    return pending()


_ECHO_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
}


def _echo(args: list[str]) -> bytes:
    newline, escapes = True, True  # mksh's echo interprets backslashes by default
    while args and re.fullmatch(r"-[neE]+", args[0]):
        for flag in args[0][1:]:
            if flag == "n":
                newline = False
            else:
                escapes = flag == "e"
        args = args[1:]
    text = " ".join(args)
    if escapes and "\\" in text:
        out: list[str] = []
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if nxt == "c":
                    return "".join(out).encode()
                if nxt in _ECHO_ESCAPES:
                    out.append(_ECHO_ESCAPES[nxt])
                    i += 2
                    continue
                if nxt == "0":
                    digits = re.match(r"[0-7]{0,3}", text[i + 2 :])
                    assert digits is not None
                    out.append(chr(int(digits.group(0) or "0", 8)))
                    i += 2 + len(digits.group(0))
                    continue
            out.append(ch)
            i += 1
        text = "".join(out)
    return (text + ("\n" if newline else "")).encode()


def _filter(argv: list[str], data: bytes) -> CommandResult | None:
    """The few filters scripts pipe into; None when ``argv`` is not one of them."""
    name, args = argv[0], argv[1:]
    lines = data.splitlines(keepends=True)
    if name == "grep":
        flags = set()
        while args and args[0].startswith("-") and len(args[0]) > 1:
            flags.update(args.pop(0)[1:])
        if not args:
            return CommandResult(stderr=b"usage: grep [-iv] PATTERN\n", exit_code=2)
        pattern = args[0] if "E" in flags or "F" not in flags else re.escape(args[0])
        try:
            regex = re.compile(pattern.encode(), re.IGNORECASE if "i" in flags else 0)
        except re.error as exc:
            return CommandResult(stderr=f"grep: bad regex: {exc}\n".encode(), exit_code=2)
        kept = [ln for ln in lines if bool(regex.search(ln)) != ("v" in flags)]
        return CommandResult(stdout=b"".join(kept), exit_code=0 if kept else 1)
    if name in ("head", "tail"):
        count = 10
        if len(args) >= 2 and args[0] == "-n" and args[1].lstrip("-").isdigit():
            count = abs(int(args[1]))
        elif args and re.fullmatch(r"-n?\d+", args[0]):
            count = int(args[0].lstrip("-n"))
        picked = lines[:count] if name == "head" else lines[-count:] if count else []
        return CommandResult(stdout=b"".join(picked))
    if name == "wc" and args == ["-l"]:
        return CommandResult(stdout=b"%d\n" % data.count(b"\n"))
    return None


@dataclass(frozen=True)
class _FileTarget:
    path: str


class _Interpreter:
    def __init__(self, phone: PhoneLike, env: dict[str, str], *, run_pending: PendingRunner = _run_inline) -> None:
        self.phone = phone
        self.run_pending = run_pending
        self.env = env
        self.status = 0
        self.output = ShellOutput()

    def expand(self, word: Word) -> str:
        out: list[str] = []
        for part in word.parts:
            if isinstance(part, str):
                out.append(part)
            elif part.name == "?":
                out.append(str(self.status))
            else:
                out.append(self.env.get(part.name, ""))
        return "".join(out)

    def expand_words(self, words: Iterable[Word]) -> list[str]:
        argv: list[str] = []
        for word in words:
            value = self.expand(word)
            if word.quoted or value:
                argv.append(value)
        return argv

    def run(self, lists: list[AndOr]) -> None:
        for and_or in lists:
            self.status = self.run_pipeline(and_or.first)
            for op, pipeline in and_or.rest:
                if (op == "&&") == (self.status == 0):
                    self.status = self.run_pipeline(pipeline)

    def run_pipeline(self, pipeline: Pipeline) -> int:
        last = pipeline.commands[-1]
        if len(pipeline.commands) == 1:
            # As mksh: the redirections are opened first; one that fails skips the command.
            table = self.open_redirects(last)
            if table is None:
                return 1
            result = self.run_command(last)
            self.route(table, result)
            return result.exit_code
        data = b""
        result = CommandResult()
        for index, command in enumerate(pipeline.commands):
            argv = self.expand_words(command.words)
            filtered = _filter(argv, data) if index > 0 and argv else None
            result = filtered if filtered is not None else self.run_command(command)
            if result.stderr:
                self.output.chunks.append((STDERR, result.stderr))
            data = result.stdout
        table = self.open_redirects(last)
        if table is None:
            return 1
        self.route(table, CommandResult(stdout=data, exit_code=result.exit_code))
        return result.exit_code

    def run_command(self, command: SimpleCommand) -> CommandResult:
        argv = self.expand_words(command.words)
        for name, value in command.assignments:
            if not argv:
                self.env[name] = self.expand(value)
        if not argv:
            return CommandResult()
        name, args = argv[0], argv[1:]
        if name == "echo":
            return CommandResult(stdout=_echo(args))
        if name in ("true", ":"):
            return CommandResult()
        if name == "false":
            return CommandResult(exit_code=1)
        if name == "exit":
            code = self.status
            if args:
                try:
                    code = int(args[0]) & 0xFF
                except ValueError:
                    return CommandResult(
                        stderr=f"{SHELL_PATH}: exit: {args[0]}: bad number\n".encode(), exit_code=1
                    )
            raise _Exit(code)
        if name == "export":
            for arg in args:
                key, sep, value = arg.partition("=")
                if sep and NAME_RE.fullmatch(key):
                    self.env[key] = value
            return CommandResult()
        if name == "cd":
            return CommandResult()
        try:
            result = self.phone.run(argv)
        except Exception as exc:  # a bug in one app must not take the phone's shell down
            log.exception("phone.run(%r) raised", argv)
            return CommandResult(
                stderr=f"{SHELL_PATH}: {name}: {type(exc).__name__}: {exc}\n".encode(), exit_code=1
            )
        if not isinstance(result, CommandResult):
            raise TypeError(f"phone.run must return CommandResult, got {type(result).__name__}")
        if result.pending is not None:
            rest = self.run_pending(result.pending)
            result = CommandResult(result.stdout + rest.stdout, result.stderr + rest.stderr, rest.exit_code)
        return result

    def open_redirects(self, command: SimpleCommand) -> dict[int, int | _FileTarget | None] | None:
        """Where fds 1 and 2 go (applied left to right): ``STDOUT`` / ``STDERR``, None
        (``/dev/null``) or a file, created (``>`` empties it) now, before the command
        runs. None when a file cannot be created (the message is already on stderr)."""
        table: dict[int, int | _FileTarget | None] = {STDOUT: STDOUT, STDERR: STDERR}
        for redirect in command.redirects:
            if redirect.op == "<" or redirect.fd not in table:
                continue
            target = self.expand(redirect.target)
            if redirect.op == ">&" and target in ("1", "2"):
                table[redirect.fd] = table[int(target)]
            elif (redirect.op == ">&" and target == "-") or target == "/dev/null":
                table[redirect.fd] = None
            else:
                path = target if target.startswith("/") else "/" + target
                if not self.write_file(path, b"", append=redirect.op == ">>"):
                    return None
                table[redirect.fd] = _FileTarget(path)
        return table

    def route(self, table: dict[int, int | _FileTarget | None], result: CommandResult) -> None:
        """Send a command's output where ``open_redirects`` said."""
        streams = ((STDOUT, result.stdout), (STDERR, result.stderr))
        for fd, data in reversed(streams) if result.stderr_first else streams:
            dest = table[fd]
            if isinstance(dest, _FileTarget):
                if data:
                    self.write_file(dest.path, data, append=True)
            elif dest is not None and data:
                self.output.chunks.append((dest, data))

    def write_file(self, path: str, data: bytes, *, append: bool) -> bool:
        """Write to the phone's filesystem; False (and a message on stderr) on failure."""
        fs = getattr(self.phone, "fs", None)
        if fs is None:
            self.output.chunks.append(
                (STDERR, f"{SHELL_PATH}: can't create {path}: Read-only file system\n".encode())
            )
            return False
        try:
            fs.write_file(path, data, append=append)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.output.chunks.append((STDERR, f"{SHELL_PATH}: can't create {path}: {reason}\n".encode()))
            return False
        return True


def default_env() -> dict[str, str]:
    return {
        "0": SHELL_PATH,
        "$": "4242",
        "#": "0",
        "HOME": "/",
        "PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin",
        "EXTERNAL_STORAGE": "/sdcard",
        "ANDROID_DATA": "/data",
        "ANDROID_ROOT": "/system",
        "USER": "shell",
        "SHELL": SHELL_PATH,
    }


def run_script(
    script: str, phone: PhoneLike, *, env: dict[str, str] | None = None, run_pending: PendingRunner = _run_inline
) -> ShellOutput:
    """Run one command line as ``sh -c SCRIPT`` on ``phone``; never raises for script errors.

    A long-running program (``CommandResult.pending``, e.g. screenrecord) is finished by
    ``run_pending`` (the ADB side runs it with the phone's lock released, so other
    connections are served meanwhile); the script then goes on after it."""
    interpreter = _Interpreter(phone, default_env() if env is None else dict(env), run_pending=run_pending)
    try:
        lists = parse_script(script)
    except ShellSyntaxError as exc:
        interpreter.output.chunks.append((STDERR, f"{SHELL_PATH}: {exc.message}\n".encode()))
        interpreter.output.exit_code = 1
        return interpreter.output
    try:
        interpreter.run(lists)
        interpreter.output.exit_code = interpreter.status
    except _Exit as done:
        interpreter.output.exit_code = done.code
        interpreter.output.exited = True
    return interpreter.output
