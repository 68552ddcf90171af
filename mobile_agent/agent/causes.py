"""Why a run ended with an error, as data: a stable cause name and a JSON-able dict.

May import: the standard library, ``mobile_agent.errors`` and this package's records.
"""

from __future__ import annotations

from typing import Any

from mobile_agent.agent.records import jsonable
from mobile_agent.errors import (
    AdbKeyboardMissingError,
    ConfigError,
    DeviceError,
    DeviceLostError,
    MobileAgentError,
    PerceptionError,
    PlannerError,
    PlannerUnreachableError,
    RunCancelled,
)

__all__ = ["error_cause", "error_dict"]

_UNAVAILABLE_STATUS = frozenset({408, 425, 429})  # with 5xx: the endpoint did not serve us, retries spent

# the first that matches names the cause: subclasses before their bases
_CAUSES: tuple[tuple[type[BaseException], str], ...] = (
    (DeviceLostError, "device_lost"),
    (AdbKeyboardMissingError, "adb_keyboard_missing"),
    (DeviceError, "device"),
    (PlannerUnreachableError, "planner_unreachable"),
    (PlannerError, "planner"),
    (PerceptionError, "perception"),
    (ConfigError, "config"),
    (MobileAgentError, "agent"),
)


def error_cause(exc: BaseException) -> str:
    """A stable, machine-readable name for why a run ended with an error.

    An endpoint that kept answering 408, 425, 429 or 5xx through every retry is as
    good as unreachable for the run: ``planner_unreachable``, like refused connections
    and timeouts; the error keeps its ``status_code`` and ``attempts``. Other HTTP
    errors (401, 404: fix the settings) are ``planner``.
    """
    if isinstance(exc, PlannerError) and not isinstance(exc, PlannerUnreachableError):
        status = exc.fields.get("status_code")
        if isinstance(status, int) and (status in _UNAVAILABLE_STATUS or status >= 500):
            return "planner_unreachable"
    if isinstance(exc, (RunCancelled, KeyboardInterrupt)):
        return "cancelled"
    for kind, cause in _CAUSES:
        if isinstance(exc, kind):
            return cause
    return "internal"


def error_dict(exc: BaseException) -> dict[str, Any]:
    """``exc`` as the trajectory and the API show it, with its ``cause``."""
    if isinstance(exc, MobileAgentError):
        data = exc.to_dict()
    else:
        data = {"type": type(exc).__name__, "message": str(exc)}
    data["cause"] = error_cause(exc)
    result: dict[str, Any] = jsonable(data)
    return result
