"""Redaction of secrets from everything a run writes or emits.

The planner's API key and the texts listed in ``settings.agent.secrets`` are replaced
by ``[REDACTED]`` in every string of a JSON-able structure before it reaches the
trajectory folder, the report or an event listener. For the secrets (not the key, which is
never on a screen), so is every word that shows a part of one (``mask.SecretText``: four
characters of it in a row, as a field that scrolls shows it and OCR then reads it into a
step's feedback), the rule the masking of images follows.

May import: the standard library, ``mobile_agent.settings``, ``mobile_agent.agent.mask`` (the text rule).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from mobile_agent.agent.mask import SecretText
from mobile_agent.settings import Settings

__all__ = ["REDACTED", "Redactor", "redacted_logs"]

log = logging.getLogger(__name__)

REDACTED = "[REDACTED]"
# Shorter secrets would blank out ordinary words all over the trajectory.
_MIN_SECRET_LEN = 3


class Redactor:
    """Replaces known secret strings, longest first, in strings, lists and dicts."""

    def __init__(self, secrets: list[str], parts_of: list[str] | None = None) -> None:
        """``secrets`` are replaced where they appear whole; the words that show a part of one of
        ``parts_of`` (the values a screen may show) are replaced too."""
        unique = {s for s in [*secrets, *(parts_of or [])] if s and len(s) >= _MIN_SECRET_LEN}
        self._secrets = sorted(unique, key=len, reverse=True)
        self._parts = SecretText(parts_of or [])

    @classmethod
    def from_settings(cls, settings: Settings) -> Redactor:
        values = [settings.planner.api_key.get_secret_value()]
        secrets = [s.get_secret_value() for s in settings.agent.secrets]
        secrets += [s.get_secret_value() for s in settings.agent.named_secrets.values()]
        short = [s for s in secrets if len(s) < _MIN_SECRET_LEN]
        if short:  # say so: the user expects them gone from the trajectory
            log.warning(
                "%d secret(s) shorter than %d characters are not redacted (they would blank out ordinary text)",
                len(short),
                _MIN_SECRET_LEN,
            )
        return cls(values, secrets)

    @property
    def active(self) -> bool:
        return bool(self._secrets)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return self._parts.redact(value)

    def __call__(self, value: Any) -> Any:
        """A copy of ``value`` with every string redacted (dict keys included)."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value


# Log records are redacted where they are made (a record factory), so that every handler
# and formatter, the ones a host program adds later included, sees the redacted text.
_live: dict[int, Redactor] = {}
_live_lock = threading.Lock()
_plain_factory: Any = None


def _redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
    record: logging.LogRecord = _plain_factory(*args, **kwargs)
    redactors = list(_live.values())
    if not redactors:
        return record
    _redact_record(record, redactors)
    return record


def _redact_arg(value: Any, redactors: list[Redactor]) -> Any:
    """One format argument with the secrets taken out: a string redacted, anything else left
    as it is unless its text shows a secret (then its redacted text: a ``%d`` of it would fail,
    but no number shows a secret of three letters or more that is not itself a number)."""
    text = value if isinstance(value, str) else None
    if text is None:
        try:
            text = str(value)
        except Exception:  # noqa: BLE001 - an argument that cannot be shown holds nothing to hide
            return value
    redacted = text
    for redactor in redactors:
        redacted = redactor.text(redacted)
    return value if redacted == text else redacted


def _redact_record(record: logging.LogRecord, redactors: list[Redactor]) -> None:
    """``record`` with its secrets taken out, still a record every formatter can format:
    the message is formatted first to find them; only when it shows one are the template
    and each argument redacted in place (a formatter that reads ``args`` itself, uvicorn's
    access formatter, still finds its five values). A secret that appears only once the
    arguments are put together is caught by formatting again: then the record carries the
    redacted text, without arguments."""
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: leave it to logging to report, unredacted of nothing
        return
    if any(_shows(message, redactors)):
        if isinstance(record.msg, str):
            record.msg = _redact_arg(record.msg, redactors)
        if isinstance(record.args, Mapping):
            record.args = {k: _redact_arg(v, redactors) for k, v in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_redact_arg(v, redactors) for v in record.args)
        try:
            again = record.getMessage()
        except Exception:  # noqa: BLE001 - a %d given its redacted text: carry the text itself
            again = message
        if any(_shows(again, redactors)) or again == message:
            for redactor in redactors:
                message = redactor.text(message)
            record.msg, record.args = message, ()
    if record.exc_info and record.exc_info[0] is not None:
        text = logging.Formatter().formatException(record.exc_info)
        for redactor in redactors:
            text = redactor.text(text)
        record.exc_text = text  # formatters use it instead of formatting the exception again
    if record.stack_info:
        for redactor in redactors:
            record.stack_info = redactor.text(record.stack_info)


def _shows(text: str, redactors: list[Redactor]) -> Iterator[bool]:
    return (redactor.text(text) != text for redactor in redactors)


@contextmanager
def redacted_logs(redactor: Redactor) -> Iterator[None]:
    """While the block runs, every log record of the process has ``redactor``'s secrets
    replaced (message, arguments and traceback). Runs nest and overlap in threads: each
    adds its own secrets and takes them away when it ends."""
    global _plain_factory
    if not redactor.active:
        yield
        return
    key = id(redactor)
    with _live_lock:
        if _plain_factory is None:
            _plain_factory = logging.getLogRecordFactory()
            logging.setLogRecordFactory(_redacting_factory)
        _live[key] = redactor
    try:
        yield
    finally:
        with _live_lock:
            _live.pop(key, None)
