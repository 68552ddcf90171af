"""A small typed client of WebDriverAgent's HTTP API (``WdaClient``).

Why not facebook-wda: it returns untyped ``AttrDict``s, keeps module-level state
(``wda.DEBUG``, a shared requests session, retry decorators that sleep), wraps taps in
its own element/selector layer and pulls in ``retry``/``Deprecated``/``requests``; the
device layer needs a dozen endpoints with typed answers and our own errors, and httpx
is already a dependency (``doctor``, the planner client). So: a thin client over httpx.

Every WDA answer is the envelope ``{"value": ..., "sessionId": ...}`` (WebDriverAgent's
``FBResponsePayload.m``); an error is ``value = {"error", "message", "traceback"}`` with
the HTTP status of ``FBCommandStatus.m`` (``invalid session id`` and ``no such alert``
are 404, ``unknown error`` 500). Older WDA builds add ``"status": 0`` (facebook-wda's
DEVELOP.md); it is ignored. Real samples: ``tests/data/wda/`` (source named in each).

Coordinates here are **points** (WDA's unit); ``IosDevice`` converts from pixels.

May import: httpx, the standard library, ``mobile_agent.errors``, ``mobile_agent.urls``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

import httpx

from mobile_agent.errors import DeviceError
from mobile_agent.urls import shown_url

__all__ = ["WdaClient", "WdaError", "WdaScreen", "WdaStatus", "shown_url"]

INVALID_SESSION = "invalid session id"
NO_SUCH_ALERT = "no such alert"


class WdaError(DeviceError):
    """WDA answered an error object (``error`` is its W3C error string), or no JSON at all."""

    def __init__(self, message: str, *, error: str, http_status: int | None = None, serial: str | None = None) -> None:
        super().__init__(message, serial=serial, error=error, http_status=http_status)
        self.error = error
        self.http_status = http_status


@dataclass(frozen=True)
class WdaStatus:
    """What ``GET /status`` says: ``ready`` is None on old builds that do not send it."""

    state: str
    ready: bool | None
    os_name: str | None
    os_version: str | None
    device: str | None
    session_id: str | None


@dataclass(frozen=True)
class WdaScreen:
    """``GET /wda/screen``: UIKit's scale (pixels per point) and the status bar, in points."""

    scale: float
    status_bar_width: int
    status_bar_height: int


def _dict(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WdaError(f"WDA's {what} is not an object: {str(value)[:200]}", error="unexpected answer")
    return value


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


class WdaClient:
    """One WebDriverAgent server (``http://host:8100``). Calls that need a session make
    one on first use and make a new one once when WDA says the session is gone (a
    restarted WDA, another client's session)."""

    def __init__(self, base_url: str, *, timeout_s: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"a WDA address is an http(s) URL, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.shown_url = shown_url(self.base_url)  # what messages name: no credentials
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s, transport=transport)
        self._session_id: str | None = None

    def close(self) -> None:
        self._http.close()

    # --- the envelope ------------------------------------------------------------------

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[object, str | None]:
        """One call: (value, sessionId) of the envelope, or ``WdaError``."""
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise WdaError(f"WDA at {self.shown_url} did not answer {method} {path}: {exc}", error="unreachable") from exc
        except RuntimeError as exc:  # httpx: "Cannot send a request, as the client has been closed."
            if not self._http.is_closed:
                raise
            # its owner closed it meanwhile (the REST pool's probe replaced the phone a screenshot was using)
            raise WdaError(f"the client of WDA at {self.shown_url} was closed", error="unreachable") from exc
        try:
            payload = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise WdaError(
                f"WDA answered {method} {path} with HTTP {response.status_code} and no JSON: {response.text[:200]!r}",
                error="unknown error",
                http_status=response.status_code,
            ) from None
        envelope = _dict(payload, f"answer to {method} {path}")
        value = envelope.get("value")
        if isinstance(value, dict) and isinstance(value.get("error"), str):
            raise WdaError(
                f"WDA: {value['error']}: {str(value.get('message') or '')[:300]} ({method} {path}, HTTP {response.status_code})",
                error=value["error"],
                http_status=response.status_code,
            )
        if response.status_code >= 400:
            raise WdaError(f"WDA answered {method} {path} with HTTP {response.status_code}", error="unknown error",
                           http_status=response.status_code)
        return value, _str_or_none(envelope.get("sessionId"))

    def session_id(self) -> str:
        if self._session_id is None:
            self._session_id = self.create_session()
        return self._session_id

    def in_session(self, method: str, path: str, body: dict[str, Any] | None = None) -> object:
        """A call under ``/session/{id}``; a stale session is replaced once."""
        for attempt in (0, 1):
            try:
                return self.request(method, f"/session/{self.session_id()}{path}", body)[0]
            except WdaError as exc:
                if exc.error != INVALID_SESSION or attempt:
                    raise
                self._session_id = None
        raise AssertionError("unreachable")

    # --- without a session -------------------------------------------------------------

    def status(self) -> WdaStatus:
        value, session = self.request("GET", "/status")
        info = _dict(value, "status")
        os_info = info.get("os") if isinstance(info.get("os"), dict) else {}
        assert isinstance(os_info, dict)
        ready = info.get("ready")
        return WdaStatus(
            state=str(info.get("state", "")),
            ready=ready if isinstance(ready, bool) else None,
            os_name=_str_or_none(os_info.get("name")),
            os_version=_str_or_none(os_info.get("version")),
            device=_str_or_none(info.get("device")),
            session_id=session,
        )

    def create_session(self, bundle_id: str | None = None) -> str:
        caps: dict[str, Any] = {"bundleId": bundle_id} if bundle_id else {}
        value, envelope_id = self.request("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        session = _str_or_none(_dict(value, "new session").get("sessionId")) or envelope_id
        if not session:
            raise WdaError(f"WDA made a session without an id: {str(value)[:200]}", error="session not created")
        self._session_id = session
        return session

    def screenshot_png(self) -> bytes:
        value, _ = self.request("GET", "/screenshot")
        if not isinstance(value, str):
            raise WdaError(f"WDA's screenshot is not a base64 string: {str(value)[:100]}", error="unexpected answer")
        try:
            return base64.b64decode(value, validate=False)
        except (binascii.Error, ValueError) as exc:
            raise WdaError(f"WDA's screenshot is not base64: {exc}", error="unexpected answer") from exc

    def source(self) -> str:
        value, _ = self.request("GET", "/source")
        if not isinstance(value, str):
            raise WdaError("WDA's page source is not a string", error="unexpected answer")
        return value

    def locked(self) -> bool:
        value, _ = self.request("GET", "/wda/locked")
        if not isinstance(value, bool):
            raise WdaError(f"WDA's locked state is not a boolean: {value!r}", error="unexpected answer")
        return value

    def unlock(self) -> None:
        self.request("POST", "/wda/unlock")

    def lock(self) -> None:
        self.request("POST", "/wda/lock")

    def active_app(self) -> str | None:
        """The bundle id of the app in front (``com.apple.springboard`` on the home screen)."""
        value, _ = self.request("GET", "/wda/activeAppInfo")
        return _str_or_none(_dict(value, "active app").get("bundleId"))

    # --- in a session ------------------------------------------------------------------

    def window_size(self) -> tuple[int, int]:
        """(width, height) in points."""
        size = _dict(self.in_session("GET", "/window/size"), "window size")
        return int(size["width"]), int(size["height"])

    def screen(self) -> WdaScreen:
        info = _dict(self.in_session("GET", "/wda/screen"), "screen")
        bar = info.get("statusBarSize") if isinstance(info.get("statusBarSize"), dict) else {}
        assert isinstance(bar, dict)
        scale = info.get("scale")
        if not isinstance(scale, (int, float)) or scale <= 0:
            raise WdaError(f"WDA's screen scale is not a positive number: {scale!r}", error="unexpected answer")
        return WdaScreen(float(scale), int(bar.get("width", 0)), int(bar.get("height", 0)))

    def press_button(self, name: str) -> None:
        """``home``, ``volumeUp``, ``volumeDown`` (WDA's ``/wda/pressButton``)."""
        self.in_session("POST", "/wda/pressButton", {"name": name})

    def keys(self, text: str) -> None:
        """Type ``text`` into the focused element (any Unicode; ``\\n`` is Return)."""
        self.in_session("POST", "/wda/keys", {"value": list(text)})

    def launch(self, bundle_id: str) -> None:
        self.in_session("POST", "/wda/apps/launch", {"bundleId": bundle_id})

    def activate(self, bundle_id: str) -> None:
        """Bring ``bundle_id`` to the front, starting it when it is not running."""
        self.in_session("POST", "/wda/apps/activate", {"bundleId": bundle_id})

    def touch(self, points: list[tuple[float, float]], *, hold_ms: int = 0, move_ms: int = 0) -> None:
        """One finger (W3C actions): down at the first point, hold, move through the rest
        over ``move_ms``, up. A tap is one point, a long press one point held."""
        x0, y0 = points[0]
        steps: list[dict[str, Any]] = [
            {"type": "pointerMove", "duration": 0, "x": round(x0), "y": round(y0)},
            {"type": "pointerDown", "button": 0},
        ]
        if hold_ms:
            steps.append({"type": "pause", "duration": int(hold_ms)})
        rest = points[1:]
        for x, y in rest:
            steps.append({"type": "pointerMove", "duration": int(move_ms / len(rest)), "x": round(x), "y": round(y)})
        steps.append({"type": "pointerUp", "button": 0})
        action = {"type": "pointer", "id": "finger1", "parameters": {"pointerType": "touch"}, "actions": steps}
        self.in_session("POST", "/actions", {"actions": [action]})

    def alert_text(self) -> str | None:
        """The open alert's text (title and message), or None when no alert is open."""
        try:
            value = self.in_session("GET", "/alert/text")
        except WdaError as exc:
            if exc.error == NO_SUCH_ALERT:
                return None
            raise
        return value if isinstance(value, str) else None

    def accept_alert(self) -> None:
        self.in_session("POST", "/alert/accept")

    def dismiss_alert(self) -> None:
        self.in_session("POST", "/alert/dismiss")
