"""Per-screenshot result cache: a step that looks for text and then an icon on the same
frame runs OCR once.

Keyed by a hash of the frame bytes (SHA-256 over the whole buffer, hardware-accelerated:
~3.5 ms for a 1080x2400 frame, blake2b took ~9 ms; a one-pixel change — a toggled
switch — still changes the key). Small LRU.

May import: numpy and the standard library.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

__all__ = ["FrameCache", "frame_key"]

T = TypeVar("T")


def frame_key(image: np.ndarray) -> str:
    digest = hashlib.sha256(repr((image.shape, image.dtype.str)).encode())
    digest.update(np.ascontiguousarray(image).data)
    return digest.hexdigest()[:32]


class FrameCache:
    """LRU of ``{frame key: {result kind: value}}``; thread-safe."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._frames: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], threading.Event] = {}
        self.hits = 0
        self.misses = 0

    def get_or_compute(self, key: str, kind: str, compute: Callable[[], T]) -> T:
        """The cached value, or ``compute()`` once: threads asking for the same frame and
        kind meanwhile wait for that one computation instead of repeating it."""
        while True:
            with self._lock:
                frame = self._frames.get(key)
                if frame is not None and kind in frame:
                    self._frames.move_to_end(key)
                    self.hits += 1
                    return cast(T, frame[kind])  # what compute() gave for this kind
                pending = self._pending.get((key, kind))
                if pending is None:
                    pending = self._pending[(key, kind)] = threading.Event()
                    self.misses += 1
                    break
            pending.wait()  # another thread computes it; then read it (or compute if it failed)
            if self._size == 0:
                with self._lock:
                    self.misses += 1
                return compute()
        try:
            value = compute()  # outside the lock: OCR takes ~1 s and must not block other frames
            if self._size > 0:
                with self._lock:
                    self._frames.setdefault(key, {})[kind] = value
                    self._frames.move_to_end(key)
                    while len(self._frames) > self._size:
                        self._frames.popitem(last=False)
            return value
        finally:
            with self._lock:
                self._pending.pop((key, kind), None)
            pending.set()

    def clear(self) -> None:
        with self._lock:
            self._frames.clear()
