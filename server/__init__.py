"""The REST service and dashboard on top of ``mobile_agent``.

``create_app(settings)`` (``server.app``) builds the FastAPI app: ``/v1/tasks`` and
``/v1/devices`` (``server.api``), a SQL store of tasks and events (``server.store``),
device leases (``server.devices``), the queue and its worker threads (``server.scheduler``),
the seam to the agent (``server.runner``) and the static dashboard (``server/static``).

May import: ``mobile_agent``'s public API, fastapi, starlette, sqlalchemy. Never ``eval``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(*args: Any, **kwargs: Any) -> Any:
    """``server.app.create_app``, imported on first use (FastAPI stays out of ``import server``)."""
    from server.app import create_app as _create_app

    return _create_app(*args, **kwargs)
