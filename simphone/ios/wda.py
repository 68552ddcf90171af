"""``WdaFrontEnd``: a simulated phone behind WebDriverAgent's HTTP API.

What a client sees is WDA's (the samples with their sources: ``tests/data/wda/``):
every answer is the envelope ``{"value": …, "sessionId": …}`` (WDA's
``FBResponsePayload.m``), errors are ``{"error", "message", "traceback"}`` with
``FBCommandStatus.m``'s strings and HTTP codes; one session at a time, and a session id
that is not the current one answers ``invalid session id`` (404, "Session does not
exist", ``FBRoute.m``); coordinates are points, screenshots pixels (``scale``).

Apps are named by their iOS bundle ids (``BUNDLES``: each hosted app's iOS counterpart's
real id, its source beside it): ``/wda/activeAppInfo`` (``com.apple.springboard`` on the home
screen), ``/wda/apps/launch``, ``activate`` and ``terminate`` take and give only those; no
Android package reaches a WDA client.

The page source is the phone's ``ground_truth`` written as WDA's XML
(``XCUIElementTypeApplication``, named by the app's name, > ``Window`` > ``Other`` > elements
with ``type``, ``value``, ``name``, ``label``, ``enabled``, ``visible``, ``accessible``,
``x``/``y``/``width``/``height`` in points and ``index``, in the attribute order of the real
SpringBoard sample ``source_springboard.xml``). On the home screen the apps are
``XCUIElementTypeIcon`` elements named by their labels, in the page's own icon element and
in the Dock, as SpringBoard's are.

The system bars are iOS's (``Phone.system_look = "ios"``): an iOS status bar and the home
indicator instead of Android's navigation bar, so there is no Back button: Back is the edge
swipe from the left edge (understood here) or an app's own button. The apps themselves keep
the simulated phone's Android look.
Alerts: the simulated phone's system permission dialog (``simphone.permissions``) is the one
alert: ``/alert/text`` answers its request (the simulated phone's Android wording, "Allow
Google Maps to access this device’s location?"), ``/alert/accept`` allows, ``/alert/dismiss``
does not; with no dialog, ``no such alert`` (404), as WDA answers.

One route is not WDA's: ``POST /simphone/shell`` ``{"argv": [...]}`` answers
``{"exitCode", "stdout", "stderr"}`` from the simulated phone's own commands (``dumpsys
simphone``, ``cmd simphone reset``, ``settings put`` …), the simulator's channel for the
evaluation harness (``eval.mobile_eval.environment``), as ``dumpsys simphone`` is the simulated
Android phone's own service over adb. A real WDA answers it ``unknown command``.

May import: the standard library, the rest of ``simphone``.
"""

from __future__ import annotations

import base64
import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from xml.sax.saxutils import quoteattr

from simphone import permissions
from simphone.apps import APPS
from simphone.assembly import Phone

__all__ = ["BUNDLES", "LAUNCHER", "NO_IOS_ID", "SPRINGBOARD", "WdaFrontEnd", "page_source"]

# The iOS bundle id of each app the simulated phone hosts -> the package that hosts it: what
# WDA names an app by (activeAppInfo, launch/activate, the page source). Each id is the one
# its iOS counterpart really has, read from the source named beside it (the same sources as
# the agent's table, ``mobile_agent/device/ios/apps.py``):
#   [apple]    Apple Platform Deployment guide, "Bundle IDs for native iPhone and iPad apps"
#              (support.apple.com/guide/deployment/depece748c41)
#   [midscene] web-infra-dev/midscene packages/ios/src/appNameMapping.ts @ 45f476ecef00
#   [upgrader] larryaasen/upgrader test/mock_itunes_client.dart @ 828ba88b1238 (App Store lookup 585027354)
#   [telegram] TelegramMessenger/Telegram-iOS build-system/appstore-configuration.json @ 99d63e732830
#   [appscan]  leverdeterre/shakeMyApps-appScan-blog _pages/ios/id/<id>.md, _pages/ios_apps/<id>.md
#              (App Store BundleId and App Name per app)
# The hosted apps keep their own (Android) look; where the phone's app plays an Apple app's
# part (its Notes, Calendar, Clock ...), it answers to the Apple app's id.
BUNDLES: dict[str, str] = {
    "com.apple.Preferences": "com.android.settings",  # [apple] Settings
    "com.apple.mobilenotes": "com.google.android.keep",  # [apple] Notes
    "com.apple.mobilecal": "com.google.android.calendar",  # [apple] Calendar
    "com.apple.weather": "com.weather.Weather",  # [apple] Weather
    "com.apple.mobiletimer": "com.google.android.deskclock",  # [apple] Clock
    "com.apple.camera": "com.android.camera2",  # [apple] Camera
    "com.apple.mobilephone": "com.google.android.dialer",  # [apple] Phone
    "com.apple.MobileSMS": "com.google.android.apps.messaging",  # [apple] Messages
    "com.apple.mobileslideshow": "com.google.android.apps.photos",  # [apple] Photos
    "com.apple.MobileAddressBook": "com.google.android.contacts",  # [apple] Contacts
    "com.apple.calculator": "com.google.android.calculator",  # [apple] Calculator
    "com.apple.DocumentsApp": "com.google.android.apps.nbu.files",  # [apple] Files
    # [apple] App Store: the iPhone's store plays the Play Store's part (the Play Store itself has no iOS app)
    "com.apple.AppStore": "com.android.vending",
    "com.google.chrome.ios": "com.android.chrome",  # [midscene] Chrome
    "com.google.Gmail": "com.google.android.gm",  # [midscene] Gmail
    "com.google.Maps": "com.google.android.apps.maps",  # [upgrader] Google Maps
    "com.google.ios.youtube": "com.google.android.youtube",  # [midscene] YouTube
    "com.zhiliaoapp.musically": "com.zhiliaoapp.musically",  # [midscene] TikTok: its iOS id is its Android package's string
    "com.amazon.mp3.AmazonCloudPlayer": "com.amazon.mp3",  # [appscan] Amazon Music
    "com.alibaba.sourcing": "com.alibaba.intl.android.apps.poseidon",  # [appscan] Alibaba.com
    "net.whatsapp.WhatsApp": "com.whatsapp",  # [midscene] WhatsApp
    "net.whatsapp.WhatsAppSMB": "com.whatsapp.w4b",  # [appscan] WhatsApp Business
    "com.burbn.instagram": "com.instagram.android",  # [midscene] Instagram
    "ph.telegra.Telegraph": "org.telegram.messenger",  # [telegram] Telegram
    "com.spotify.client": "com.spotify.music",  # [midscene] Spotify
    "com.facebook.Facebook": "com.facebook.katana",  # [midscene] Facebook
    "com.8bit.bitwarden": "com.x8bit.bitwarden",  # [appscan] Bitwarden
}
# Hosted apps with no iOS bundle id here, and why: WDA cannot name them (``/wda/activeAppInfo``
# answers 'unknown error' while one is in front; they cannot be activated by any id).
NO_IOS_ID: dict[str, str] = {
    "com.instagram.barcelona": "Threads: no published source for its iOS bundle id was found",
}
SPRINGBOARD = "com.apple.springboard"  # WebDriverAgent's FBSpringboardApplication (SPRINGBOARD_BUNDLE_ID)
LAUNCHER = "com.android.launcher3"
_PACKAGES = {package: bundle for bundle, package in BUNDLES.items()}

# FBCommandStatus.m: error -> (HTTP status, default message)
_ERRORS = {
    "invalid session id": (404, "A session is either terminated or not started"),
    "no such alert": (404, "An attempt was made to operate on a modal dialog when one was not open"),
    "unknown command": (404, "The requested resource could not be found, or a request was received using an HTTP "
                              "method that is not supported by the mapped resource"),
    "invalid argument": (400, "The arguments passed to the command are either invalid or malformed"),
    "session not created": (500, "A new session could not be created"),
    "unknown error": (500, "An unknown server-side error occurred while processing the command"),
}


class WdaFailure(Exception):
    def __init__(self, error: str, message: str | None = None) -> None:
        super().__init__(message or _ERRORS[error][1])
        self.error = error
        self.message = message or _ERRORS[error][1]


def _bundle_of(package: str) -> str:
    """The iOS bundle id WDA names the hosted ``package`` by (``WdaFailure`` for an app with none)."""
    if package == LAUNCHER:
        return SPRINGBOARD
    if package in _PACKAGES:
        return _PACKAGES[package]
    raise WdaFailure("unknown error", f"the simulated iPhone has no iOS bundle id for this app "
                                      f"({NO_IOS_ID.get(package, 'not one of its hosted apps')})")


def _frame(x: float, y: float, w: float, h: float) -> str:
    return f'x="{round(x)}" y="{round(y)}" width="{round(w)}" height="{round(h)}"'


class _Source:
    """WDA's XML, written the way the real sample ``tests/data/wda/source_springboard.xml``
    (a WDA ``/source`` of iOS 17.2) writes it: attributes in its order (``type``, ``value``,
    ``name``, ``label``, ``enabled``, ``visible``, ``accessible``, the frame, ``index``), each
    element's ``index`` its place among its siblings."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._children: list[int] = [0]

    def open(self, kind: str, frame: str, *, value: str = "", name: str = "", label: str = "",
             visible: bool = True, accessible: bool = False, leaf: bool = False) -> None:
        texts = "".join(f" {key}={quoteattr(text)}" for key, text in (("value", value), ("name", name), ("label", label))
                        if text)
        indent = "  " * (len(self._children) - 1)
        index = self._children[-1]
        self._children[-1] += 1
        self.lines.append(
            f'{indent}<{kind} type="{kind}"{texts} enabled="true" visible="{str(visible).lower()}" '
            f'accessible="{str(accessible).lower()}" {frame} index="{index}"' + ("/>" if leaf else ">"))
        if not leaf:
            self._children.append(0)

    def close(self, kind: str) -> None:
        self._children.pop()
        self.lines.append(f"{'  ' * (len(self._children) - 1)}</{kind}>")


def page_source(phone: Phone, scale: int) -> str:
    """The phone's screen as WDA's XML page source (frames in points). On the home screen
    (SpringBoard: the application's name is ``" "``) each app is one ``XCUIElementTypeIcon``
    named by its label, its frame the icon and the label under it, inside the page's own
    ``XCUIElementTypeIcon``; the Dock's icons are in the ``XCUIElementTypeOther`` named "Dock",
    as in the real sample."""
    width, height = phone.width // scale, phone.height // scale
    home = phone.foreground == LAUNCHER
    name = " " if home else phone.apps[str(phone.foreground)].label

    def frame(box: tuple[float, float, float, float]) -> str:
        left, top, right, bottom = (v / scale for v in box)
        return _frame(left, top, right - left, bottom - top)

    full = _frame(0, 0, width, height)
    elements = phone.ground_truth()
    tiles, dock, used = _home_icons(elements) if home else ([], [], set())
    out = _Source()
    out.open("XCUIElementTypeApplication", full, name=name, label=name)
    out.open("XCUIElementTypeWindow", full)
    out.open("XCUIElementTypeOther", full)
    hidden, shown = _other_pages(phone) if tiles else ([], 0)
    for page in range(len(hidden) + 1 if tiles else 0):
        if page == shown:
            out.open("XCUIElementTypeIcon", full)  # the page shown (the sample's pages are icons too)
            for label, box in tiles:
                out.open("XCUIElementTypeIcon", frame(box), name=label, label=label, accessible=True, leaf=True)
            out.close("XCUIElementTypeIcon")
            continue
        # a page not shown: listed all the same, not visible, no frame (the sample's second page)
        nothing = _frame(0, 0, 0, 0)
        out.open("XCUIElementTypeIcon", nothing, visible=False)
        for label in hidden[page if page < shown else page - 1]:
            out.open("XCUIElementTypeIcon", nothing, name=label, label=label, visible=False, leaf=True)
        out.close("XCUIElementTypeIcon")
    for i, element in enumerate(elements):
        if i in used:
            continue
        label = str(element.get("text") or element.get("description") or "")
        field = element.get("kind") == "widget" and "text field" in str(element.get("description") or "").lower()
        if field:  # the rule of the simulated phone's uiautomator dump (EditText there)
            kind = "XCUIElementTypeTextField"
        elif element.get("kind") == "icon":
            kind = "XCUIElementTypeButton" if element.get("clickable") else "XCUIElementTypeImage"
        else:
            kind = "XCUIElementTypeButton" if element.get("clickable") else "XCUIElementTypeStaticText"
        value = ""
        if label and kind == "XCUIElementTypeStaticText":
            value = label
        elif field and element.get("text"):
            value = str(element["text"])  # what the field holds
        out.open(kind, frame(element["box"]), value=value, name=label, label=label, accessible=bool(label), leaf=True)
    if dock:
        top = min(box[1] for _, box in dock)
        bottom = max(box[3] for _, box in dock)
        area = (0.0, top - 7 * scale, float(phone.width), bottom + 7 * scale)
        out.open("XCUIElementTypeOther", frame(area))
        out.open("XCUIElementTypeOther", frame(area), name="Dock", label="Dock")
        for label, box in dock:
            out.open("XCUIElementTypeIcon", frame(box), name=label, label=label, accessible=True, leaf=True)
        out.close("XCUIElementTypeOther")
        out.close("XCUIElementTypeOther")
    out.close("XCUIElementTypeOther")
    out.close("XCUIElementTypeWindow")
    out.close("XCUIElementTypeApplication")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + "\n".join(out.lines)


_APP_ICON = " app icon"  # how the simulated launcher describes an app's icon


def _other_pages(phone: Phone) -> tuple[list[list[str]], int]:
    """The labels of the apps on each home page not shown, in page order, and the index of the
    page shown (SpringBoard's source lists every page's icons; only the shown one's are visible)."""
    from simphone.apps import launcher  # here: importing it registers the launcher app (after the catalogue)

    ctx = phone.app_context(LAUNCHER)
    if ctx.view.get("view") != "home":
        return [], 0
    all_pages = launcher.pages(ctx)
    shown = min(int(ctx.view.get("page", 0)), len(all_pages) - 1)
    return [[APPS[p].label for p in page] for i, page in enumerate(all_pages) if i != shown], shown


def _home_icons(elements: list[dict[str, Any]]) -> tuple[list[tuple[str, tuple[float, float, float, float]]],
                                                         list[tuple[str, tuple[float, float, float, float]]],
                                                         set[int]]:
    """The launcher's app tiles: (label, pixel box) of those with their label under the icon
    (the page), of those without (the Dock), and the ground truth's indices they take."""
    tiles: list[tuple[str, tuple[float, float, float, float]]] = []
    dock: list[tuple[str, tuple[float, float, float, float]]] = []
    used: set[int] = set()
    for i, element in enumerate(elements):
        description = str(element.get("description") or "")
        if element.get("kind") != "icon" or not description.endswith(_APP_ICON):
            continue
        label = description[: -len(_APP_ICON)]
        left, top, right, bottom = (float(v) for v in element["box"])
        under = next((j for j, other in enumerate(elements)
                      if j not in used and other.get("text") == label
                      and 0 <= other["box"][1] - bottom <= 60 and other["box"][0] < right and other["box"][2] > left), None)
        used.add(i)
        if under is None:
            dock.append((label, (left, top, right, bottom)))
            continue
        used.add(under)
        text = elements[under]["box"]
        tiles.append((label, (min(left, text[0]), top, max(right, text[2]), float(text[3]))))
    return tiles, dock, used


class WdaFrontEnd:
    """``phone`` served as WDA on ``host:port`` (0: any free port), ``scale`` pixels per point."""

    def __init__(self, phone: Phone, *, scale: int = 3, host: str = "127.0.0.1", port: int = 0,
                 shell_route: bool = True) -> None:
        if scale not in (1, 2, 3):
            raise ValueError(f"an iPhone's scale is 1, 2 or 3, got {scale}")
        if phone.width % scale or phone.height % scale:
            raise ValueError(f"a {phone.width}x{phone.height} screen is not a whole number of points at {scale}x")
        self.phone = phone
        phone.system_look = "ios"  # an iOS status bar and the home indicator, no Back/Home/Recents buttons
        self.scale = scale
        self.shell_route = shell_route  # False: no /simphone/shell, as every real WDA (its harness resets by WDA alone)
        self.session_id: str | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}"

    def start(self) -> WdaFrontEnd:
        self._thread = threading.Thread(target=self._server.serve_forever, name="simphone-wda", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def restart(self) -> None:
        """WDA restarted: the session is gone."""
        self.session_id = None

    # --- commands (points in, points out) ----------------------------------------------------

    def _points(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise WdaFailure("invalid argument", f"a coordinate must be a number, got {value!r}")
        return float(value) * self.scale

    def _actions(self, body: dict[str, Any]) -> None:
        """W3C actions of one touch pointer: the finger's path, played as tap/long press/swipe."""
        sources = body.get("actions")
        if not isinstance(sources, list) or not sources or not isinstance(sources[0], dict):
            raise WdaFailure("invalid argument", "'actions' must be a non-empty array of action sources")
        path: list[tuple[float, float]] = []
        down_ms = 0
        pressed = False
        for item in sources[0].get("actions") or []:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "pointerMove":
                path.append((self._points(item.get("x")), self._points(item.get("y"))))
                if pressed:
                    down_ms += int(item.get("duration") or 0)
            elif kind == "pointerDown":
                pressed = True
            elif kind == "pause" and pressed:
                down_ms += int(item.get("duration") or 0)
            elif kind not in ("pointerUp", "pause"):
                raise WdaFailure("invalid argument", f"unsupported action item {item!r}")
        if not path or not pressed:
            raise WdaFailure("invalid argument", "a touch needs a pointerMove and a pointerDown")
        (x1, y1), (x2, y2) = path[0], path[-1]
        if abs(x2 - x1) < self.scale * 10 and abs(y2 - y1) < self.scale * 10:
            (self.phone.long_press if down_ms >= 500 else self.phone.tap)(x1, y1)
        elif x1 <= 2 * self.scale and x2 - x1 > self.phone.width / 3:
            self.phone.press_back()  # iOS's Back: the edge swipe from the left edge
        else:
            self.phone.swipe(x1, y1, x2, y2, duration_ms=max(50, down_ms))

    def _keys(self, body: dict[str, Any]) -> None:
        value = body.get("value")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise WdaFailure("invalid argument", "'value' must be an array of strings")
        text = "".join(value)
        for i, line in enumerate(text.split("\n")):
            if i:
                self.phone.press_enter()
            if line:
                self.phone.type_text(line)

    def _package(self, body: dict[str, Any]) -> str:
        """The hosted package of the body's ``bundleId`` (only iOS bundle ids name apps here)."""
        bundle = body.get("bundleId")
        package = BUNDLES.get(bundle) if isinstance(bundle, str) else None
        if package is None or package not in self.phone.installed:
            raise WdaFailure("invalid argument", f"The application '{bundle}' is not installed on the device under test")
        return package

    def _activate(self, body: dict[str, Any]) -> None:
        self.phone.launch(self._package(body))

    def _terminate(self, body: dict[str, Any]) -> bool:
        """WDA's ``/wda/apps/terminate``: true when the app was running and is stopped now."""
        package = self._package(body)
        running = package == self.phone.foreground or package in self.phone.recents
        self.phone.force_stop(package)
        return running

    def _press(self, body: dict[str, Any]) -> None:
        if body.get("name") != "home":
            raise WdaFailure("invalid argument", f"The button '{body.get('name')}' is unknown")
        self.phone.go_home()

    def _screenshot(self) -> str:
        return base64.b64encode(self.phone.screencap_png()).decode("ascii")

    def _status(self) -> dict[str, Any]:
        return {"build": {"time": "Jan  1 2026 00:00:00", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner"},
                "os": {"testmanagerdVersion": 28, "name": "iOS", "sdkVersion": "17.0", "version": "17.0"}, "device": "iphone",
                "ios": {"ip": "127.0.0.1"}, "message": "WebDriverAgent is ready to accept commands",
                "state": "success", "ready": True}

    def _routes(self) -> dict[tuple[str, str], Callable[[dict[str, Any]], object]]:
        phone = self.phone
        return {
            ("GET", "/screenshot"): lambda _: self._screenshot(),
            ("GET", "/source"): lambda _: page_source(phone, self.scale),
            ("GET", "/window/size"): lambda _: {"width": phone.width // self.scale, "height": phone.height // self.scale},
            # 47 points: the status bar above the navigation bar of the real Settings sample (y=47)
            ("GET", "/wda/screen"): lambda _: {"statusBarSize": {"width": phone.width // self.scale, "height": 47},
                                                "scale": self.scale},
            ("GET", "/wda/locked"): lambda _: bool(phone.keyguard_showing),
            ("POST", "/wda/unlock"): lambda _: phone.unlock(),
            ("GET", "/wda/activeAppInfo"): lambda _: {"processArguments": {"env": {}, "args": []}, "name": "",
                                                       "pid": 1, "bundleId": _bundle_of(str(phone.foreground))},
            ("GET", "/alert/text"): lambda _: self._alert_text(),
            ("POST", "/alert/accept"): lambda _: self._answer_alert(True),
            ("POST", "/alert/dismiss"): lambda _: self._answer_alert(False),
            **({("POST", "/simphone/shell"): self._shell} if self.shell_route else {}),  # the simulator's own route
        }

    def _shell(self, body: dict[str, Any]) -> dict[str, Any]:
        argv = body.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise WdaFailure("invalid argument", "'argv' must be a non-empty array of strings")
        result = self.phone.run(list(argv))
        return {"exitCode": result.exit_code, "stdout": result.stdout.decode("utf-8", "replace"),
                "stderr": result.stderr.decode("utf-8", "replace")}

    def _session_routes(self) -> dict[tuple[str, str], Callable[[dict[str, Any]], object]]:
        return {
            ("POST", "/actions"): self._actions,
            ("POST", "/wda/keys"): self._keys,
            ("POST", "/wda/pressButton"): self._press,
            ("POST", "/wda/apps/activate"): self._activate,
            ("POST", "/wda/apps/launch"): self._activate,
            ("POST", "/wda/apps/terminate"): self._terminate,
        }

    def _alert_text(self) -> str:
        asked = self.phone.permission_request
        if asked is None:
            raise WdaFailure("no such alert")
        return permissions.REQUESTS[asked["group"]].format(label=self.phone.apps[asked["package"]].label)

    def _answer_alert(self, allow: bool) -> None:
        if self.phone.permission_request is None:
            raise WdaFailure("no such alert")
        self.phone.answer_permission(allow)

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, envelope) for one request."""
        try:
            with self._lock:
                value = self._dispatch(method, path, body)
            return 200, {"value": value, "sessionId": self.session_id}
        except WdaFailure as failure:
            status = _ERRORS[failure.error][0]
            return status, {"value": {"error": failure.error, "message": failure.message, "traceback": ""},
                            "sessionId": self.session_id}
        except Exception as exc:  # noqa: BLE001 - WDA answers anything else as 'unknown error'
            return 500, {"value": {"error": "unknown error", "message": str(exc)[:300], "traceback": ""},
                         "sessionId": self.session_id}

    def _dispatch(self, method: str, path: str, body: dict[str, Any]) -> object:
        if (method, path) == ("GET", "/status"):
            return self._status()
        if (method, path) == ("POST", "/session"):
            if not isinstance(body.get("capabilities"), dict):
                raise WdaFailure("session not created", "'capabilities' is mandatory to create a new session")
            self.session_id = str(uuid.uuid4()).upper()
            return {"sessionId": self.session_id, "capabilities": {"device": "iphone", "sdkVersion": "17.0"}}
        in_session = path.startswith("/session/")
        if in_session:
            sid, _, rest = path[len("/session/"):].partition("/")
            if sid != self.session_id:
                raise WdaFailure("invalid session id", "Session does not exist")
            path = "/" + rest
            if (method, path) in self._session_routes():
                return self._session_routes()[(method, path)](body)
        if (method, path) in self._routes():
            return self._routes()[(method, path)](body)
        raise WdaFailure("unknown command")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        front = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "WebDriverAgent/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = min(int(self.headers.get("Content-Length") or 0), 1 << 20)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw.strip() else {}
                except (json.JSONDecodeError, UnicodeDecodeError):
                    body = None
                if not isinstance(body, dict):
                    status, envelope = 400, {"value": {"error": "invalid argument", "message": _ERRORS["invalid argument"][1],
                                                       "traceback": ""}, "sessionId": front.session_id}
                else:
                    status, envelope = front.answer(method, self.path.split("?")[0].rstrip("/") or "/", body)
                data = json.dumps(envelope).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json;charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        return Handler
