"""Event streams are bounded per token (``server.event_streams_per_token``), as live views are:
each open ``GET /v1/tasks/{id}/events`` reads the store every few seconds for as long as it is
open, so one token opening streams without end would load the service for everyone. Over the
limit: a 429 naming the setting; another token is not held to the first one's streams; a closed
stream frees its place. Real uvicorn, the simulated phone over the real adb server."""

from __future__ import annotations

import time
from contextlib import ExitStack

import httpx
import pytest

from tests.server_fixtures import TaggedPlanner

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SETTINGS = {"server.api_token": "streams-admin-1", "server.event_streams_per_token": 2,
            "server.tokens": {"alice": {"token": "streams-alice-1", "role": "user", "team": "lab"},
                              "carol": {"token": "streams-carol-1", "role": "user", "team": "lab"}}}
ALICE = {"Authorization": "Bearer streams-alice-1"}
CAROL = {"Authorization": "Bearer streams-carol-1"}


def test_a_token_has_at_most_its_limit_of_event_streams_open(service, sim_phones) -> None:
    (phone,) = sim_phones(1)
    live = service([phone], planner=TaggedPlanner(plans={"t-ask": ["Ask user (Which account?)"]}), **SETTINGS)
    created = live.client.post("/v1/tasks", json={"instruction": "[t-ask] log in"}, headers=ALICE)
    assert created.status_code == 202, created.text
    task_id = created.json()["id"]
    live.wait_task(task_id, statuses={"waiting_for_user"})  # it stays open: its streams do not end
    url = f"{live.url}/v1/tasks/{task_id}/events"
    with httpx.Client(timeout=30) as client, ExitStack() as streams:
        first = streams.enter_context(client.stream("GET", url, headers=ALICE))
        second = streams.enter_context(client.stream("GET", url, headers=ALICE))
        assert first.status_code == second.status_code == 200
        with client.stream("GET", url, headers=ALICE) as over:  # a stream: before the limit it would stay open
            assert over.status_code == 429, over.status_code
            assert "server.event_streams_per_token" in over.read().decode()
        with client.stream("GET", url, headers=CAROL) as carols:  # a teammate's token: its own count
            assert carols.status_code == 200
        first.close()  # the server ends that stream when it sees the client gone
        deadline = time.monotonic() + 60  # a guard for a broken build only
        while True:
            with client.stream("GET", url, headers=ALICE) as third:
                if third.status_code == 200:
                    break
                assert third.status_code == 429, third.status_code
            assert time.monotonic() < deadline, "a closed stream never freed its place"
            time.sleep(0.2)
