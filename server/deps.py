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

__all__ = ["COOKIE_NAME", "Authorized", "Service", "get_service", "require_token", "token_ok", "token_owner"]

COOKIE_NAME = SESSION_COOKIE


def get_service(request: Request) -> ServiceState:
    service: ServiceState = request.app.state.service  # set by the app's lifespan (server.app)
    return service


Service = Annotated[ServiceState, Depends(get_service)]


def token_ok(service: ServiceState, request: Request) -> bool:
    """True when no token is configured, or the request carries the right one."""
    expected = service.api_token
    if expected is None and not service.settings.server.tokens:
        return True
    if _bearer_owner(service, request) is not None:
        return True
    cookie = request.cookies.get(COOKIE_NAME)
    return expected is not None and cookie is not None and bool(cookie) and session_valid(expected, cookie)


def _bearer_owner(service: ServiceState, request: Request) -> str | None:
    """The name of the token the request carries: "default" for server.api_token, the name of
    one of server.tokens, None for none of them."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value:
        return None
    given = value.strip().encode("utf-8", "replace")
    found = None
    candidates = [("default", service.api_token)] + [
        (name, secret.get_secret_value()) for name, secret in sorted(service.settings.server.tokens.items())
    ]
    for name, token in candidates:  # every one compared: the time taken does not tell which matched
        if token and hmac.compare_digest(given, token.encode()) and found is None:
            found = name
    return found


def token_owner(service: ServiceState, request: Request) -> str:
    """Whose task this is, for the per-token quota: the token's name; "default" for the
    dashboard's session (it signs in with server.api_token), "anonymous" with no token set."""
    owner = _bearer_owner(service, request)
    if owner is not None:
        return owner
    return "anonymous" if service.api_token is None and not service.settings.server.tokens else "default"


def require_token(service: Service, request: Request) -> None:
    if not token_ok(service, request):
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="missing or wrong API token",
            headers={"WWW-Authenticate": "Bearer"},
        )


Authorized = Depends(require_token)
