"""Task webhooks: a task's ``callback_url`` hears when the task waits for its person
(``waiting_for_user``) and when it ends (``task_finished``).

Each delivery is a JSON POST signed with HMAC-SHA256 over ``"{timestamp}.{body}"`` with
``server.webhook_secret`` (the scheme Stripe and GitHub use, so receivers know it):

    X-Mobile-Agent-Event: waiting_for_user
    X-Mobile-Agent-Timestamp: 1764000000
    X-Mobile-Agent-Signature: sha256=<hex digest>

``verify_signature`` is the receiver's side. A delivery that fails (an error, a status
other than 2xx) is tried again after ``webhook_backoff_s``, doubled each time, up to
``webhook_attempts`` tries, on a daemon thread: a slow receiver never holds up a run.
Without a secret nothing is sent (``create_task`` refuses a callback_url then).

May import: httpx, the standard library, ``mobile_agent`` (settings, redaction).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from typing import Any

import httpx

from mobile_agent.agent import Redactor
from mobile_agent.settings import Settings

__all__ = ["WebhookSender", "sign", "verify_signature"]

log = logging.getLogger(__name__)
_TIMEOUT_S = 10.0


def sign(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(secret: str, headers: Any, body: bytes, *, max_age_s: float = 300.0) -> bool:
    """True when ``headers`` carry a valid, fresh signature of ``body``."""
    timestamp = headers.get("X-Mobile-Agent-Timestamp") or ""
    signature = headers.get("X-Mobile-Agent-Signature") or ""
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > max_age_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


class WebhookSender:
    """Sends a task's webhooks (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        server = settings.server
        self.secret = server.webhook_secret.get_secret_value() if server.webhook_secret is not None else ""
        self.attempts = server.webhook_attempts
        self.backoff_s = server.webhook_backoff_s
        self.redact = Redactor.from_settings(settings)
        self.deliveries: list[threading.Thread] = []

    def send(self, url: str | None, event: str, payload: dict[str, Any]) -> threading.Thread | None:
        """Deliver ``payload`` in the background; the thread, or None when nothing is sent."""
        if not url or not self.secret:
            return None
        body = json.dumps(self.redact({"event": event, **payload}), ensure_ascii=False, default=str).encode()
        thread = threading.Thread(target=self._deliver, args=(url, event, body), name=f"webhook-{event}", daemon=True)
        thread.start()
        self.deliveries = [t for t in self.deliveries if t.is_alive()] + [thread]
        return thread

    def _deliver(self, url: str, event: str, body: bytes) -> None:
        delay = self.backoff_s
        for attempt in range(1, self.attempts + 1):
            timestamp = str(int(time.time()))
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "mobile-agent-webhook",
                "X-Mobile-Agent-Event": event,
                "X-Mobile-Agent-Timestamp": timestamp,
                "X-Mobile-Agent-Signature": sign(self.secret, timestamp, body),
                "X-Mobile-Agent-Attempt": str(attempt),
            }
            try:
                response = httpx.post(url, content=body, headers=headers, timeout=_TIMEOUT_S)
                if 200 <= response.status_code < 300:
                    return
                problem = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < self.attempts:
                log.info("webhook %s to %s failed (%s); trying again in %.1f s", event, url, problem, delay)
                time.sleep(delay)
                delay *= 2
            else:
                log.warning("webhook %s to %s failed %d times, giving up: %s", event, url, attempt, problem)


def task_finished(task_id: int, status: str, *, result: Any = None, error: Any = None) -> dict[str, Any]:
    """The payload of the ``task_finished`` webhook, the same whether the run ended or the
    task was cancelled before it ran."""
    return {"task_id": task_id, "status": status, "result": result, "error": error,
            "links": {"task": f"/v1/tasks/{task_id}"}}
