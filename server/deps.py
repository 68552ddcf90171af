"""Typed dependencies of the routes: the service state and the bearer-token check.

The token is read from ``Authorization: Bearer …`` (the API), the ``mobile_agent_token``
cookie (the dashboard, its images and its event streams) or, for the dashboard page
only, a ``?token=`` query parameter that the page turns into that cookie.

May import: fastapi, ``server.state``.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status

from server.state import ServiceState

__all__ = ["COOKIE_NAME", "Authorized", "Service", "get_service", "require_token", "token_ok"]

COOKIE_NAME = "mobile_agent_token"


def get_service(request: Request) -> ServiceState:
    return request.app.state.service


Service = Annotated[ServiceState, Depends(get_service)]


def token_ok(service: ServiceState, request: Request, *, allow_query: bool = False) -> bool:
    """True when no token is configured, or the request carries the right one."""
    expected = service.api_token
    if expected is None:
        return True
    offered: list[str] = []
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value:
        offered.append(value.strip())
    cookie = request.cookies.get(COOKIE_NAME)
    if cookie:
        offered.append(cookie)
    if allow_query and request.query_params.get("token"):
        offered.append(request.query_params["token"])
    return any(hmac.compare_digest(o.encode(), expected.encode()) for o in offered)


def require_token(service: Service, request: Request) -> None:
    if not token_ok(service, request):
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="missing or wrong API token",
            headers={"WWW-Authenticate": "Bearer"},
        )


Authorized = Depends(require_token)
