"""Which phones may run a task: a serial, a host, labels, property requirements.

A phone's properties are what its worker read over adb (serial, platform, model, android, sdk,
width, height, profile), or over WebDriverAgent for an iPhone (platform=ios, model, ios), and
the labels its host was configured with (``lab=berlin``), in one namespace. A requirement is ``key OP value`` with OP one of ``= == != >= <= > <``; values that
both read as version numbers (``13``, ``6.0.1``) compare as numbers, others as text
(``=``/``!=`` only). ``profile`` is ``tablet`` when the smallest screen side is at least
600 dp, Android's own line between phone and tablet layouts (``sw600dp``, developer.android.com
"Support different screen sizes"), else ``phone``.

Each distinct route is one procrastinate queue (``queue_for``): a phone's worker listens on
the queues of every route it satisfies, so a task waits for any matching phone, not for one
chosen at submission.

May import: the standard library.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ANY_QUEUE", "Requirement", "Route", "RouteError", "phone_profile", "queue_for"]

ANY_QUEUE = "any"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.\-]{0,63})\s*(==|!=|>=|<=|=|>|<)\s*([^\s=<>!].{0,199}?)\s*$")
_VERSION = re.compile(r"^\d+(\.\d+){0,3}$")
# Postgres channel names stop at 63 bytes and procrastinate names a queue's channel
# "procrastinate_queue_v1#<queue>": queue names stay short, long ones are hashed.
_MAX_QUEUE = 38


class RouteError(ValueError):
    """A requirement that does not parse."""


def _version(value: str) -> tuple[int, ...] | None:
    return tuple(int(p) for p in value.split(".")) if _VERSION.match(value) else None


def _padded(left: tuple[int, ...], right: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """13 and 13.0 the same version."""
    width = max(len(left), len(right))
    return left + (0,) * (width - len(left)), right + (0,) * (width - len(right))


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str
    value: str

    @classmethod
    def parse(cls, text: str) -> Requirement:
        match = _REQUIREMENT.match(text)
        if not match:
            raise RouteError(f"{text!r} is not a requirement: write key=value, or key>=13 (ops: = != >= <= > <)")
        key, op, value = match.groups()
        op = "=" if op == "==" else op
        if op in (">=", "<=", ">", "<") and _version(value) is None:
            raise RouteError(f"{text!r}: {op} compares version numbers (like 13 or 6.0.1), not {value!r}")
        return cls(key.lower(), op, value)

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.value}"

    def satisfied_by(self, properties: dict[str, str]) -> bool:
        have = properties.get(self.key)
        if have is None:
            return self.op == "!="
        if self.op in ("=", "!="):
            a, b = _version(have), _version(self.value)
            if a is not None and b is not None:
                a, b = _padded(a, b)
                same = a == b
            else:
                same = have.lower() == self.value.lower()
            return same if self.op == "=" else not same
        left, right = _version(have), _version(self.value)
        if left is None or right is None:
            return False
        left, right = _padded(left, right)
        return {">=": left >= right, "<=": left <= right, ">": left > right, "<": left < right}[self.op]


@dataclass(frozen=True)
class Route:
    """Where a task may run: all given parts must hold (an empty route: any phone)."""

    serial: str | None = None
    host: str | None = None
    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def from_request(cls, device: str, host: str | None, requires: list[str] | None,
                     labels: dict[str, str] | None) -> Route:
        parsed = [Requirement.parse(r) for r in requires or []]
        parsed += [Requirement.parse(f"{k}={v}") for k, v in sorted((labels or {}).items())]
        unique = tuple(sorted(set(parsed), key=str))
        return cls(serial=None if device == "any" else device, host=host or None, requirements=unique)

    @classmethod
    def from_options(cls, device_request: str, options: dict[str, Any]) -> Route:
        """The route of a stored task; its ``platform`` option is the requirement ``platform=…``
        (each worker registers its phones' platform: android, or ios for an iPhone)."""
        requires = list(options.get("requires") or [])
        if options.get("platform"):
            requires.append(f"platform={options['platform']}")
        return cls.from_request(device_request, options.get("host"), requires, options.get("labels"))

    @property
    def is_any(self) -> bool:
        return self.serial is None and self.host is None and not self.requirements

    def matches(self, phone: dict[str, str]) -> bool:
        if self.serial is not None and phone.get("serial") != self.serial:
            return False
        if self.host is not None and phone.get("host") != self.host:
            return False
        return all(r.satisfied_by(phone) for r in self.requirements)

    def describe(self) -> str:
        parts = ([f"serial={self.serial}"] if self.serial else []) + ([f"host={self.host}"] if self.host else [])
        parts += [str(r) for r in self.requirements]
        return ", ".join(parts) or "any phone"

    def spec(self) -> dict[str, Any]:
        return {"serial": self.serial, "host": self.host, "requires": [str(r) for r in self.requirements]}

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Route:
        return cls.from_request(spec.get("serial") or "any", spec.get("host"), spec.get("requires"), None)


def queue_for(route: Route) -> str:
    """The procrastinate queue of a route: ``any``, ``p.<serial>`` for one phone, else a
    name derived from the route's canonical text (the same route, the same queue)."""
    if route.is_any:
        return ANY_QUEUE
    if route.serial is not None and route.host is None and not route.requirements:
        name = f"p.{route.serial}"
        if len(name) <= _MAX_QUEUE:
            return name
    digest = hashlib.sha1(json.dumps(route.spec(), sort_keys=True).encode()).hexdigest()[:20]
    return f"r.{digest}"


def phone_profile(width: int | None, height: int | None, density: int | None) -> str | None:
    if not width or not height or not density:
        return None
    smallest_dp = min(width, height) * 160 / density
    return "tablet" if smallest_dp >= 600 else "phone"
