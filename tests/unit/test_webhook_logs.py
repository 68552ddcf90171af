"""A webhook's URL in the service's log: many receivers keep their secret in the URL (Slack's
``https://hooks.slack.com/services/T…/B…/<secret>``, a ``?token=`` query, ``user:pass@``), so a
failed delivery's log lines name the receiver by scheme, host and port only."""

from __future__ import annotations

import logging

import pytest

from mobile_agent.settings import load_settings
from server.webhooks import WebhookSender

SECRET = "xoxb7Qm2SECRETpart"


def test_a_failed_delivery_logs_the_receiver_without_its_secret(caplog: pytest.LogCaptureFixture) -> None:
    settings = load_settings(overrides={
        "server.webhook_secret": "signing-secret", "server.webhook_allow": ["127.0.0.1"],
        "server.webhook_attempts": 2, "server.webhook_backoff_s": 0.01,
    })
    sender = WebhookSender(settings)
    url = f"http://hook-user:{SECRET}@127.0.0.1:9/services/T0/B0/{SECRET}?token={SECRET}"  # port 9: nobody answers
    with caplog.at_level(logging.INFO, logger="server.webhooks"):
        thread = sender.send(url, "task_finished", {"task_id": 1, "status": "completed"})
        assert thread is not None
        thread.join(30)
    lines = [r.getMessage() for r in caplog.records if r.name == "server.webhooks"]
    assert len(lines) == 2 and "giving up" in lines[-1], lines  # a retry, then the end: both say where
    assert all("http://127.0.0.1:9" in line for line in lines), lines
    assert not any(SECRET in line for line in lines), lines
