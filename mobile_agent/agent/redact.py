"""Redaction of secrets from everything a run writes or emits.

The planner's API key and the texts listed in ``settings.agent.secrets`` are replaced
by ``[REDACTED]`` in every string of a JSON-able structure before it reaches the
trajectory folder, the report or an event listener.

May import: the standard library, ``mobile_agent.settings``.
"""

from __future__ import annotations

import logging
from typing import Any

from mobile_agent.settings import Settings

__all__ = ["REDACTED", "Redactor"]

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
