"""A fake WebDriverAgent for tests: an HTTP server on loopback that answers with the
real samples of ``tests/data/wda/`` (each names its source), so the iOS backend is
tested against WDA's real shapes. It keeps just enough state to choose between samples
(the session id, an open alert, locked or not); ids and booleans are substituted in the
samples' bodies, the shapes never change. Screenshots are PNGs of window * scale pixels
(WDA's ``/screenshot``: a base64 PNG string, ``FBScreenshotCommands.m``).

Not a simulated iPhone (that is ``simphone.ios.WdaFrontEnd``, ``simphone serve --ios``): this one
answers with the recorded samples themselves.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image

from mobile_agent.device.ios.apps import APPLE_APPS

DATA = Path(__file__).resolve().parent / "data" / "wda"


def sample(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def sample_names() -> list[str]:
    return sorted(p.stem for p in DATA.glob("*.json"))


@dataclass
class FakeWda:
    scale_sample: str = "wda_screen_3x"  # or "wda_screen" (2x)
    status_sample: str = "status"
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()).upper())
    sessions_made: int = 0
    locked: bool = False
    alert: str | None = None  # open alert's text
    active: str = "com.apple.springboard"  # the app in front
    source_sample: str = "source_settings.xml"  # what GET /source answers (source_springboard.xml: the home screen)
    installed: frozenset[str] = frozenset(APPLE_APPS.values()) | {"com.test.cert.TestCert"}
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def expire_session(self) -> None:
        """WDA restarted: the old session id is unknown from now on."""
        self.session_id = str(uuid.uuid4()).upper()

    @property
    def scale(self) -> int:
        return int(sample(self.scale_sample)["body"]["value"]["scale"])

    @property
    def window(self) -> tuple[int, int]:
        value = sample("window_size")["body"]["value"]
        return int(value["width"]), int(value["height"])

    def start(self) -> FakeWda:
        fake = self
        pngs: dict[int, str] = {}

        def png() -> str:  # window * scale pixels, made once per scale
            if fake.scale not in pngs:
                width, height = fake.window
                out = io.BytesIO()
                Image.new("RGB", (width * fake.scale, height * fake.scale), (242, 242, 247)).save(out, "PNG", compress_level=1)
                pngs[fake.scale] = base64.b64encode(out.getvalue()).decode("ascii")
            return pngs[fake.scale]

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json;charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _replay(self, name: str, *, value: Any = ..., session: Any = ...) -> None:
                s = sample(name)
                body = copy.deepcopy(s["body"])
                if value is not ...:
                    body["value"] = value
                if session is not ...:
                    body["sessionId"] = session
                elif "sessionId" in body and body["sessionId"] is not None:
                    body["sessionId"] = fake.session_id
                self._send(int(s["http_status"]), body)

            def _ok(self) -> None:  # FBResponseWithOK: value null
                self._send(200, {"value": None, "sessionId": fake.session_id})

            def _route(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                path = self.path
                fake.requests.append((method, path, body))
                if path.startswith("/session/"):
                    sid, _, rest = path[len("/session/"):].partition("/")
                    if sid != fake.session_id:
                        return self._replay("invalid_session")
                    path = "/" + rest
                route = (method, path)
                if route == ("GET", "/status"):
                    return self._replay(fake.status_sample)
                if route == ("POST", "/session"):
                    if not isinstance(body, dict) or not isinstance(body.get("capabilities"), dict):
                        return self._replay("session_not_created")
                    fake.sessions_made += 1
                    value = copy.deepcopy(sample("session_create")["body"]["value"])
                    value["sessionId"] = fake.session_id
                    return self._replay("session_create", value=value)
                if route == ("GET", "/screenshot"):
                    return self._send(200, {"value": png(), "sessionId": fake.session_id})
                if route == ("GET", "/source"):
                    return self._send(200, {"value": (DATA / fake.source_sample).read_text(encoding="utf-8"),
                                            "sessionId": fake.session_id})
                if route == ("GET", "/window/size"):
                    return self._replay("window_size")
                if route == ("GET", "/wda/screen"):
                    return self._replay(fake.scale_sample)
                if route == ("GET", "/wda/locked"):
                    return self._replay("locked_false", value=fake.locked)
                if route in (("POST", "/wda/unlock"), ("POST", "/wda/lock")):
                    fake.locked = path.endswith("/lock")
                    return self._ok()
                if route == ("GET", "/wda/activeAppInfo"):
                    value = copy.deepcopy(sample("active_app_info")["body"]["value"])
                    value["bundleId"] = fake.active
                    return self._replay("active_app_info", value=value)
                if route == ("POST", "/wda/pressButton"):
                    if isinstance(body, dict) and body.get("name") == "home":
                        fake.active = "com.apple.springboard"
                    return self._replay("press_button_home")
                if route == ("POST", "/wda/keys"):
                    return self._replay("keys")
                if route in (("POST", "/wda/apps/activate"), ("POST", "/wda/apps/launch")):
                    bundle = body.get("bundleId") if isinstance(body, dict) else None
                    if bundle not in fake.installed:
                        value = copy.deepcopy(sample("app_not_installed")["body"]["value"])
                        value["message"] = f"The application '{bundle}' is not installed on the device under test"
                        return self._replay("app_not_installed", value=value)
                    fake.active = str(bundle)
                    return self._ok()
                if route == ("POST", "/actions"):
                    return self._ok()
                if path.startswith("/alert/"):
                    if fake.alert is None:
                        return self._replay("no_such_alert")
                    if route == ("GET", "/alert/text"):
                        return self._replay("alert_text", value=fake.alert)
                    fake.alert = None
                    return self._ok()
                return self._replay("unknown_command")

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def calls(self, method: str, suffix: str) -> list[Any]:
        """Bodies of the requests whose path ends with ``suffix``."""
        return [b for m, p, b in self.requests if m == method and p.endswith(suffix)]
