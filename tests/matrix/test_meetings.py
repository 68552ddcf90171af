"""Every row of ``MEETINGS`` (``tests/matrix/design.py``): the service's own features on together,
through the interface the row names, each judged where the features meet. Real parts as in the
cells: uvicorn, the simulated phone over the real adb server (a private one, stopped with
SIGSTOP, where the row hangs it), ``mobile-agent mcp`` over HTTP as a client reaches it, the
scripted model server, a webhook receiver on loopback."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mobile_agent.device import PhoneLease, connect
from mobile_agent.settings import AdbSettings
from tests.adb_wedge import adb_server_pid, calls_waiting, private_adb_settings
from tests.matrix.design import MEETINGS, Cell, Meeting
from tests.matrix.drivers import DARK_MODE, SECRET_VALUE, Rig, focused_field, model_for, settings_env
from tests.server_fixtures import TaggedPlanner, service_settings, start_service, waits
from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _until(done: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Wait for ``done``; the timeout is a guard for a broken build only."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _files_with(folder: Path, value: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and value.encode() in p.read_bytes()]


# --- cancel + hung adb + secret + person --------------------------------------------------------


def _cancel_hung_adb_secret_person(request: pytest.FixtureRequest) -> None:
    """A task that asked its person, was answered, typed a {{secret:pin}} (the mask armed) and then
    hangs in an adb call ends ``cancelled`` on its cancel (e0a33d5: ~2 s, not the hour of
    ``adb.command_timeout_s``); the secret's value is in no file, event or model request."""
    tmp_path: Path = request.getfixturevalue("tmp_path")
    llm = request.getfixturevalue("llm_server")
    (phone,) = request.getfixturevalue("sim_phones")(1, width=540, height=1200)
    monkeypatch = request.getfixturevalue("monkeypatch")
    planner = TaggedPlanner(plans={"t-wedge": ["Ask user (Which account should I search with?)", "Open App (Chrome)",
                                               "Click text (Search or type web address)", "Type ({{secret:pin}})",
                                               *waits(40)]})
    with private_adb_settings(monkeypatch, "adb-meet-", 3600) as adb:
        assert "connected to" in connect(phone.serial, adb)  # starts the private server too
        llm.script([], default=planner)
        live = start_service(service_settings(tmp_path, adb.server_port, llm, [phone.serial], **{
            "adb.command_timeout_s": 3600,
            "server.device_refresh_s": 3600,  # no refresh meanwhile: the run's call is the one that hangs
            "agent.named_secrets": {"pin": SECRET_VALUE},
        }))
        server = adb_server_pid(adb.server_port)
        stopped = False
        try:
            task_id = live.submit("[t-wedge] search for {{secret:pin}} in Chrome", device=phone.serial)["id"]
            live.wait_task(task_id, statuses={"waiting_for_user"})
            answered = live.client.post(f"/v1/tasks/{task_id}/reply", json={"action": "answer", "text": "the work one"})
            assert answered.status_code == 202, answered.text

            def typed() -> bool:  # the Type step done, the run on to its waits
                task = live.client.get(f"/v1/tasks/{task_id}").json()
                assert task["status"] in ("waiting_for_user", "running"), task  # the answer is on its way
                return int(task["steps"]) >= 5

            _until(typed, "the run never typed the secret")
            assert focused_field(phone.phone.state()) == "filled"  # the secret went into Chrome's field
            os.kill(server, signal.SIGSTOP)
            stopped = True
            _until(lambda: calls_waiting(adb.server_port) > 0, "no adb call of the run hangs")
            assert live.client.post(f"/v1/tasks/{task_id}/cancel").status_code == 202
            done = live.wait_task(task_id, timeout=60)  # without the cancel reaching the call: an hour
            assert done["status"] == "cancelled", done
            kinds = [e.kind for e in live.state.store.events_after(task_id)]
            assert "user_replied" in kinds, kinds
            events = json.dumps([e.data for e in live.state.store.events_after(task_id)], default=str)
            assert SECRET_VALUE not in events
        finally:
            if stopped:
                os.kill(server, signal.SIGCONT)
            live.stop()
    assert not _files_with(tmp_path, SECRET_VALUE)  # trajectory, screenshots, report, the task store
    assert llm.chat_requests and not [r for r in llm.requests if SECRET_VALUE.encode() in r.body]


# --- a held phone + two tokens + "any" + person ------------------------------------------------

HELD_TOKENS = {"server.api_token": "meet-admin-1",
               "server.tokens": {"alice": {"token": "meet-alice-1", "role": "user"},
                                 "bob": {"token": "meet-bob-1", "role": "user"}}}
ADMIN, ALICE, BOB = _bearer("meet-admin-1"), _bearer("meet-alice-1"), _bearer("meet-bob-1")


def _held_phone_two_tokens_any(request: pytest.FixtureRequest) -> None:
    """Another interface's run holds one of two phones while bob's ``"any"`` task asks its person
    on the other: bob's task skips the held phone (8a49add); alice's listing shows both busy and
    names neither task (109afa4, aa82c96); neither screen is hers to see (409, bdd3bbf), bob sees
    his task's, an admin the held one. Alice's ``"any"`` task then skips the held phone too."""
    adb_server = request.getfixturevalue("adb_server")
    phones = request.getfixturevalue("sim_phones")(2, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-bob": ["Ask user (Which account?)"], "t-alice": ["Home"]})
    live = request.getfixturevalue("service")(phones, planner=planner, **HELD_TOKENS)
    held = min(p.serial for p in phones)  # both never leased: the pool's first pick is the first serial
    (free,) = [p.serial for p in phones if p.serial != held]

    def submit(headers: dict[str, str], instruction: str) -> int:
        answer = live.client.post("/v1/tasks", headers=headers, json={"instruction": instruction, "device": "any"})
        assert answer.status_code == 202, answer.text
        return int(answer.json()["id"])

    def shot(headers: dict[str, str], serial: str) -> int:
        return live.client.get(f"/v1/devices/{serial}/screenshot", headers=headers).status_code

    with PhoneLease(AdbSettings(server_port=adb_server.port), held, "mobile-agent mcp (pid 1)"):
        bobs = submit(BOB, "[t-bob] log in")
        waiting = live.wait_task(bobs, statuses={"waiting_for_user"}, timeout=120)
        assert waiting["device"] == free, f"bob's task took {waiting['device']}, which another interface holds"
        seen = {d["serial"]: (d["busy"], d["current_task"])
                for d in live.client.get("/v1/devices", headers=ALICE).json()["data"]}
        assert seen == {held: (True, None), free: (True, None)}, seen  # busy, no task of hers named
        assert live.client.get(f"/v1/devices/{free}", headers=BOB).json()["current_task"] == bobs
        assert (shot(ALICE, held), shot(ALICE, free), shot(BOB, held)) == (409, 409, 409)
        assert (shot(BOB, free), shot(ADMIN, held)) == (200, 200)

        answered = live.client.post(f"/v1/tasks/{bobs}/reply", headers=BOB, json={"action": "answer", "text": "work"})
        assert answered.status_code == 202, answered.text
        assert live.wait_task(bobs, timeout=120)["status"] == "completed"
        alices = submit(ALICE, "[t-alice] go home")
        done = live.wait_task(alices, timeout=120)
        assert (done["status"], done["device"]) == ("completed", free), done
        assert live.client.get(f"/v1/tasks/{bobs}", headers=ALICE).status_code == 404  # still not hers
    for task_id in (bobs, alices):
        assert "waiting_for_phone" not in [e.kind for e in live.state.store.events_after(task_id)]
    assert live.client.get(f"/v1/devices/{held}", headers=ALICE).json()["busy"] is False  # released


def _farm_held_phone_two_tokens_any(request: pytest.FixtureRequest) -> None:
    """The same meeting on a farm (PostgreSQL, a real ``mobile-agent worker`` with both phones, the
    API server on uvicorn): the worker serves no ``"any"`` task on the held phone (30558f5), so
    alice's task queued behind bob's waits for bob's phone; the API's listing says busy from the
    worker's row (d6afbb9) and names no task of another principal (aa82c96); screens as above."""
    from tests.farm_fixtures import phones, start_farm_api, start_worker, until, wait_done, wait_free

    tmp_path: Path = request.getfixturevalue("tmp_path")
    adb_server = request.getfixturevalue("adb_server")
    held, free = sorted(p.serial for p in request.getfixturevalue("sim_phones")(2, width=540, height=1200))
    database = request.getfixturevalue("pg_database")
    worker = start_worker(tmp_path, "meet", database=database, adb_port=adb_server.port, serials=[held, free])
    # another adb port for the API server, as on a host of its own: it learns the lease from the worker's row
    api = start_farm_api(tmp_path, database, **{"adb.server_port": adb_server.port + 1, **HELD_TOKENS})

    def submit(headers: dict[str, str], script: str) -> int:
        answer = api.client.post("/v1/tasks", headers=headers, json={"script": script, "device": "any"})
        assert answer.status_code == 202, answer.text
        return int(answer.json()["id"])

    def shot(headers: dict[str, str], serial: str) -> int:
        return api.client.get(f"/v1/devices/{serial}/screenshot", headers=headers).status_code

    try:
        wait_free(api, [held, free], workers=[worker])
        with PhoneLease(AdbSettings(server_port=adb_server.port), held, "mobile-agent mcp (pid 1)"):
            until(lambda: f"phone {held} is held by mobile-agent mcp (pid 1)" in worker.text(), 60,
                  "the worker never noticed the held phone")
            bobs = submit(BOB, "Wait (10)\n" * 12)  # runs until it is cancelled below
            running = until(lambda: (t := api.client.get(f"/v1/tasks/{bobs}").json())["status"] == "running" and t,
                            60, "bob's task never started")
            assert running["device"] == free, f"bob's task took {running['device']}, which another interface holds"
            alices = submit(ALICE, "Home")  # only the held phone is idle: it waits for bob's
            seen = {d["serial"]: (d["busy"], d["current_task"])
                    for d in api.client.get("/v1/devices", headers=ALICE).json()["data"]}
            assert seen == {held: (True, None), free: (True, None)}, seen
            assert api.client.get(f"/v1/devices/{free}", headers=BOB).json()["current_task"] == bobs
            assert (shot(ALICE, held), shot(ALICE, free), shot(BOB, held)) == (409, 409, 409)
            assert api.client.get(f"/v1/tasks/{alices}").json()["status"] == "queued"  # not on the held phone
            assert api.client.post(f"/v1/tasks/{bobs}/cancel", headers=BOB).status_code == 202
            assert wait_done(api.client, bobs, timeout=120)["status"] == "cancelled"
            done = wait_done(api.client, alices, timeout=120)
            assert (done["status"], done["device"]) == ("completed", free), done
        assert "waiting_for_phone" not in [e.kind for e in api.state.store.events_after(alices)]
        assert phones(api)[held]["busy"] is False or until(lambda: phones(api)[held]["busy"] is False, 60,
                                                           "the held phone never listed free again")
    finally:
        worker.stop()
        api.stop()


# --- MCP + plan cache + teams + a grounded dialect ---------------------------------------------

MCP_TOKENS = {"alice": "meet-mcp-alice-1", "carol": "meet-mcp-carol-1", "bob": "meet-mcp-bob-1"}


def _mcp_cache_teams_grounded(request: pytest.FixtureRequest) -> None:
    """``run_instruction`` over MCP's HTTP transport, the plan cache on, the model a grounded
    dialect's (UI-TARS: its own coordinate space): alice's plan replays for carol, her teammate
    (``team:lab``, ad04deb), and never for bob, a token of no team (3e2532e)."""
    from tests.mcp_helpers import http_session, mcp_env, serve_http, tool_json
    from tests.ports import free_port

    tmp_path: Path = request.getfixturevalue("tmp_path")
    llm = request.getfixturevalue("llm_server")
    adb_server = request.getfixturevalue("adb_server")
    (phone,) = request.getfixturevalue("sim_phones")(1, width=540, height=1200)
    cell = Cell("mcp", "ui_tars", False, "cold", False)
    rig = Rig(phone, llm, adb_server.port, tmp_path, request.getfixturevalue("service"),
              request.getfixturevalue("monkeypatch").setenv)
    tokens = {"alice": {"token": MCP_TOKENS["alice"], "team": "lab"},
              "carol": {"token": MCP_TOKENS["carol"], "team": "lab"}, "bob": {"token": MCP_TOKENS["bob"]}}
    env = mcp_env(adb_server.port, MOBILE_AGENT_CACHE__ENABLED="true", MOBILE_AGENT_SERVER__TOKENS=json.dumps(tokens),
                  **{k: v for k, v in settings_env(cell, rig).items() if k != "MOBILE_AGENT_ADB__SERVER_PORT"})
    port = free_port()
    runs = tmp_path / "mcp-runs"
    proc = serve_http(env, port, "--serial", phone.serial, "--runs-dir", str(runs),
                      log=tmp_path / "mcp.log")
    ran: dict[str, tuple[int, list[str | None]]] = {}  # who -> (model calls, each step's "by")

    async def run(who: str) -> None:
        phone.phone.reset()  # each run from the same fresh phone
        llm.script([], default=model_for(cell, rig, DARK_MODE))
        async with http_session(f"http://127.0.0.1:{port}/mcp", MCP_TOKENS[who]) as session:
            answer = await session.call_tool("run_instruction", {"instruction": DARK_MODE.instruction})
        assert not answer.is_error, answer.content
        result = tool_json(answer)
        assert result["status"] == "completed", result
        assert DARK_MODE.check(phone.phone.state()) is None, DARK_MODE.check(phone.phone.state())
        folder = runs / Path(result["trajectory_dir"]).name  # a token's answer names its run folder only
        lines = (folder / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()
        steps = [json.loads(line) for line in lines if line.strip() and json.loads(line).get("type") == "step"]
        ran[who] = (len(llm.chat_requests), [s.get("by") for s in steps])

    async def main() -> None:
        for who in ("alice", "carol", "bob"):
            await run(who)

    try:
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    (cold, cold_by), (team, team_by), (other, other_by) = ran["alice"], ran["carol"], ran["bob"]
    assert cold > 0 and "replay" not in cold_by, ran["alice"]
    assert "replay" in team_by and team < cold, f"carol's run did not replay her team's plan: {ran}"
    assert "replay" not in other_by and other > team, f"bob's run replayed another token's plan: {ran}"


# --- a revoked token + its schedule + its queued task + webhooks ------------------------------

HOOK_SECRET = "meet-webhook-secret-1"
REVOKE_TOKENS = {"server.api_token": "meet-admin-2",
                 "server.tokens": {"alice": {"token": "meet-alice-2", "role": "user"},
                                   "bob": {"token": "meet-bob-2", "role": "user"}},
                 "server.webhook_secret": HOOK_SECRET, "server.webhook_allow": ["127.0.0.1"]}
ADMIN2, ALICE2, BOB2 = _bearer("meet-admin-2"), _bearer("meet-alice-2"), _bearer("meet-bob-2")


def _revoked_token_schedule_queued_webhook(request: pytest.FixtureRequest) -> None:
    """Alice has a schedule and a queued task with a ``callback_url`` when her token is revoked
    (a restart without it): her queued task and her schedule's queued occurrences end ``error``
    (OwnerRefused, 9662e87) and her callback hears it once (61a45ed); her schedule makes no more
    tasks (c46c15a); bob's queued task beside them runs."""
    (phone,) = request.getfixturevalue("sim_phones")(1, width=540, height=1200)
    service = request.getfixturevalue("service")
    receiver = WebhookReceiver(HOOK_SECRET)
    try:
        live = service([phone], **REVOKE_TOKENS)

        def submit(headers: dict[str, str], script: str) -> int:
            answer = live.client.post("/v1/tasks", headers=headers, json={"script": script, "callback_url": receiver.url})
            assert answer.status_code == 202, answer.text
            return int(answer.json()["id"])

        def history(schedule_id: int) -> list[dict[str, Any]]:
            answer = live.client.get(f"/v1/schedules/{schedule_id}/history", headers=ADMIN2)
            assert answer.status_code == 200, answer.text
            return list(answer.json()["data"])

        holding = submit(BOB2, "Wait (10)\n" * 12)  # the only phone busy: whatever comes next stays queued
        live.wait_task(holding, statuses={"running"}, timeout=120)
        made = live.client.post("/v1/schedules", headers=ALICE2,
                                json={"name": "alice's", "every_s": 1, "task": {"script": "Home"}})
        assert made.status_code == 201, made.text
        schedule_id = made.json()["id"]
        _until(lambda: any(o["outcome"] == "queued" for o in history(schedule_id)), "the schedule made no task")
        alices, bobs = submit(ALICE2, "Home"), submit(BOB2, "Home")
        live.stop()  # bob's running task is interrupted; the rest stays queued

        live = service([phone], **{**REVOKE_TOKENS, "server.tokens": {"bob": REVOKE_TOKENS["server.tokens"]["bob"]}})
        refused = live.wait_task(alices, timeout=120)
        assert refused["status"] == "error" and refused["error"]["type"] == "OwnerRefused", refused
        assert refused["device"] is None and refused["steps"] == 0, refused  # never leased a phone, never ran
        assert receiver.wait_finished(alices)["status"] == "error"
        assert live.wait_task(bobs, timeout=120)["status"] == "completed"
        assert receiver.wait_finished(bobs)["status"] == "completed"
        _until(lambda: any(o["outcome"] == "skipped" and "alice" in o["reason"] for o in history(schedule_id)),
               "the revoked token's schedule skipped no occurrence")
        occurrences = [t for t in live.client.get("/v1/tasks", headers=ADMIN2, params={"limit": 200}).json()["data"]
                       if t["options"].get("schedule_id") == schedule_id]
        assert occurrences, "the schedule's queued occurrence is not listed"
        # each one refused unrun; one the revoked schedule made after the restart would run (the phone is free)
        assert all((t["status"], t["steps"], (t.get("error") or {}).get("type")) == ("error", 0, "OwnerRefused")
                   for t in occurrences), occurrences
        assert len(receiver.finished(alices)) == 1, receiver.finished(alices)  # told once
    finally:
        receiver.close()


DRIVERS: dict[str, Callable[[pytest.FixtureRequest], None]] = {
    "cancel-hung-adb-secret-person": _cancel_hung_adb_secret_person,
    "held-phone-two-tokens-any": _held_phone_two_tokens_any,
    "farm-held-phone-two-tokens-any": _farm_held_phone_two_tokens_any,
    "mcp-cache-teams-grounded": _mcp_cache_teams_grounded,
    "revoked-token-schedule-queued-webhook": _revoked_token_schedule_queued_webhook,
}


@pytest.mark.parametrize("meeting", [pytest.param(m, id=m.name, marks=[pytest.mark.postgres] * ("farm" in m.features))
                                     for m in MEETINGS])
def test_meeting(meeting: Meeting, request: pytest.FixtureRequest) -> None:
    assert meeting.name in DRIVERS, f"no driver for the meeting {meeting.name!r}: add one to tests/matrix/test_meetings.py"
    DRIVERS[meeting.name](request)
