"""The grammar of the simulated phone's shell: words, quotes, operators, redirections.

``parse_script(text)`` splits a command line into and-or lists of pipelines of simple
commands the way Android's mksh does, undoing quotes and backslashes exactly; what a
word expands to (``$?``, ``$NAME``) is left to the interpreter in ``simphone.shell``.
Unsupported syntax (command substitution, here-documents, subshells) and unbalanced
quotes raise ``ShellSyntaxError`` with mksh-like text.

May import: the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "NAME_RE",
    "AndOr",
    "Pipeline",
    "Redirect",
    "ShellSyntaxError",
    "SimpleCommand",
    "Var",
    "Word",
    "parse_script",
]


class ShellSyntaxError(ValueError):
    """A command line the shell cannot parse; ``.message`` is mksh-like text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- words ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Var:
    name: str


@dataclass
class Word:
    parts: list[str | Var] = field(default_factory=list)
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
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&"
    target: Word


@dataclass
class SimpleCommand:
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[SimpleCommand]


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]]  # ("&&" | "||", pipeline)


NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
        word = Word()
        at_word_start = True

        def flush() -> None:
            nonlocal word, at_word_start
            if not word.empty:
                out.append(("WORD", word))
            word = Word()
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
                    word = Word()
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

    def _double_quoted(self, word: Word) -> None:
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

    def _dollar(self, word: Word) -> None:
        nxt = self._peek(1)
        if nxt and nxt in _SPECIAL_VARS:
            word.parts.append(Var(nxt))
            self.pos += 2
        elif nxt == "(":
            raise ShellSyntaxError("syntax error: command substitution is not supported")
        elif nxt == "{":
            end = self.text.find("}", self.pos + 2)
            if end < 0:
                raise ShellSyntaxError("syntax error: missing '}'")
            name = self.text[self.pos + 2 : end]
            if not (NAME_RE.fullmatch(name) or (len(name) == 1 and name in _SPECIAL_VARS)):
                raise ShellSyntaxError(f"${{{name}}}: bad substitution")
            word.parts.append(Var(name))
            self.pos = end + 1
        else:
            match = NAME_RE.match(self.text, self.pos + 1)
            if match:
                word.parts.append(Var(match.group(0)))
                self.pos = match.end()
            else:
                word.add("$")
                self.pos += 1

    def _redirect(self, fd: int | None) -> Redirect:
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
        target = Word()
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
        assert isinstance(target, Word)
        return Redirect(fd=default_fd if fd is None else fd, op=op, target=target)


def parse_script(text: str) -> list[AndOr]:
    """Parse a command line into and-or lists; raises ``ShellSyntaxError``."""
    tokens = _Lexer(text).tokens()
    lists: list[AndOr] = []
    i = 0

    def parse_command() -> SimpleCommand:
        nonlocal i
        command = SimpleCommand()
        while i < len(tokens) and tokens[i][0] in ("WORD", "REDIR"):
            kind, value = tokens[i]
            if kind == "REDIR":
                assert isinstance(value, Redirect)
                command.redirects.append(value)
            else:
                assert isinstance(value, Word)
                first = value.parts[0] if value.parts else None
                match = _ASSIGN_RE.match(first) if isinstance(first, str) and not command.words else None
                if match:
                    rest = Word(parts=[first[match.end() :], *value.parts[1:]], quoted=True)
                    command.assignments.append((match.group(1), rest))
                else:
                    command.words.append(value)
            i += 1
        if not command.words and not command.assignments and not command.redirects:
            unexpected = tokens[i][1] if i < len(tokens) else "newline"
            raise ShellSyntaxError(f"syntax error: '{unexpected}' unexpected")
        return command

    def parse_pipeline() -> Pipeline:
        nonlocal i
        commands = [parse_command()]
        while i < len(tokens) and tokens[i] == ("OP", "|"):
            i += 1
            commands.append(parse_command())
        return Pipeline(commands)

    while i < len(tokens):
        if tokens[i][0] == "OP" and tokens[i][1] in (";", "\n", "&"):
            if tokens[i][1] != "\n" and (
                not lists or (i > 0 and tokens[i - 1][0] == "OP" and tokens[i - 1][1] != "\n")
            ):
                raise ShellSyntaxError(f"syntax error: '{tokens[i][1]}' unexpected")
            i += 1
            continue
        first = parse_pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while i < len(tokens) and tokens[i][0] == "OP" and tokens[i][1] in ("&&", "||"):
            op = str(tokens[i][1])
            i += 1
            while i < len(tokens) and tokens[i] == ("OP", "\n"):
                i += 1
            rest.append((op, parse_pipeline()))
        lists.append(AndOr(first, rest))
        if i < len(tokens) and not (tokens[i][0] == "OP" and tokens[i][1] in (";", "\n", "&")):
            raise ShellSyntaxError(f"syntax error: '{tokens[i][1]}' unexpected")
    return lists
