"""Reading the model's text answers: plan replies, candidate numbers, verdicts.

Nothing here raises on any string: a reply that says nothing usable becomes empty
fields (plan), None (candidate) or ``done=False`` (verdict).

May import: the standard library and ``mobile_agent.operations`` (the action section).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from mobile_agent.operations.parser import extract_action_section, reply_sections

__all__ = ["parse_choice", "parse_verdict", "split_plan_reply"]


def split_plan_reply(raw: str) -> tuple[str, str, str]:
    """(observation, thought, action_text). The first Observation and Thought sections
    count; the action is the last ``Action:`` section, or the whole reply without one."""
    found: dict[str, str] = {}
    for name, text in reply_sections(raw):  # the parser's section names: a Reflection ends a Thought
        found.setdefault(name, text.strip("*").strip())
    action = extract_action_section(raw)
    if action is None:
        action = raw.strip()
    return found.get("observation", ""), found.get("thought", ""), action


def parse_choice(reply: str, valid: Collection[int]) -> int | None:
    """The first number in ``reply`` that is one of ``valid``, or None."""
    for match in re.finditer(r"(?<![\d.])(\d{1,3})(?![\d.]\d)", reply):
        value = int(match.group(1))
        if value in valid:
            return value
    return None


_NEGATIVE = re.compile(
    r"\b(not\s+(yet\s+)?(done|complete|completed|finished)|incomplete|no|false|unfinished)\b", re.I
)
_POSITIVE = re.compile(r"\b(done|complete|completed|finished|yes|true)\b", re.I)
_VERDICT_RE = re.compile(r"^[ \t*_#>`-]*verdict[ \t*_`]*[:：](?P<value>.*)$", re.I | re.M)
_REASON_RE = re.compile(r"^[ \t*_#>`-]*reason[ \t*_`]*[:：](?P<value>.*)$", re.I | re.M | re.S)


def parse_verdict(reply: str) -> tuple[bool | None, str]:
    """(done, reason); done is None when the reply does not say."""
    m = _VERDICT_RE.search(reply)
    verdict = m.group("value") if m else (reply.strip().splitlines() or [""])[0]
    r = _REASON_RE.search(reply)
    reason = " ".join(r.group("value").split()) if r else " ".join(reply.split())
    if _NEGATIVE.search(verdict):
        return False, reason
    if _POSITIVE.search(verdict):
        return True, reason
    return None, reason
