"""The simulated phone's ``/system/bin/sh``: the small POSIX-ish grammar adb sends.

``run_script(script, phone)`` parses a command line the way Android's mksh does and runs
each simple command through ``phone.run(argv)``. Understood: ``;`` / newline / ``&``
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

May import: the standard library and ``simphone.types``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from simphone.types import CommandResult, PhoneLike

__all__ = ["SHELL_PATH", "ShellOutput", "ShellSyntaxError", "parse_script", "run_script"]

SHELL_PATH = "/system/bin/sh"
STDOUT = 1
STDERR = 2

log = logging.getLogger(__name__)


class ShellSyntaxError(ValueError):
    """A command line the shell cannot parse; ``.message`` is mksh-like text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


# --- words ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Var:
    name: str


@dataclass
class _Word:
    parts: list[str | _Var] = field(default_factory=list)
    quoted: bool = False

    def add(self, text: str) -> None:
        if self.parts and isinstance(self.parts[-1], str):
            self.parts[-1] += text
        else:
            self.parts.append(text)

    @property
    def empty(self) -> bool:
        return not self.parts and not self.quoted

    def literal(self) -> str | None:
        """The word's text if it has no expansion in it."""
        if all(isinstance(p, str) for p in self.parts):
            return "".join(p for p in self.parts if isinstance(p, str))
        return None


@dataclass
class _Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&"
    target: _Word


@dataclass
class _Command:
    assignments: list[tuple[str, _Word]] = field(default_factory=list)
    words: list[_Word] = field(default_factory=list)
    redirects: list[_Redirect] = field(default_factory=list)


@dataclass
class _Pipeline:
    commands: list[_Command]


@dataclass
class _AndOr:
    first: _Pipeline
    rest: list[tuple[str, _Pipeline]]  # ("&&" | "||", pipeline)


_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_SPECIAL_VARS = "?$#0!-"
_OPERATOR_CHARS = ";&|<>()\n"


class _Lexer:
    """Splits a script into words and operators, undoing quotes exactly like mksh."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def tokens(self) -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = []
        word = _Word()
        at_word_start = True

        def flush() -> None:
            nonlocal word, at_word_start
            if not word.empty:
                out.append(("WORD", word))
            word = _Word()
            at_word_start = True

        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t":
                flush()
                self.pos += 1
            elif ch == "#" and at_word_start and word.empty:
                while self.pos < len(self.text) and self.text[self.pos] != "\n":
                    self.pos += 1
            elif ch == "\\":
                nxt = self._peek(1)
                if nxt == "":
                    word.add("\\")  # a trailing backslash stays literal
                    self.pos += 1
                elif nxt == "\n":
                    self.pos += 2  # line continuation
                else:
                    word.add(nxt)
                    word.quoted = True
                    self.pos += 2
                at_word_start = False
            elif ch == "'":
                end = self.text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                word.add(self.text[self.pos + 1 : end])
                word.quoted = True
                self.pos = end + 1
                at_word_start = False
            elif ch == '"':
                self._double_quoted(word)
                at_word_start = False
            elif ch == "$":
                self._dollar(word)
                at_word_start = False
            elif ch == "`":
                raise ShellSyntaxError("syntax error: command substitution is not supported")
            elif ch in "<>":
                fd = None
                literal = word.literal()
                if not word.quoted and literal is not None and literal.isdigit() and len(literal) == 1:
                    fd = int(literal)
                    word = _Word()
                flush()
                out.append(("REDIR", self._redirect(fd)))
            elif ch in _OPERATOR_CHARS:
                flush()
                two = self.text[self.pos : self.pos + 2]
                if two in ("&&", "||", ";;"):
                    if two == ";;":
                        raise ShellSyntaxError("syntax error: ';;' unexpected")
                    out.append(("OP", two))
                    self.pos += 2
                elif ch in "()":
                    raise ShellSyntaxError(f"syntax error: '{ch}' unexpected")
                else:
                    out.append(("OP", ch))
                    self.pos += 1
            else:
                word.add(ch)
                self.pos += 1
                at_word_start = False
        flush()
        return out

    def _double_quoted(self, word: _Word) -> None:
        self.pos += 1
        word.quoted = True
        while True:
            if self.pos >= len(self.text):
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            ch = self.text[self.pos]
            if ch == '"':
                self.pos += 1
                return
            if ch == "\\":
                nxt = self._peek(1)
                if nxt in ("$", "`", '"', "\\"):
                    word.add(nxt)
                    self.pos += 2
                elif nxt == "\n":
                    self.pos += 2
                else:
                    word.add("\\")
                    self.pos += 1
            elif ch == "$":
                self._dollar(word)
            elif ch == "`":
                raise ShellSyntaxError("syntax error: command substitution is not supported")
            else:
                word.add(ch)
                self.pos += 1

    def _dollar(self, word: _Word) -> None:
        nxt = self._peek(1)
        if nxt and nxt in _SPECIAL_VARS:
            word.parts.append(_Var(nxt))
            self.pos += 2
        elif nxt == "(":
            raise ShellSyntaxError("syntax error: command substitution is not supported")
        elif nxt == "{":
            end = self.text.find("}", self.pos + 2)
            if end < 0:
                raise ShellSyntaxError("syntax error: missing '}'")
            name = self.text[self.pos + 2 : end]
            if not (_NAME_RE.fullmatch(name) or (len(name) == 1 and name in _SPECIAL_VARS)):
                raise ShellSyntaxError(f"${{{name}}}: bad substitution")
            word.parts.append(_Var(name))
            self.pos = end + 1
        else:
            match = _NAME_RE.match(self.text, self.pos + 1)
            if match:
                word.parts.append(_Var(match.group(0)))
                self.pos = match.end()
            else:
                word.add("$")
                self.pos += 1

    def _redirect(self, fd: int | None) -> _Redirect:
        ch = self.text[self.pos]
        if ch == "<":
            if self._peek(1) == "<":
                raise ShellSyntaxError("syntax error: here-documents are not supported")
            self.pos += 1
            op, default_fd = "<", 0
        elif self._peek(1) == ">":
            self.pos += 2
            op, default_fd = ">>", 1
        elif self._peek(1) == "&":
            self.pos += 2
            op, default_fd = ">&", 1
        else:
            self.pos += 1
            if self._peek() == "|":  # `>|` (clobber) is just `>` here
                self.pos += 1
            op, default_fd = ">", 1
        while self._peek() in (" ", "\t") and self._peek():
            self.pos += 1
        target = _Word()
        # The target is the next word; lex it with a sub-lexer up to the next blank/operator.
        start = self.pos
        depth_quote = ""
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if depth_quote:
                if c == depth_quote:
                    depth_quote = ""
                elif c == "\\" and depth_quote == '"':
                    self.pos += 1
            elif c in "'\"":
                depth_quote = c
            elif c == "\\":
                self.pos += 1
            elif c in " \t" or c in _OPERATOR_CHARS:
                break
            self.pos += 1
        raw = self.text[start : self.pos]
        if not raw:
            raise ShellSyntaxError("syntax error: newline unexpected")
        sub = _Lexer(raw).tokens()
        if len(sub) != 1 or sub[0][0] != "WORD":
            raise ShellSyntaxError(f"syntax error: bad redirection target {raw!r}")
        target = sub[0][1]
        assert isinstance(target, _Word)
        return _Redirect(fd=default_fd if fd is None else fd, op=op, target=target)


def parse_script(text: str) -> list[_AndOr]:
    """Parse a command line into and-or lists; raises ``ShellSyntaxError``."""
    tokens = _Lexer(text).tokens()
    lists: list[_AndOr] = []
    i = 0

    def parse_command() -> _Command:
        nonlocal i
        command = _Command()
        while i < len(tokens) and tokens[i][0] in ("WORD", "REDIR"):
            kind, value = tokens[i]
            if kind == "REDIR":
                assert isinstance(value, _Redirect)
                command.redirects.append(value)
            else:
                assert isinstance(value, _Word)
                first = value.parts[0] if value.parts else None
                match = _ASSIGN_RE.match(first) if isinstance(first, str) and not command.words else None
                if match:
                    rest = _Word(parts=[first[match.end() :], *value.parts[1:]], quoted=True)
                    command.assignments.append((match.group(1), rest))
                else:
                    command.words.append(value)
            i += 1
        if not command.words and not command.assignments and not command.redirects:
            unexpected = tokens[i][1] if i < len(tokens) else "newline"
            raise ShellSyntaxError(f"syntax error: '{unexpected}' unexpected")
        return command

    def parse_pipeline() -> _Pipeline:
        nonlocal i
        commands = [parse_command()]
        while i < len(tokens) and tokens[i] == ("OP", "|"):
            i += 1
            commands.append(parse_command())
        return _Pipeline(commands)

    while i < len(tokens):
        if tokens[i][0] == "OP" and tokens[i][1] in (";", "\n", "&"):
            if tokens[i][1] != "\n" and (
                not lists or (i > 0 and tokens[i - 1][0] == "OP" and tokens[i - 1][1] != "\n")
            ):
                raise ShellSyntaxError(f"syntax error: '{tokens[i][1]}' unexpected")
            i += 1
            continue
        first = parse_pipeline()
        rest: list[tuple[str, _Pipeline]] = []
        while i < len(tokens) and tokens[i][0] == "OP" and tokens[i][1] in ("&&", "||"):
            op = str(tokens[i][1])
            i += 1
            while i < len(tokens) and tokens[i] == ("OP", "\n"):
                i += 1
            rest.append((op, parse_pipeline()))
        lists.append(_AndOr(first, rest))
        if i < len(tokens) and not (tokens[i][0] == "OP" and tokens[i][1] in (";", "\n", "&")):
            raise ShellSyntaxError(f"syntax error: '{tokens[i][1]}' unexpected")
    return lists


# --- execution --------------------------------------------------------------------------


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


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
    def __init__(self, phone: PhoneLike, env: dict[str, str]) -> None:
        self.phone = phone
        self.env = env
        self.status = 0
        self.output = ShellOutput()

    def expand(self, word: _Word) -> str:
        out: list[str] = []
        for part in word.parts:
            if isinstance(part, str):
                out.append(part)
            elif part.name == "?":
                out.append(str(self.status))
            else:
                out.append(self.env.get(part.name, ""))
        return "".join(out)

    def expand_words(self, words: Iterable[_Word]) -> list[str]:
        argv: list[str] = []
        for word in words:
            value = self.expand(word)
            if word.quoted or value:
                argv.append(value)
        return argv

    def run(self, lists: list[_AndOr]) -> None:
        for and_or in lists:
            self.status = self.run_pipeline(and_or.first)
            for op, pipeline in and_or.rest:
                if (op == "&&") == (self.status == 0):
                    self.status = self.run_pipeline(pipeline)

    def run_pipeline(self, pipeline: _Pipeline) -> int:
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

    def run_command(self, command: _Command) -> CommandResult:
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
                if sep and _NAME_RE.fullmatch(key):
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
        return result

    def open_redirects(self, command: _Command) -> dict[int, int | _FileTarget | None] | None:
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
        for fd, data in ((STDOUT, result.stdout), (STDERR, result.stderr)):
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


def run_script(script: str, phone: PhoneLike, *, env: dict[str, str] | None = None) -> ShellOutput:
    """Run one command line as ``sh -c SCRIPT`` on ``phone``; never raises for script errors."""
    interpreter = _Interpreter(phone, default_env() if env is None else dict(env))
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
