"""Errors of the perception library (a leaf: it imports nothing of the project).

    PerceptionFailure (backend, hint)
     ├── WeightsMissingError      a model file/folder is not there (path, hint says how to get it)
     ├── BackendUnavailableError  the backend's package is not installed (hint: pip extra)
     └── InvalidInputError        not an RGB uint8 HxWx3 image, or an empty target (also a ValueError)

A target that is simply not on screen is *not* an error: it is a ``Location`` with
status ``NOT_FOUND``.
"""

from __future__ import annotations

__all__ = ["BackendUnavailableError", "InvalidInputError", "PerceptionFailure", "WeightsMissingError"]


class PerceptionFailure(Exception):
    def __init__(self, message: str, *, backend: str, hint: str = "", path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.backend = backend
        self.hint = hint
        self.path = path


class WeightsMissingError(PerceptionFailure):
    pass


class BackendUnavailableError(PerceptionFailure):
    pass


class InvalidInputError(PerceptionFailure, ValueError):
    pass
