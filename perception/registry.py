"""Process-wide model registry: each model loads once per process, lazily, under a lock,
and is shared by every ``Perception`` (hence every device) built with the same settings.

May import: the standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

__all__ = ["loaded_keys", "shared"]

T = TypeVar("T")

_models: dict[Hashable, Any] = {}
_locks: dict[Hashable, threading.Lock] = {}
_guard = threading.Lock()


def shared(key: Hashable, factory: Callable[[], T]) -> T:
    """The object for ``key``, built by ``factory`` on first use (once, even under threads)."""
    value = _models.get(key)
    if value is not None:
        return cast(T, value)  # what factory built for this key
    with _guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        value = _models.get(key)
        if value is None:
            value = factory()
            _models[key] = value
        return cast(T, value)


def loaded_keys() -> list[Hashable]:
    return list(_models)
