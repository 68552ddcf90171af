"""Errors of the Mobile-Eval harness, under the project's one tree.

    MobileAgentError                      (mobile_agent.errors)
     └── MobileEvalError
          ├── TaskDataError               a task file or a task filter is wrong (path, task_id)
          ├── ResultsFileError            a results JSONL line is unreadable (path, line)
          ├── UnknownValidatorError       a task names no registered validator (validator)
          ├── DeviceStateError            the phone's state cannot be read or reset (serial)
          ├── AnnotationError             an annotation file or answer is unusable (path)
          └── JudgeError                  the MLLM judge answered something unusable

May import: mobile_agent.errors.
"""

from __future__ import annotations

from typing import Any

from mobile_agent.errors import MobileAgentError

__all__ = [
    "AnnotationError",
    "DeviceStateError",
    "JudgeError",
    "MobileEvalError",
    "ResultsFileError",
    "TaskDataError",
    "UnknownValidatorError",
]


class MobileEvalError(MobileAgentError):
    """Anything the evaluation harness raises on purpose."""


class TaskDataError(MobileEvalError):
    pass


class ResultsFileError(MobileEvalError):
    def __init__(self, message: str, *, path: str, line: int | None = None, **fields: Any) -> None:
        super().__init__(message, path=path, line=line, **fields)


class UnknownValidatorError(MobileEvalError):
    def __init__(self, message: str, *, validator: str, **fields: Any) -> None:
        super().__init__(message, validator=validator, **fields)


class DeviceStateError(MobileEvalError):
    def __init__(self, message: str, *, serial: str | None = None, **fields: Any) -> None:
        super().__init__(message, serial=serial, **fields)


class AnnotationError(MobileEvalError):
    pass


class JudgeError(MobileEvalError):
    pass
