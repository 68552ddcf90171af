"""A scripted OpenAI-compatible chat-completions server on loopback, for tests.

A real HTTP server (stdlib ``ThreadingHTTPServer`` in a thread) that speaks the OpenAI
wire format: ``POST /v1/chat/completions`` and ``GET /v1/models``. It answers from a
script, in order:

- a ``str``: a normal completion with that text;
- ``Reply(...)``: text with a status (429, 500…), a delay, garbage bytes, custom usage
  or headers (``Retry-After``);
- a callable ``(request_json) -> str | Reply``: computed per request;
- once the script is used up: ``default`` if given (any of the above), else HTTP 400
  with the message "script exhausted" (not retried by clients, so tests notice).

It records every request (``server.requests``) so tests assert on what the client
actually sent: messages, text, number and size of images.

    with ScriptedLLMServer(["Action: Stop"]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordedRequest", "Reply", "ScriptedLLMServer", "ScriptItem", "chat_text"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    ``status`` other than 200 sends an OpenAI-style error body. ``body`` (bytes) is sent
    as is (garbage, HTML, truncated JSON). ``delay_s`` sleeps before answering (to make
    the client time out). ``hold``: the answer waits until the test sets this event (a
    model that has not answered yet, for as long as the test needs: no clock involved). ``usage`` = (prompt_tokens, completion_tokens); default: an
    estimate from the request and reply sizes.
    """

    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    hold: threading.Event | None = None
    body: bytes | None = None
    usage: tuple[int, int] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    content_type: str = "application/json"
    # function calling: (name, arguments JSON) pairs sent as message.tool_calls (OpenAI format);
    # the text is then the message content, or null when empty
    tool_calls: tuple[tuple[str, str], ...] = ()


ScriptItem = str | Reply | Callable[[dict[str, Any]], "str | Reply"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float
    client_port: int = 0  # the TCP port the request came from: one per connection

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body.decode("utf-8")) if self.body else {}

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.json.get("messages", []))

    def parts(self) -> list[dict[str, Any]]:
        """Every content part of every message (a plain string content is a text part)."""
        return _parts(self.messages)

    def text(self, role: str | None = None) -> str:
        """All text parts joined (of one role, or all)."""
        return "\n".join(
            p.get("text", "") for p in self.parts() if p.get("type") == "text" and (role is None or p["role"] == role)
        )

    def image_urls(self) -> list[str]:
        return [p["image_url"]["url"] for p in self.parts() if p.get("type") == "image_url"]

    def images(self) -> list[bytes]:
        """The decoded bytes of every ``data:`` image URL, in order."""
        out = []
        for url in self.image_urls():
            header, _, data = url.partition(",")
            if not header.startswith("data:") or ";base64" not in header:
                raise ValueError(f"not a base64 data URL: {url[:60]}")
            out.append(base64.b64decode(data))
        return out

    def image_sizes(self) -> list[tuple[int, int]]:
        """(width, height) of every image (needs Pillow)."""
        from PIL import Image

        sizes = []
        for raw in self.images():
            with Image.open(io.BytesIO(raw)) as img:
                sizes.append(img.size)
        return sizes

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")


class ScriptedLLMServer:
    """The server; a context manager (``start``/``stop``)."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        default: ScriptItem | None = None,
        model: str = "scripted-model",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.model = model
        self.default = default
        self._script: list[ScriptItem] = list(script)
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self._httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedLLMServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- script ------------------------------------------------------------------
    def script(self, items: Iterable[ScriptItem], *, default: ScriptItem | None = None) -> ScriptedLLMServer:
        """Replace the script (and the recorded requests)."""
        with self._lock:
            self._script = list(items)
            self.default = default
            self.requests.clear()
        return self

    def push(self, *items: ScriptItem) -> ScriptedLLMServer:
        """Append to the script."""
        with self._lock:
            self._script.extend(items)
        return self

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def planner_settings(self, **overrides: Any) -> Any:
        """``PlannerSettings`` pointing at this server, with fast retries for tests."""
        from mobile_agent.settings import PlannerSettings

        values: dict[str, Any] = {
            "base_url": self.base_url,
            "api_key": "test-key",
            "model": self.model,
            "timeout_s": 5.0,
            "max_retries": 2,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
        }
        values.update(overrides)
        return PlannerSettings(**values)

    def _next(self, request_json: dict[str, Any]) -> Reply:
        with self._lock:
            item = self._script.pop(0) if self._script else self.default
        if item is None:
            return Reply(status=400, text="scripted LLM server: script exhausted")
        if callable(item) and not isinstance(item, Reply):
            item = item(request_json)
        if isinstance(item, str):
            return Reply(text=item)
        if isinstance(item, Reply):
            return item
        raise TypeError(f"script items are str, Reply or callables, got {type(item).__name__}")


def _parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append({"type": "text", "text": content, "role": message.get("role")})
        elif isinstance(content, list):
            out.extend({**part, "role": message.get("role")} for part in content)
    return out


def chat_text(request_json: dict[str, Any]) -> str:
    """Every text part of a chat request's messages, joined: what a script callable reads of
    the request it answers (``RecordedRequest.text()`` of a recorded one)."""
    return "\n".join(p.get("text", "") for p in _parts(request_json.get("messages", [])) if p.get("type") == "text")


def _message(reply: Reply) -> dict[str, Any]:
    """The assistant message: text, or tool calls as the OpenAI API sends them."""
    if not reply.tool_calls:
        return {"role": "assistant", "content": reply.text}
    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(reply.tool_calls)
    ]
    return {"role": "assistant", "content": reply.text or None, "tool_calls": calls}


def _estimate_prompt_tokens(request_json: dict[str, Any]) -> int:
    chars = 0
    images = 0
    for message in request_json.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    chars += len(part.get("text", ""))
                elif part.get("type") == "image_url":
                    images += 1
    return chars // 4 + 1 + 765 * images


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _record(self, body: bytes) -> None:
            rec = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                received_at=time.monotonic(),
                client_port=int(self.client_address[1]),
            )
            with server._lock:
                server.requests.append(rec)

        def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json", headers)

        def do_GET(self) -> None:  # noqa: N802
            self._record(b"")
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(
                    200,
                    {"object": "list", "data": [{"id": server.model, "object": "model", "created": 0, "owned_by": "tests"}]},
                )
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            self._record(body)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                request_json = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            if request_json.get("stream"):
                self._send_json(400, {"error": {"message": "streaming is not scripted", "type": "invalid_request_error"}})
                return
            try:
                reply = server._next(request_json)
            except Exception as exc:  # a broken script callable: tell the test, don't hang it
                self._send_json(400, {"error": {"message": f"script error: {exc!r}", "type": "script_error"}})
                return
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.hold is not None:
                reply.hold.wait()
            if reply.body is not None:
                self._send(reply.status, reply.body, reply.content_type, reply.headers)
                return
            if reply.status != 200:
                self._send_json(
                    reply.status,
                    {"error": {"message": reply.text or f"scripted error {reply.status}", "type": "scripted", "code": reply.status}},
                    reply.headers,
                )
                return
            prompt_tokens, completion_tokens = reply.usage or (
                _estimate_prompt_tokens(request_json),
                len(reply.text) // 4 + 1,
            )
            self._send_json(
                200,
                {
                    "id": f"chatcmpl-scripted-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": request_json.get("model", server.model),
                    "choices": [
                        {
                            "index": 0,
                            "message": _message(reply),
                            "finish_reason": "tool_calls" if reply.tool_calls else reply.finish_reason,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                },
                reply.headers,
            )

    return Handler
