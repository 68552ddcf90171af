"""The one exception tree of mobile-agent.

Every error raised on purpose by this package is a ``MobileAgentError``. Each carries
structured fields (``serial``, ``operation``, ``status_code``…) in ``.fields`` so that
callers branch on types and fields, never on message text. Constructing an error never
logs; whoever handles it decides.

    MobileAgentError
     ├── ConfigError                      bad settings / config file
     ├── DeviceError (serial)
     │    ├── AdbNotFoundError            no adb binary anywhere
     │    ├── AdbServerError              adb server would not start / answer
     │    ├── NoDeviceError               nothing attached
     │    ├── MultipleDevicesError        several attached, no serial chosen (serials)
     │    ├── DeviceNotFoundError         the chosen serial is not attached
     │    ├── DeviceOfflineError          state "offline"
     │    ├── DeviceUnauthorizedError     state "unauthorized": accept the RSA prompt
     │    ├── DeviceLostError             went away in the middle of a call
     │    ├── ScreenshotError             capture failed (never a black frame)
     │    ├── AdbKeyboardMissingError     non-ASCII text needs ADB Keyboard
     │    ├── TextInputError              text could not be delivered (reason): never reported typed
     │    ├── AppNotFoundError            no package / label matches (app)
     │    └── DeviceCommandError          a device command or adb request failed (command, exit_code, output)
     ├── PhoneBusyError (serial, holder)  another run holds the phone's lease (mobile_agent.device.lease)
     ├── PerceptionError                  wraps perception.errors.PerceptionFailure (backend)
     ├── PlannerError (status_code, attempts)
     │    ├── PlannerUnreachableError     connection refused / timeouts after retries
     │    └── PlannerResponseError        the endpoint answered something unusable
     ├── OperationError (operation)
     │    ├── UnknownOperationError       the action names no registered operation
     │    ├── OperationParseError         the reply holds no parseable action (reply)
     │    └── InvalidParametersError      the parameters fail the operation's model
     └── RunCancelled                     a run stopped on request

Model mistakes (``OperationError`` subclasses, text not found) are turned into step
records and feedback by the agent; device and planner errors end a run.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AdbKeyboardMissingError",
    "AdbNotFoundError",
    "AdbServerError",
    "AppNotFoundError",
    "ConfigError",
    "DeviceCommandError",
    "DeviceError",
    "DeviceLostError",
    "DeviceNotFoundError",
    "DeviceOfflineError",
    "DeviceUnauthorizedError",
    "InvalidParametersError",
    "MobileAgentError",
    "MultipleDevicesError",
    "NoDeviceError",
    "OperationError",
    "OperationParseError",
    "PerceptionError",
    "PhoneBusyError",
    "PlannerError",
    "PlannerResponseError",
    "PlannerUnreachableError",
    "RunCancelled",
    "ScreenshotError",
    "TextInputError",
    "UnknownOperationError",
]


class MobileAgentError(Exception):
    """Base of every error this package raises on purpose.

    ``message`` is for people; ``fields`` is for code (and for JSON in trajectories
    and REST answers).
    """

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
        for key, value in fields.items():
            setattr(self, key, value)

    def to_dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__, "message": self.message, **self.fields}


class ConfigError(MobileAgentError):
    """Settings that fail validation, or an unreadable config file."""


# --- device -------------------------------------------------------------------------


class DeviceError(MobileAgentError):
    """Anything wrong between us and the phone."""

    def __init__(self, message: str, *, serial: str | None = None, **fields: Any) -> None:
        super().__init__(message, serial=serial, **fields)


class AdbNotFoundError(DeviceError):
    pass


class AdbServerError(DeviceError):
    pass


class NoDeviceError(DeviceError):
    pass


class MultipleDevicesError(DeviceError):
    def __init__(self, message: str, *, serials: list[str], **fields: Any) -> None:
        super().__init__(message, serials=list(serials), **fields)


class DeviceNotFoundError(DeviceError):
    pass


class DeviceOfflineError(DeviceError):
    pass


class DeviceUnauthorizedError(DeviceError):
    pass


class DeviceLostError(DeviceError):
    pass


class ScreenshotError(DeviceError):
    pass


class AdbKeyboardMissingError(DeviceError):
    pass


class TextInputError(DeviceError):
    pass


class AppNotFoundError(DeviceError):
    def __init__(self, message: str, *, app: str, serial: str | None = None, **fields: Any) -> None:
        super().__init__(message, serial=serial, app=app, **fields)


class DeviceCommandError(DeviceError):
    def __init__(
        self,
        message: str,
        *,
        command: list[str] | str,
        exit_code: int | None = None,
        output: str | None = None,
        serial: str | None = None,
    ) -> None:
        super().__init__(message, serial=serial, command=command, exit_code=exit_code, output=output)


# --- perception ---------------------------------------------------------------------


class PhoneBusyError(MobileAgentError):
    """Another run (a REST task, an MCP session, ``mobile-agent run``) holds the phone: one
    phone, one run. Not a ``DeviceError``: nothing is wrong with the phone. ``holder`` names
    who holds it."""

    def __init__(self, message: str, *, serial: str, holder: str) -> None:
        super().__init__(message, serial=serial, holder=holder)


class PerceptionError(MobileAgentError):
    """A perception backend failed (missing weights, unusable backend).

    ``perception`` is a leaf library with its own ``PerceptionFailure`` root; the
    locator adapter raises this one ``from`` it, keeping ``backend``, ``hint`` and ``path``.
    """


# --- planner ------------------------------------------------------------------------


class PlannerError(MobileAgentError):
    status_code: int | None  # set by MobileAgentError.__init__ from the fields
    attempts: int | None

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        attempts: int | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(message, status_code=status_code, attempts=attempts, **fields)


class PlannerUnreachableError(PlannerError):
    pass


class PlannerResponseError(PlannerError):
    pass


# --- operations ---------------------------------------------------------------------


class OperationError(MobileAgentError):
    def __init__(self, message: str, *, operation: str | None = None, **fields: Any) -> None:
        super().__init__(message, operation=operation, **fields)


class UnknownOperationError(OperationError):
    pass


class OperationParseError(OperationError):
    def __init__(self, message: str, *, reply: str | None = None, **fields: Any) -> None:
        super().__init__(message, reply=reply, **fields)


class InvalidParametersError(OperationError):
    pass


class RunCancelled(MobileAgentError):
    pass
