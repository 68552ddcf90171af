"""Typed dependencies of the routes: the service state and the bearer-token check.

The token is read from ``Authorization: Bearer …`` (the API); the dashboard, its images and
its event streams carry the signed, expiring session cookie (``server.sessions``) that the
sign-in form sets (``server.api.dashboard``). A token in a URL is never accepted.

May import: fastapi, ``server.state``.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status

from server.sessions import SESSION_COOKIE, session_valid
from server.state import ServiceState

__all__ = ["COOKIE_NAME", "Authorized", "Service", "get_service", "require_token", "token_ok"]

COOKIE_NAME = SESSION_COOKIE


def get_service(request: Request) -> ServiceState:
    return request.app.state.service


Service = Annotated[ServiceState, Depends(get_service)]


def token_ok(service: ServiceState, request: Request) -> bool:
    """True when no token is configured, or the request carries the right one."""
    expected = service.api_token
    if expected is None:
        return True
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value:
        if hmac.compare_digest(value.strip().encode("utf-8", "replace"), expected.encode()):
            return True
    cookie = request.cookies.get(COOKIE_NAME)
    return bool(cookie) and session_valid(expected, cookie)


def require_token(service: Service, request: Request) -> None:
    if not token_ok(service, request):
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="missing or wrong API token",
            headers={"WWW-Authenticate": "Bearer"},
        )


Authorized = Depends(require_token)
