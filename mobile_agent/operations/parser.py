"""Turn what a model printed into a validated action.

``parse_with(registry, reply)`` (``parse_action(reply)`` with every operation, in the
registry module) accepts a whole "Observation / Thought / Action" reply or just
the action text, and is lenient about what real models print:

- any case, extra spaces, ``_``/``-`` or CamelCase in the name, articles and "on"
  ("Click the text", "click_text", "ClickText", "tap on text" are the same);
- markdown: bold, headings, list bullets, backticks and code fences;
- quotes around arguments (``"..."``, ``'...'``, ``“...”``, ``「...」``), full-width
  parentheses ``（）`` and commas ``，``; keyword arguments (``text="Wi-Fi"``);
- a trailing period or semicolon after the action (``stop.``);
- no parentheses at all (``click text Settings``), or a JSON object
  (``{"action": "click_text", "params": {"text": "Settings"}}``);
- zero-parameter operations ignore what is written in their parentheses
  (``Stop (task done)``).

Several ``Action:`` markers: **the last one counts** (a model that corrects itself
writes its final choice last); inside that section, the first line that names an
operation is the action. Without any marker, the first line naming an operation is;
when the reply has other sections (Observation, Thought) but no ``Action:``, only its
last line is tried.

What cannot be parsed raises ``OperationParseError`` (no action at all),
``UnknownOperationError`` (names no operation) or ``InvalidParametersError`` (bad
parameters), each with a message written for the model. The parser never raises
anything else on any string.

May import: pydantic, the standard library, mobile_agent.errors; the registry's types
only (the registry imports this module to check its cards' examples).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from mobile_agent.errors import InvalidParametersError, OperationParseError, UnknownOperationError

if TYPE_CHECKING:
    from mobile_agent.operations.registry import OperationCard, OperationRegistry

__all__ = ["NamedApp", "ParsedAction", "TypedText", "extract_action_section", "parse_with", "reply_sections", "split_top_level", "strip_quotes"]

_SECTION_NAMES = "observation|thought|thoughts|action|reflection|summary|memory|plan|reason|reasoning"
_HEADER_RE = re.compile(
    rf"^[ \t>#*_`\-]*(?P<name>{_SECTION_NAMES})[ \t*_`]*(?:[:：][ \t*_`]*|$)",
    re.IGNORECASE | re.MULTILINE,
)
_FENCE_RE = re.compile(r"^\s*(```|~~~)[\w+-]*\s*$")
_BULLET_RE = re.compile(r"^(?:[-*•>]+|\d{1,2}[.)])\s+")
_KEYWORD_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z_ ]{0,20}?)\s*[=:]\s*(.*)$", re.DOTALL)
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "「": "」", "『": "』", "«": "»", "„": "“"}
_OPEN_PARENS = "(（"
_CLOSE_PARENS = ")）"
_TRAILING_PUNCT = " \t.。;；!！,，"
_MAX_REPLY_CHARS = 100_000
_MAX_NAME_WORDS = 4


class TypedText(BaseModel):
    """The parameters of an operation that types ``text`` on the phone (Type). Every such
    operation declares its parameters as a subclass: ``ParsedAction.typed_text`` reads it, and
    the run's secret mask arms before an action that types a ``{{secret:name}}``."""

    text: str


class NamedApp(BaseModel):
    """The parameters of an operation that opens an app named by ``app`` (Open App: a name
    as shown under its icon, or an app id). ``ParsedAction.opened_app`` reads it: a script's
    app ids say which platform it is written for (``server.app_platforms``)."""

    app: str


@dataclass(frozen=True)
class ParsedAction:
    """A validated action: the operation's ``name``, its ``params`` model, the ``raw``
    line it came from, and ``text``, the canonical form for histories."""

    name: str
    params: BaseModel
    raw: str
    text: str
    # the model's own word that this operation is sensitive (AutoGLM's Tap message): ask first
    sensitive: str | None = None

    @property
    def typed_text(self) -> str | None:
        """The text this action types on the phone (secrets still as ``{{secret:name}}``), or None
        when it types nothing."""
        return self.params.text if isinstance(self.params, TypedText) else None

    @property
    def opened_app(self) -> str | None:
        """The app this action opens, as written (a name or an app id), or None."""
        return self.params.app if isinstance(self.params, NamedApp) else None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "params": self.params.model_dump(), "raw": self.raw, "text": self.text}


def reply_sections(reply: str) -> list[tuple[str, str]]:
    """The reply's marked sections in order, as (name, text): names lower-case, "thoughts"
    as "thought"; a section runs to the next marker. The one list of section names that
    the parser and the planner's reply reading share."""
    headers = list(_HEADER_RE.finditer(reply))
    sections = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(reply)
        name = header.group("name").lower()
        sections.append(("thought" if name == "thoughts" else name, reply[header.end() : end].strip()))
    return sections


def extract_action_section(reply: str) -> str | None:
    """The text after the last ``Action:`` marker up to the next section, or None."""
    actions = [text for name, text in reply_sections(reply) if name == "action"]
    return actions[-1] if actions else None


def parse_with(registry: OperationRegistry, reply: str) -> ParsedAction:
    if not isinstance(reply, str):
        raise OperationParseError(
            f"Your reply must be text, got {type(reply).__name__}.", reply=repr(reply)[:200]
        )
    reply = reply[:_MAX_REPLY_CHARS]
    section = extract_action_section(reply)
    has_headers = _HEADER_RE.search(reply) is not None
    if section is not None:
        body = section
    elif has_headers:
        # Sections but no "Action:": the model may still have ended with the action.
        tail = _candidate_lines(reply)[-1:]
        body = tail[0] if tail and _parse_line(registry, tail[0]) is not None else ""
    else:
        body = reply
    lines = _candidate_lines(body)
    if not lines:
        raise OperationParseError(_no_action_message(registry), reply=reply[:500])

    joined = "\n".join(lines)
    if joined.startswith("{"):
        parsed = _parse_json(registry, joined)
        if parsed is not None:
            return parsed
    for line in lines:
        parsed = _parse_line(registry, line)
        if parsed is not None:
            return parsed
    if section is None and len(lines) > 1:
        raise OperationParseError(_no_action_message(registry), reply=reply[:500])
    first = _clean_line(lines[0])
    raise UnknownOperationError(
        f"Your action {_shorten(first)!r} is not one of: {registry.syntax_list()}. "
        "Write exactly one of them after 'Action:'.",
        operation=_shorten(first),
    )


# --- lines ------------------------------------------------------------------------


def _candidate_lines(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if _FENCE_RE.match(line):
            continue
        line = line.strip()
        if line.startswith("```") and line.endswith("```") and len(line) > 6:
            line = line[3:-3]
        cleaned = _clean_line(line)
        if cleaned:
            out.append(cleaned)
    return out


def _clean_line(line: str) -> str:
    prev = None
    while prev != line:
        prev = line
        line = line.strip().strip("*`").strip()
        line = _BULLET_RE.sub("", line)
        line = line.rstrip(_TRAILING_PUNCT)
    return line


def _parse_line(registry: OperationRegistry, line: str) -> ParsedAction | None:
    open_at = min((i for i in (line.find(p) for p in _OPEN_PARENS) if i >= 0), default=-1)
    if open_at >= 0:
        head = line[:open_at].strip().rstrip(":：").strip().strip("`'\"*").strip()
        card = registry.find(head) if head else None
        if card is None:
            return None
        close_at = _matching_paren(line, open_at)
        rest = line[close_at + 1 :] if close_at >= 0 else ""
        if rest and not any(p in rest for p in _OPEN_PARENS) and any(p in rest for p in _CLOSE_PARENS):
            # "type (:))": a closing paren inside the text; the last one closes the action.
            close_at = max(line.rfind(")"), line.rfind("）"))
        args = line[open_at + 1 : close_at] if close_at >= 0 else line[open_at + 1 :]
        return _build(card, args, line)
    words = list(re.finditer(r"\S+", line))
    for count in range(min(_MAX_NAME_WORDS, len(words)), 0, -1):
        head = line[: words[count - 1].end()].rstrip(":：")
        card = registry.find(head)
        if card is not None:
            args = line[words[count - 1].end() :].strip().lstrip(":：=-").strip()
            return _build(card, args, line)
    return None


def _matching_paren(line: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(line)):
        ch = line[i]
        if ch in _OPEN_PARENS:
            depth += 1
        elif ch in _CLOSE_PARENS:
            depth -= 1
            if depth == 0:
                return i
    # Unbalanced (an emoticon inside the text): fall back to the last closing paren.
    return max(line.rfind(")"), line.rfind("）"))


def _build(card: OperationCard, args: str, raw: str) -> ParsedAction:
    values: dict[str, Any]
    fields = card.fields
    args = args.strip()
    if not fields:
        values = {}
    else:
        keywords = _keyword_args(args, fields)
        if keywords is not None:
            values = keywords
        elif card.split_args is not None:
            values = card.split_args(args)
        else:
            values = {fields[0]: strip_quotes(args)} if args else {}
    return _validate(card, values, raw)


def _validate(card: OperationCard, values: dict[str, Any], raw: str) -> ParsedAction:
    missing = [f for f in card.required_fields if values.get(f) in (None, "")]
    if missing:
        raise InvalidParametersError(
            f"Your action {_shorten(raw)!r} is missing {', '.join(m.capitalize() for m in missing)}: "
            f"write it as {card.syntax!r}, e.g. {card.examples[0]!r}."
            if card.examples
            else f"Your action {_shorten(raw)!r} is missing {', '.join(missing)}: write it as {card.syntax!r}.",
            operation=card.name,
            missing=missing,
        )
    try:
        params = card.params_model.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(_describe_error(err) for err in exc.errors(include_url=False))
        raise InvalidParametersError(
            f"Your action {_shorten(raw)!r} has invalid parameters for {card.syntax!r}: {problems}.",
            operation=card.name,
            errors=[{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors(include_url=False)],
        ) from None
    return ParsedAction(name=card.name, params=params, raw=raw, text=card.render(params))


def _describe_error(err: Any) -> str:
    loc = ".".join(str(p) for p in err.get("loc", ())) or "value"
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    return f"{loc.capitalize()}: {msg}"


def _keyword_args(args: str, fields: tuple[str, ...]) -> dict[str, Any] | None:
    parts = split_top_level(args)
    if not parts:
        return None
    out: dict[str, Any] = {}
    lowered = {f.lower(): f for f in fields}
    for part in parts:
        m = _KEYWORD_RE.match(part)
        if m is None:
            return None
        key = lowered.get(m.group(1).strip().lower().replace(" ", "_"))
        if key is None:
            return None
        out[key] = strip_quotes(m.group(2))
    return out


def _parse_json(registry: OperationRegistry, text: str) -> ParsedAction | None:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    name = next((obj[k] for k in ("action", "name", "operation", "tool") if isinstance(obj.get(k), str)), None)
    if name is None:
        return None
    card = registry.find(name)
    if card is None:
        raise UnknownOperationError(
            f"Your action {_shorten(name)!r} is not one of: {registry.syntax_list()}.", operation=_shorten(name)
        )
    params = next((obj[k] for k in ("params", "parameters", "args", "arguments") if k in obj), None)
    if params is None:
        params = {k: v for k, v in obj.items() if k not in ("action", "name", "operation", "tool")}
    if isinstance(params, str):
        return _build(card, params, text)
    if not isinstance(params, dict):
        raise InvalidParametersError(
            f"Your action {_shorten(text)!r} has parameters that are not an object.", operation=card.name
        )
    if not card.fields:
        params = {}
    return _validate(card, {str(k).lower(): v for k, v in params.items()}, text)


# --- small text helpers ------------------------------------------------------------


def split_top_level(text: str) -> list[str]:
    """Split on commas (ASCII or full-width) that are not inside a quoted part.

    A quote opens a quoted part only at the start of a part; a quote that never
    closes is taken literally (the text is split on every comma)."""
    parts: list[str] = []
    buf: list[str] = []
    closing: str | None = None
    for ch in text:
        if closing is not None:
            buf.append(ch)
            if ch == closing:
                closing = None
            continue
        if ch in ('"', "“", "「", "『", "«") and not "".join(buf).strip():
            closing = _QUOTES[ch]
            buf.append(ch)
        elif ch in ",，":
            parts.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    if closing is not None:
        parts = re.split(r"[,，]", text)
    else:
        parts.append("".join(buf))
    parts = [p.strip() for p in parts]
    return [p for p in parts if p]


def strip_quotes(value: Any) -> Any:
    """``"Settings"`` → ``Settings`` (one matching pair of quotes or backticks).

    What the quotes hold is kept as is: ``Type ("  indented")`` types the spaces; the
    parameter models that want stripped text (``str_strip_whitespace``) strip it."""
    if not isinstance(value, str):
        return value
    value = value.strip()
    if len(value) >= 2 and _QUOTES.get(value[0]) == value[-1]:
        return value[1:-1]
    return value


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _no_action_message(registry: OperationRegistry) -> str:
    return (
        "Your reply has no action. End it with a line 'Action: <operation>' using one of: "
        f"{registry.syntax_list()}."
    )
