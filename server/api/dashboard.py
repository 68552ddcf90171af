"""The dashboard page (static files of this package, no build step, no CDN).

Signing in posts the token in a form body to ``/dashboard/login``, which answers with a
signed, expiring session identifier in an HttpOnly cookie (``server.sessions``), not the
token; the page, its images and its event streams then use the cookie. The token never
rides in a URL, where access logs, proxies and browser history would keep it.

May import: fastapi, ``server.*``.
"""

from __future__ import annotations

import functools
import html
from importlib import resources
from urllib.parse import parse_qs

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from server.auth import principal_of_token, principals
from server.deps import COOKIE_NAME, Service, request_principal
from server.sessions import issue_session

__all__ = ["router"]

router = APIRouter(include_in_schema=False)

_NO_STORE = {"Cache-Control": "no-store"}


@functools.cache
def _page(name: str) -> str:
    return (resources.files("server") / "static" / name).read_text(encoding="utf-8")


def _login_page(message: str = "") -> HTMLResponse:
    notice = f'<p class="error" role="alert">{html.escape(message)}</p>' if message else ""
    body = _page("login.html").replace("<!--notice-->", notice)
    return HTMLResponse(body, status_code=status.HTTP_401_UNAUTHORIZED, headers=_NO_STORE)


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/dashboard/", status_code=status.HTTP_307_TEMPORARY_REDIRECT)


@router.get("/dashboard")
@router.get("/dashboard/")
def dashboard(request: Request, service: Service) -> Response:
    if request_principal(service, request) is None:
        return _login_page()
    return HTMLResponse(_page("index.html"), headers=_NO_STORE)


@router.post("/dashboard/login")
async def login(request: Request, service: Service) -> Response:
    """The sign-in form: a right token (server.api_token or any of server.tokens) becomes a cookie
    naming it; a wrong one never replaces a good cookie."""
    server = service.settings.server
    if not principals(server):
        return RedirectResponse("/dashboard/", status_code=status.HTTP_303_SEE_OTHER)
    body = (await request.body()).decode("utf-8", "replace")
    try:
        offered = parse_qs(body, max_num_fields=4).get("token", [""])[0]
    except ValueError:  # more fields than a sign-in form has
        return _login_page("The sign-in form takes one field, token.")
    principal = principal_of_token(server, offered)
    if principal is None:
        return _login_page("That token is not right.")
    response = RedirectResponse("/dashboard/", status_code=status.HTTP_303_SEE_OTHER)
    ttl_s = server.session_hours * 3600
    cookie = issue_session(offered, ttl_s, name=principal.name)
    response.set_cookie(COOKIE_NAME, cookie, max_age=int(ttl_s), httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
    return response
