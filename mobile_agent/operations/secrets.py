"""Secrets the person gives a run: ``{{secret:name}}`` in an instruction or a setting.

The model sees and writes the reference only (``Type ({{secret:card_pin}})``); the value,
from ``agent.named_secrets``, is put in at the last moment, by the Type operation, right
before the device types it (``Device.type_text``: argument lists, never a shell line).
Every text a run writes or emits is redacted of the values (``agent.redact``).

May import: the standard library, ``mobile_agent.errors``, ``mobile_agent.settings``.
"""

from __future__ import annotations

import re

from mobile_agent.errors import ConfigError, OperationError
from mobile_agent.settings import Settings

__all__ = ["SECRET_REFERENCE", "check_secret_references", "referenced_secrets", "resolve_secrets"]

SECRET_REFERENCE = re.compile(r"\{\{\s*secret\s*:\s*([A-Za-z0-9_.\-]{1,64})\s*\}\}")


def referenced_secrets(text: str) -> list[str]:
    """The names referenced in ``text``, in order."""
    return [m.group(1) for m in SECRET_REFERENCE.finditer(text)]


def check_secret_references(text: str, settings: Settings) -> None:
    """``ConfigError`` when ``text`` (an instruction) names a secret the settings do not hold."""
    known = settings.agent.named_secrets
    missing = sorted({n for n in referenced_secrets(text) if n not in known})
    if missing:
        raise ConfigError(
            f"the instruction names secrets that are not set: {', '.join(missing)} "
            "(agent.named_secrets, e.g. MOBILE_AGENT_AGENT__NAMED_SECRETS='{\"name\": \"value\"}')",
            setting="agent.named_secrets",
        )


def resolve_secrets(text: str, settings: Settings | None) -> str:
    """``text`` with every ``{{secret:name}}`` replaced by its value; an unknown name is the
    model's mistake (``OperationError``, fed back), its value never shown."""
    if "{{" not in text:
        return text
    known = settings.agent.named_secrets if settings is not None else {}

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in known:
            names = ", ".join(sorted(known)) or "none"
            raise OperationError(f"There is no secret named {name!r}; the secrets you may type are: {names}.")
        return known[name].get_secret_value()

    return SECRET_REFERENCE.sub(value, text)
