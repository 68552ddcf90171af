"""Typed dependencies of the routes: the service state, the principal, and the resources loaded
with their owner check.

The principal (``server.auth``) comes from ``Authorization: Bearer …`` (the API) or the
dashboard's signed, expiring session cookie (``server.sessions``), which names the token that
signed in. A token in a URL is never accepted. ``OwnedTask`` / ``ActedTask`` load the task of
the route's ``task_id`` *with* the check: a task the principal may not see is a 404, the same
as one that does not exist; one it sees but may not act on (a viewer) is a 403.

May import: fastapi, ``server.state``, ``server.auth``, ``server.sessions``, ``server.store``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi import Path as PathParam

from server.auth import ANONYMOUS, Principal, forbidden, not_found, principal_of_token, principals
from server.schemas import MAX_ID
from server.sessions import SESSION_COOKIE, session_name, session_valid
from server.state import ServiceState
from server.store import TaskRow

__all__ = [
    "COOKIE_NAME",
    "ActedTask",
    "Actor",
    "Admin",
    "Authorized",
    "CurrentPrincipal",
    "OwnedTask",
    "Service",
    "get_principal",
    "get_service",
    "request_principal",
    "visible_task",
]

COOKIE_NAME = SESSION_COOKIE


def get_service(request: Request) -> ServiceState:
    service: ServiceState = request.app.state.service  # set by the app's lifespan (server.app)
    return service


Service = Annotated[ServiceState, Depends(get_service)]


def request_principal(service: ServiceState, request: Request) -> Principal | None:
    """Who the request is from: the bearer token's principal, else the session cookie's; None
    for neither. With no token configured at all, the local admin ``anonymous``."""
    server = service.settings.server
    configured = principals(server)
    if not configured:
        return ANONYMOUS
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return principal_of_token(server, value.strip())
    cookie = request.cookies.get(COOKIE_NAME)
    name = session_name(cookie) if cookie else None
    if cookie is None or name is None:
        return None
    for principal, token in configured:
        if principal.name == name and session_valid(token, cookie):
            return principal
    return None


def get_principal(service: Service, request: Request) -> Principal:
    principal = request_principal(service, request)
    if principal is None:
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="missing or wrong API token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]
Authorized = Depends(get_principal)


def get_actor(principal: CurrentPrincipal) -> Principal:
    """A principal that may act (submit, reply, cancel, delete): a viewer gets 403."""
    if not principal.may_act:
        raise forbidden(f"the token {principal.name!r} is a viewer: it reads, and acts on nothing")
    return principal


def get_admin(principal: CurrentPrincipal) -> Principal:
    if not principal.admin:
        raise forbidden("only an admin token may do this")
    return principal


Actor = Annotated[Principal, Depends(get_actor)]
Admin = Annotated[Principal, Depends(get_admin)]

TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


def visible_task(service: ServiceState, principal: Principal, task_id: int) -> TaskRow:
    """The task, when it exists and the principal may see it; 404 otherwise (the same answer)."""
    task = service.store.get_task(task_id)
    if task is None or not principal.sees(task.owner, task.team):
        raise not_found(f"task {task_id}")
    return task


def get_owned_task(task_id: TaskId, service: Service, principal: CurrentPrincipal) -> TaskRow:
    return visible_task(service, principal, task_id)


def get_acted_task(task_id: TaskId, service: Service, principal: CurrentPrincipal) -> TaskRow:
    task = visible_task(service, principal, task_id)
    if not principal.acts_on(task.owner, task.team):
        raise forbidden(f"the token {principal.name!r} may read task {task_id}, not act on it")
    return task


OwnedTask = Annotated[TaskRow, Depends(get_owned_task)]
ActedTask = Annotated[TaskRow, Depends(get_acted_task)]
