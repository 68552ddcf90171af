"""A webhook receiver on loopback for service and farm tests: records every delivery whose
signature (``server.webhooks.verify_signature``) holds, counts the others, answers 204 (the
first ``fail_first`` requests: 500, unrecorded, so the sender tries again). A wait wakes on each
delivery (no polling); its timeout is a guard for a broken build only."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from server.webhooks import verify_signature

__all__ = ["WebhookReceiver"]


class WebhookReceiver:
    def __init__(self, secret: str, *, fail_first: int = 0) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.unsigned = 0
        self.failed = 0  # requests answered 500
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.arrived:
                    if receiver.failed < fail_first:
                        receiver.failed += 1
                        self.send_response(500)
                        self.end_headers()
                        return
                    if verify_signature(secret, self.headers, body):
                        receiver.bodies.append(json.loads(body))
                    else:
                        receiver.unsigned += 1
                    receiver.arrived.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, name="webhook-receiver", daemon=True).start()

    def finished(self, task_id: int) -> list[dict[str, Any]]:
        """The ``task_finished`` deliveries for ``task_id`` so far."""
        with self.arrived:
            return [b for b in self.bodies if b["event"] == "task_finished" and b["task_id"] == task_id]

    def wait_finished(self, task_id: int, timeout: float = 60.0) -> dict[str, Any]:
        """The first ``task_finished`` for ``task_id``, once it has come."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: self.finished(task_id), timeout), self.bodies
            return self.finished(task_id)[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
