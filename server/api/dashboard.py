"""The dashboard page (static files of this package, no build step, no CDN).

``/dashboard/?token=…`` stores the token in an HttpOnly cookie and drops it from the
address; the page, its images and its event streams then use the cookie.

May import: fastapi, ``server.*``.
"""

from __future__ import annotations

import hmac
from importlib import resources

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from server.deps import COOKIE_NAME, Service, token_ok

__all__ = ["router"]

router = APIRouter(include_in_schema=False)


def _page(name: str) -> str:
    return (resources.files("server") / "static" / name).read_text(encoding="utf-8")


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/dashboard/", status_code=status.HTTP_307_TEMPORARY_REDIRECT)


@router.get("/dashboard")
@router.get("/dashboard/")
def dashboard(request: Request, service: Service) -> Response:
    query_token = request.query_params.get("token")
    if query_token is not None and service.api_token is not None:
        # Only the token in the query counts here: a wrong one never replaces a good cookie.
        if not hmac.compare_digest(query_token.encode(), service.api_token.encode()):
            return HTMLResponse(_page("login.html"), status_code=status.HTTP_401_UNAUTHORIZED)
        response = RedirectResponse("/dashboard/", status_code=status.HTTP_303_SEE_OTHER)
        response.set_cookie(
            COOKIE_NAME, query_token, httponly=True, samesite="strict", secure=request.url.scheme == "https"
        )
        return response
    if not token_ok(service, request):
        return HTMLResponse(_page("login.html"), status_code=status.HTTP_401_UNAUTHORIZED)
    return HTMLResponse(_page("index.html"), headers={"Cache-Control": "no-store"})
