"""Redaction of secrets from everything a run writes or emits.

The planner's API key and the texts listed in ``settings.agent.secrets`` are replaced
by ``[REDACTED]`` in every string of a JSON-able structure before it reaches the
trajectory folder, the report or an event listener.

May import: the standard library, ``mobile_agent.settings``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mobile_agent.settings import Settings

__all__ = ["REDACTED", "Redactor", "redacted_logs"]

log = logging.getLogger(__name__)

REDACTED = "[REDACTED]"
# Shorter secrets would blank out ordinary words all over the trajectory.
_MIN_SECRET_LEN = 3


class Redactor:
    """Replaces known secret strings, longest first, in strings, lists and dicts."""

    def __init__(self, secrets: list[str]) -> None:
        unique = {s for s in secrets if s and len(s) >= _MIN_SECRET_LEN}
        self._secrets = sorted(unique, key=len, reverse=True)

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
        return cls(values + secrets)

    @property
    def active(self) -> bool:
        return bool(self._secrets)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

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
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: leave it to logging to report
        return record
    for redactor in redactors:
        message = redactor.text(message)
    record.msg, record.args = message, None
    if record.exc_info and record.exc_info[0] is not None:
        text = logging.Formatter().formatException(record.exc_info)
        for redactor in redactors:
            text = redactor.text(text)
        record.exc_text = text  # formatters use it instead of formatting the exception again
    return record


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
