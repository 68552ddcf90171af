"""Tenancy: every token is a principal, and nobody reaches what is not theirs (docs/security.md).

The route walk: every route of the service's OpenAPI document is called by each principal (an
admin, the user alice who owns the resources, another user bob, a viewer of alice's team, and
no token at all) on alice's resources, on a real uvicorn with a simulated phone behind the real
adb server. ``ROUTES`` says what each must get; a route the document has and the table lacks
(or the other way round) fails the test, so a new route cannot ship without its entry.

Status codes: 404 is "not yours" and "does not exist" alike (no existence oracle); 403 is a role
that may see but not do (a viewer acting, a user connecting phones or reading the audit trail).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ADMIN, ALICE, BOB, VIEWER, NOBODY = "admin", "alice", "bob", "vic", "nobody"
TOKENS = {ADMIN: "admin-token-1", ALICE: "alice-token-1", BOB: "bob-token-1", VIEWER: "vic-token-1"}
PRINCIPAL_SETTINGS = {
    "server.api_token": TOKENS[ADMIN],
    "server.tokens": {
        ALICE: {"token": TOKENS[ALICE], "role": "user", "team": "lab"},
        BOB: {"token": TOKENS[BOB], "role": "user"},
        VIEWER: {"token": TOKENS[VIEWER], "role": "viewer", "team": "lab"},
    },
    "server.webhook_secret": "hook-secret",
}
SCRIPT = "Open App (Settings)\nWait (0.1)\n"


@dataclass
class World:
    """alice's resources, and a way to make more (for the routes that delete them)."""

    url: str
    task_id: int
    serial: str
    file: str
    make_schedule: Callable[[], int]
    make_plan: Callable[[], int]


@dataclass(frozen=True)
class Route:
    """One route's call and what each principal gets. ``expect`` maps a principal to the status
    codes it may get; a principal not named gets ``default``."""

    call: Callable[[World], tuple[str, str, dict[str, Any]]]
    expect: dict[str, set[int]]
    default: set[int]


def _get(path: str) -> Callable[[World], tuple[str, str, dict[str, Any]]]:
    return lambda w: ("GET", path.format(w=w), {})


OK, GONE, DENY, UNAUTH = {200}, {404}, {403}, {401}
ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/v1/tasks"): Route(_get("/v1/tasks"), {NOBODY: UNAUTH}, OK),
    ("POST", "/v1/tasks"): Route(lambda w: ("POST", "/v1/tasks", {"json": {"script": "Wait (0.1)"}}),
                                 {VIEWER: DENY, NOBODY: UNAUTH}, {202}),
    ("GET", "/v1/tasks/{task_id}"): Route(_get("/v1/tasks/{w.task_id}"), {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("POST", "/v1/tasks/{task_id}/cancel"): Route(
        lambda w: ("POST", f"/v1/tasks/{w.task_id}/cancel", {}), {BOB: GONE, VIEWER: DENY, NOBODY: UNAUTH}, {409}),
    ("GET", "/v1/tasks/{task_id}/events"): Route(_get("/v1/tasks/{w.task_id}/events"), {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("GET", "/v1/tasks/{task_id}/files/{path}"): Route(
        _get("/v1/tasks/{w.task_id}/files/{w.file}"), {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("GET", "/v1/tasks/{task_id}/steps/{step}/screenshot"): Route(
        _get("/v1/tasks/{w.task_id}/steps/1/screenshot"), {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("GET", "/v1/tasks/{task_id}/trajectory.zip"): Route(
        _get("/v1/tasks/{w.task_id}/trajectory.zip"), {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("POST", "/v1/tasks/{task_id}/reply"): Route(
        lambda w: ("POST", f"/v1/tasks/{w.task_id}/reply", {"json": {"action": "done"}}),
        {BOB: GONE, VIEWER: DENY, NOBODY: UNAUTH}, {409}),  # 409: it is not waiting (it ended)
    ("GET", "/v1/tasks/{task_id}/live"): Route(
        _get("/v1/tasks/{w.task_id}/live"), {BOB: GONE, NOBODY: UNAUTH}, {409}),  # 409: it has no phone now
    ("GET", "/v1/devices"): Route(_get("/v1/devices"), {NOBODY: UNAUTH}, OK),
    ("GET", "/v1/devices/{serial}"): Route(_get("/v1/devices/{w.serial}"), {NOBODY: UNAUTH}, OK),
    # a free phone's screen (what the last run left there) is for those who may act on it
    ("GET", "/v1/devices/{serial}/screenshot"): Route(_get("/v1/devices/{w.serial}/screenshot"),
                                                      {VIEWER: DENY, NOBODY: UNAUTH}, OK),
    ("POST", "/v1/devices/connect"): Route(
        lambda w: ("POST", "/v1/devices/connect", {"json": {"address": "127.0.0.1:9"}}),
        {ADMIN: {200, 502}, NOBODY: UNAUTH}, DENY),
    ("GET", "/v1/cache"): Route(_get("/v1/cache"), {NOBODY: UNAUTH}, OK),
    ("DELETE", "/v1/cache"): Route(lambda w: ("DELETE", "/v1/cache", {}), {VIEWER: DENY, NOBODY: UNAUTH}, OK),
    ("GET", "/v1/cache/{plan_id}"): Route(lambda w: ("GET", f"/v1/cache/{w.make_plan()}", {}),
                                          {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("DELETE", "/v1/cache/{plan_id}"): Route(lambda w: ("DELETE", f"/v1/cache/{w.make_plan()}", {}),
                                             {BOB: GONE, VIEWER: DENY, NOBODY: UNAUTH}, OK),
    ("GET", "/v1/schedules"): Route(_get("/v1/schedules"), {NOBODY: UNAUTH}, OK),
    ("POST", "/v1/schedules"): Route(
        lambda w: ("POST", "/v1/schedules", {"json": {"name": "n", "every_s": 86400, "task": {"script": SCRIPT}}}),
        {VIEWER: DENY, NOBODY: UNAUTH}, {201}),
    ("GET", "/v1/schedules/{schedule_id}"): Route(lambda w: ("GET", f"/v1/schedules/{w.make_schedule()}", {}),
                                                  {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("DELETE", "/v1/schedules/{schedule_id}"): Route(
        lambda w: ("DELETE", f"/v1/schedules/{w.make_schedule()}", {}), {BOB: GONE, VIEWER: DENY, NOBODY: UNAUTH},
        {204}),
    ("GET", "/v1/schedules/{schedule_id}/history"): Route(
        lambda w: ("GET", f"/v1/schedules/{w.make_schedule()}/history", {}), {BOB: GONE, NOBODY: UNAUTH}, OK),
    ("GET", "/v1/audit"): Route(_get("/v1/audit"), {ADMIN: OK, NOBODY: UNAUTH}, DENY),
    ("GET", "/v1/me"): Route(_get("/v1/me"), {NOBODY: UNAUTH}, OK),
    ("GET", "/healthz"): Route(_get("/healthz"), {}, OK),
    ("GET", "/readyz"): Route(_get("/readyz"), {}, OK),
    ("GET", "/metrics"): Route(_get("/metrics"), {NOBODY: UNAUTH}, OK),
}
# what the app serves outside its OpenAPI document (the dashboard, the document itself): walked
# the same way, so a route added with include_in_schema=False, a mount or a websocket needs an entry too
UNDOCUMENTED: dict[tuple[str, str], Route] = {
    ("GET", "/openapi.json"): Route(_get("/openapi.json"), {NOBODY: UNAUTH}, OK),
    ("GET", "/docs"): Route(_get("/docs"), {NOBODY: UNAUTH}, OK),
    ("GET", "/"): Route(_get("/"), {}, {307}),  # to the dashboard
    ("GET", "/dashboard"): Route(_get("/dashboard"), {NOBODY: UNAUTH}, OK),  # 401: the sign-in page
    ("GET", "/dashboard/"): Route(_get("/dashboard/"), {NOBODY: UNAUTH}, OK),
    # a wrong token signs nobody in, whoever sends it
    ("POST", "/dashboard/login"): Route(lambda w: ("POST", "/dashboard/login", {"data": {"token": "not-a-token"}}),
                                        {}, UNAUTH),
    # the page's own code and style, the same for everyone: no data of anyone's
    ("MOUNT", "/dashboard/static"): Route(_get("/dashboard/static/app.js"), {}, OK),
}


def _client(url: str, who: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKENS[who]}"} if who in TOKENS else {}
    return httpx.Client(base_url=url, headers=headers, timeout=30)


def _wait(client: httpx.Client, task_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        task = client.get(f"/v1/tasks/{task_id}").json()
        if task["status"] not in ("queued", "running", "waiting_for_user"):
            return task
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} did not end")


def _saved_plan(settings: Any, namespace: str, template: str) -> int:
    from mobile_agent.replay import CachedPlan, PlanStore, default_cache_url
    from mobile_agent.replay.fingerprint import ScreenFingerprint

    store = PlanStore(settings.cache.database_url or default_cache_url(settings.agent.output_dir), namespace)
    return store.save(CachedPlan(template=template, steps=(), final=ScreenFingerprint(frozenset({"x"}), (0.0,) * 4)))


def test_every_route_answers_each_principal_exactly_as_the_table_says(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **PRINCIPAL_SETTINGS)
    clients = {who: _client(live.url, who) for who in (ADMIN, ALICE, BOB, VIEWER, NOBODY)}
    try:
        alice = clients[ALICE]
        created = alice.post("/v1/tasks", json={"script": SCRIPT})
        assert created.status_code == 202, created.text
        task = _wait(alice, created.json()["id"])
        assert task["status"] == "completed", task
        events = live.state.store.events_after(task["id"])
        shot = next(e.data for e in events if e.kind == "step_finished")
        file_url = next(v for k, v in _public_events(alice, task["id"]) if k.endswith("_url"))
        assert shot and file_url.startswith(f"/v1/tasks/{task['id']}/files/")

        def make_schedule() -> int:
            made = alice.post("/v1/schedules", json={"name": "alice's", "every_s": 86400, "task": {"script": SCRIPT}})
            assert made.status_code == 201, made.text
            return int(made.json()["id"])

        world = World(live.url, task["id"], phone.serial, file_url.split("/files/", 1)[1], make_schedule,
                      lambda: _saved_plan(live.settings, "team:lab", f"alice's plan {time.monotonic_ns()}"))

        document = clients[ADMIN].get("/openapi.json").json()
        documented = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
        assert documented == set(ROUTES), (
            f"routes without an entry in ROUTES: {sorted(documented - set(ROUTES))}; "
            f"entries for no route: {sorted(set(ROUTES) - documented)}")
        served = _served(live.app) - documented
        assert served == set(UNDOCUMENTED), (
            f"routes outside the OpenAPI document without an entry in UNDOCUMENTED: "
            f"{sorted(served - set(UNDOCUMENTED))}; entries for no route: {sorted(set(UNDOCUMENTED) - served)}")

        wrong = []
        for route in [*ROUTES.values(), *UNDOCUMENTED.values()]:
            for who, client in clients.items():
                _idle(clients[ADMIN])  # the tasks the walk submits have ended: the phone is free
                method, path, kwargs = route.call(world)
                with client.stream(method, path, **kwargs) as answer:
                    status = answer.status_code
                expected = route.expect.get(who, route.default)
                if status not in expected:
                    wrong.append(f"{who} {method} {path}: {status}, expected {sorted(expected)}")
        assert not wrong, "\n".join(wrong)
    finally:
        for client in clients.values():
            client.close()


def _served(app: Any) -> set[tuple[str, str]]:
    """Every (method, path) the app serves, routers included ("MOUNT" / "WEBSOCKET" for those);
    a path's converters dropped, as the OpenAPI document writes it ({path:path} is {path})."""
    import re

    from starlette.routing import Mount, WebSocketRoute

    try:  # FastAPI >= 0.165 keeps an included router's routes behind it
        from fastapi.routing import iter_route_contexts
    except ImportError:
        found = [(route, route) for route in app.routes]
    else:
        found = [(context.original_route, context) for context in iter_route_contexts(app.routes)]
    served = set()
    for original, route in found:
        path = re.sub(r":[a-z]+}", "}", str(route.path))
        if isinstance(original, Mount):
            served.add(("MOUNT", path))
        elif isinstance(original, WebSocketRoute) or not getattr(route, "methods", None):
            served.add(("WEBSOCKET", path))
        else:
            served |= {(method, path) for method in route.methods if method != "HEAD"}
    return served


def _idle(admin: httpx.Client) -> None:
    for status in ("queued", "running"):
        for task in admin.get("/v1/tasks", params={"status": status}).json()["data"]:
            _wait(admin, task["id"])


def _public_events(client: httpx.Client, task_id: int) -> list[tuple[str, str]]:
    pairs = []
    with client.stream("GET", f"/v1/tasks/{task_id}/events") as answer:
        import json

        for line in answer.iter_lines():
            if line.startswith("data: "):
                data = json.loads(line[6:]).get("data", {})
                pairs += [(k, v) for k, v in data.items() if isinstance(v, str)]
    return pairs


def test_lists_show_each_principal_only_its_own(service, sim_phones) -> None:
    """Lists are filtered, reads of another's resources are 404s, and a user's clear of the
    cache leaves another's plans; the audit trail names who did what."""
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **PRINCIPAL_SETTINGS)
    clients = {who: _client(live.url, who) for who in (ADMIN, ALICE, BOB, VIEWER)}
    try:
        alices = clients[ALICE].post("/v1/tasks", json={"script": SCRIPT}).json()["id"]
        bobs = clients[BOB].post("/v1/tasks", json={"script": SCRIPT}).json()["id"]
        _wait(clients[ALICE], alices)
        _wait(clients[BOB], bobs)

        def ids(who: str) -> set[int]:
            return {t["id"] for t in clients[who].get("/v1/tasks").json()["data"]}

        assert ids(ADMIN) >= {alices, bobs}
        assert ids(ALICE) == {alices} and ids(BOB) == {bobs}
        assert ids(VIEWER) == {alices}  # alice's team
        assert clients[BOB].get("/v1/tasks", params={"device": phone.serial}).json()["count"] == 1

        plan_a = _saved_plan(live.settings, "team:lab", "a plan of the lab")
        plan_b = _saved_plan(live.settings, "token:bob", "a plan of bob's")
        assert {p["id"] for p in clients[BOB].get("/v1/cache").json()["data"]} == {plan_b}
        assert clients[BOB].delete("/v1/cache").json() == {"deleted": 1}
        assert {p["id"] for p in clients[ALICE].get("/v1/cache").json()["data"]} == {plan_a}
        assert clients[BOB].delete(f"/v1/cache/{plan_a}").status_code == 404

        devices = clients[BOB].get("/v1/devices").json()["data"]
        assert devices and all(d["host"] is None and d["properties"] is None for d in devices)

        trail = clients[ADMIN].get("/v1/audit", params={"limit": 200}).json()
        actions = {(row["actor"], row["action"], row["resource"]) for row in trail["data"]}
        assert {(ALICE, "task.submit", f"task {alices}"), (BOB, "task.submit", f"task {bobs}"),
                (BOB, "cache.clear", "cache")} <= actions
        assert trail["count"] == len(trail["data"])
    finally:
        for client in clients.values():
            client.close()


def test_a_named_token_signs_in_to_the_dashboard_as_itself(service, sim_phones) -> None:
    live = service([], **PRINCIPAL_SETTINGS)
    with httpx.Client(base_url=live.url, timeout=30) as browser:
        signed = browser.post("/dashboard/login", data={"token": TOKENS[BOB]})
        assert signed.status_code == 303
        assert browser.get("/dashboard/").status_code == 200
        assert browser.get("/v1/audit").status_code == 403  # the cookie is bob's, a user's
        assert browser.get("/v1/tasks").status_code == 200
    with httpx.Client(base_url=live.url, timeout=30) as browser:
        assert browser.post("/dashboard/login", data={"token": "not-a-token"}).status_code == 401
        assert browser.get("/v1/tasks").status_code == 401


def test_named_tokens_alone_may_serve_beyond_localhost_and_empty_ones_do_not_count() -> None:
    from mobile_agent.errors import ConfigError
    from mobile_agent.settings import load_settings
    from server.app import check_exposure

    check_exposure(load_settings(overrides={"server.host": "0.0.0.0",
                                            "server.tokens": {"ann": {"token": "t", "role": "user"}}}))
    with pytest.raises(ConfigError):
        check_exposure(load_settings(overrides={"server.host": "0.0.0.0", "server.tokens": {"ann": ""}}))


def test_a_bare_token_string_stays_an_admin() -> None:
    from mobile_agent.settings import load_settings
    from server.auth import principal_of_token

    settings = load_settings(overrides={"server.tokens": {"ops": "ops-token", "ann": {"token": "ann-token"}}})
    ops = principal_of_token(settings.server, "ops-token")
    ann = principal_of_token(settings.server, "ann-token")
    assert ops is not None and ops.role == "admin"
    assert ann is not None and ann.role == "user"
    assert principal_of_token(settings.server, "ops-token ") is None


def test_one_users_plan_is_never_replayed_for_another_unless_the_cache_is_shared(service, sim_phones,
                                                                                 llm_server) -> None:
    from tests.server_fixtures import TaggedPlanner

    (phone,) = sim_phones(1, width=540, height=1200)
    instruction = "[t-set] open the settings"
    for shared in (False, True):
        planner = TaggedPlanner(plans={"t-set": ["Open App (Settings)"]})
        live = service([phone], planner=planner, **PRINCIPAL_SETTINGS, **{"cache.shared": shared})
        clients = {who: _client(live.url, who) for who in (ALICE, BOB)}
        try:
            phone.phone.reset()
            first = _wait(clients[ALICE], clients[ALICE].post("/v1/tasks", json={"instruction": instruction,
                                                                                 "cache": True}).json()["id"])
            assert first["status"] == "completed", first
            phone.phone.reset()
            planner.calls.clear()  # the model would plan bob's run as it planned alice's
            calls = len(llm_server.chat_requests)
            second = _wait(clients[BOB], clients[BOB].post("/v1/tasks", json={"instruction": instruction,
                                                                              "cache": True}).json()["id"])
            assert second["status"] == "completed", second
            assert phone.phone.state()["foreground"] == "com.android.settings"
            if shared:  # an admin's choice: one pool, bob replays alice's plan with no model call
                assert len(llm_server.chat_requests) == calls
            else:  # bob's identical instruction is planned by the model, alice's plan untouched
                assert len(llm_server.chat_requests) > calls
                assert clients[BOB].get("/v1/cache").json()["count"] == 1  # his own, recorded now
                (alices,) = clients[ALICE].get("/v1/cache").json()["data"]
                assert alices["successes"] == 0 and alices["uses"] == 0
        finally:
            for client in clients.values():
                client.close()
            live.stop()


def test_events_show_no_path_of_the_server(tmp_path: Path) -> None:
    from server.api.tasks import event_public
    from server.store import EventRow

    base = (tmp_path / "runs" / "task-1").resolve()
    base.mkdir(parents=True)
    data = {"screenshot": str(base / "step-1.png"), "trajectory_dir": str(base), "config": str(tmp_path / "x.toml"),
            "phone_file": "/sdcard/Download/a.png", "typed": "/start", "note": "a reply /with slashes"}
    public = event_public(EventRow(7, 1, "step_finished", data, 0.0), base).data
    assert public["screenshot"] == "step-1.png" and public["screenshot_url"] == "/v1/tasks/1/files/step-1.png"
    assert public["trajectory_dir"] == "." and public["config"] == "[a path on the server]"
    assert str(tmp_path) not in str(public)
    assert public["phone_file"] == "/sdcard/Download/a.png" and "phone_file_url" not in public
    assert public["typed"] == "/start" and public["note"] == "a reply /with slashes"


def test_only_the_tasks_people_reply_and_the_step_records_who_did(service, sim_phones) -> None:
    import json

    from tests.server_fixtures import TaggedPlanner

    (phone,) = sim_phones(1, width=540, height=1200)
    planner = TaggedPlanner(plans={"t-ask": ["Ask user (What is the code?)"]})
    live = service([phone], planner=planner, **PRINCIPAL_SETTINGS)
    clients = {who: _client(live.url, who) for who in (ADMIN, ALICE, BOB, VIEWER)}
    try:
        task_id = clients[ALICE].post("/v1/tasks", json={"instruction": "[t-ask] log in"}).json()["id"]
        live.wait_task(task_id, statuses={"waiting_for_user"})
        reply = f"/v1/tasks/{task_id}/reply"
        answer = {"action": "answer", "text": "1234"}
        assert clients[BOB].post(reply, json=answer).status_code == 404  # not his: not there
        assert clients[VIEWER].post(reply, json=answer).status_code == 403  # his team's, but a viewer
        assert clients[BOB].get(f"/v1/tasks/{task_id}/live").status_code == 404
        # the phone shows alice's run: its screen is for those who may watch that run's live view
        shots = {who: clients[who].get(f"/v1/devices/{phone.serial}/screenshot").status_code
                 for who in (ADMIN, ALICE, BOB, VIEWER)}
        assert shots == {ADMIN: 200, ALICE: 200, BOB: 409, VIEWER: 200}, shots
        assert clients[ALICE].post(reply, json=answer).status_code == 202
        assert live.wait_task(task_id)["status"] == "completed"

        (event,) = [e for e in live.state.store.events_after(task_id) if e.kind == "user_reply"]
        assert event.data["by"] == ALICE
        folder = Path(live.state.store.get_task(task_id).trajectory_dir or "")
        lines = [json.loads(x) for x in next(folder.rglob("trajectory.jsonl")).read_text().splitlines()]
        replies = [line["asked_user"]["reply"] for line in lines if (line.get("asked_user") or {}).get("reply")]
        assert replies and {r["by"] for r in replies} == {f"rest:{ALICE}"}, replies
        trail = clients[ADMIN].get("/v1/audit").json()["data"]
        assert [(r["actor"], r["resource"]) for r in trail if r["action"] == "task.reply"] == [(ALICE, f"task {task_id}")]
    finally:
        for client in clients.values():
            client.close()


def test_a_schedules_occurrences_are_its_owners_tasks(service, sim_phones) -> None:
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **PRINCIPAL_SETTINGS)
    clients = {who: _client(live.url, who) for who in (ALICE, BOB, VIEWER)}
    try:
        made = clients[ALICE].post("/v1/schedules", json={"name": "often", "every_s": 1, "task": {"script": SCRIPT}})
        assert made.status_code == 201, made.text
        schedule_id = made.json()["id"]
        deadline = time.monotonic() + 30
        while not (occurrences := [t for t in clients[ALICE].get("/v1/tasks").json()["data"]
                                   if t["options"].get("schedule_id") == schedule_id]):
            assert time.monotonic() < deadline, "no occurrence within 30 s"
            time.sleep(0.2)
        task = occurrences[0]
        assert (task["options"]["owner"], task["options"]["team"]) == (ALICE, "lab")
        stored = live.state.store.get_task(task["id"])
        assert stored is not None and (stored.owner, stored.team) == (ALICE, "lab")
        assert clients[VIEWER].get(f"/v1/tasks/{task['id']}").status_code == 200  # her team's viewer
        assert clients[BOB].get(f"/v1/tasks/{task['id']}").status_code == 404
        assert task["id"] not in {t["id"] for t in clients[BOB].get("/v1/tasks").json()["data"]}
        assert clients[BOB].get(f"/v1/schedules/{schedule_id}/history").status_code == 404
        assert clients[BOB].delete(f"/v1/schedules/{schedule_id}").status_code == 404
        assert clients[ALICE].delete(f"/v1/schedules/{schedule_id}").status_code == 204
    finally:
        for client in clients.values():
            client.close()


def test_the_cache_command_is_the_cache_files_owner_and_sees_every_namespace(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from mobile_agent.replay import CachedPlan, PlanStore
    from mobile_agent.replay.fingerprint import ScreenFingerprint

    url = f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}"
    final = ScreenFingerprint(frozenset({"x"}), (0.0,) * 4)
    for namespace in ("", "token:alice", "team:lab"):
        PlanStore(url, namespace).save(CachedPlan(template=f"t {namespace}", steps=(), final=final,
                                                  instruction=f"of {namespace or 'the local user'}"))
    listed = subprocess.run([sys.executable, "-m", "mobile_agent.cli", "cache", "--output", str(tmp_path), "list",
                             "--json"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert sorted(json.loads(line)["instruction"] for line in listed.stdout.splitlines()) == [
        "of team:lab", "of the local user", "of token:alice"]


def test_quotas_count_a_tasks_owner_column_the_one_its_visibility_reads(tmp_path: Path) -> None:
    """A task's owner is its ``owner`` column: what lists, reads and cancels check is what the
    per-token quota counts. A row kept from before owners existed (column NULL: an admin's,
    which its former token can neither see nor cancel) holds nobody's quota."""
    import sqlalchemy as sa

    from server.quota import Quota, QuotaExceeded
    from server.store import TaskStore
    from server.tables import tasks_table

    store = TaskStore(f"sqlite:///{tmp_path / 'tasks.sqlite3'}")
    old = store.create_task("from before owners", "any", {"owner": ALICE})
    with store.write() as conn:  # as db.add_missing_columns leaves a row of an older database
        conn.execute(tasks_table.update().where(tasks_table.c.id == old.id).values(owner=None, team=None))
    limit = Quota(1, "refuse")
    mine = store.create_task("alice's first", "any", {"owner": ALICE}, quota=limit)  # the old row is not hers
    with pytest.raises(QuotaExceeded):
        store.create_task("alice's second", "any", {"owner": ALICE}, quota=limit)
    with store.write() as conn:
        stored = conn.execute(sa.select(tasks_table.c.owner).where(tasks_table.c.id == mine.id)).scalar_one()
    assert stored == ALICE
    assert store.count_active_of(ALICE) == 1


def test_a_path_of_the_server_inside_a_message_stays_inside(tmp_path: Path) -> None:
    """The same in a webhook's payload. An error or event message that names a server path within its text (an OSError, a
    crash's str(exc)) shows the trajectory's files by their relative name and any other server
    path as "[a path on the server]"; a phone path, a URL and a slash in prose stay."""
    from mobile_agent.agent import Redactor
    from server.api.tasks import event_public, task_public
    from server.auth import ANONYMOUS
    from server.store import EventRow, TaskRow

    base = (tmp_path / "runs" / "task-1").resolve()
    base.mkdir(parents=True)
    config = tmp_path / "etc" / "agent.toml"
    config.parent.mkdir()
    crash = (f"[Errno 28] No space left on device: '{base / 'step-3.png'}' (config {config}); "
             "pushed /sdcard/Download/a.png, see https://example.com/docs/a and/or 1/2")
    public = event_public(EventRow(7, 1, "error", {"message": crash}, 0.0), base).data["message"]
    assert str(tmp_path) not in public, public
    assert "'step-3.png'" in public and "[a path on the server]" in public, public
    assert "/sdcard/Download/a.png" in public and "https://example.com/docs/a" in public and "and/or 1/2" in public
    row = TaskRow(id=1, instruction="x", device_request="any", device=None, status="error", options={},
                  error={"type": "OSError", "message": crash}, result=None, steps=0, prompt_tokens=0,
                  completion_tokens=0, cost_usd=0.0, trajectory_dir=str(base), instance=None,
                  cancel_requested=False, created_at=0.0, started_at=None, finished_at=1.0)
    shown = task_public(row, ANONYMOUS, Redactor([])).model_dump_json()
    assert str(tmp_path) not in shown and "step-3.png" in shown, shown
    from server.webhooks import task_finished

    payload = json.dumps(task_finished(1, "error", error=row.error, result={"report": str(base / "report.html")}))
    assert str(tmp_path) not in payload and "[a path on the server]" in payload, payload


def test_a_live_frame_taken_as_its_task_ended_never_reaches_that_tasks_viewers() -> None:
    """The live view's capture loop asks whether the task still runs, then captures: a task that
    ends meanwhile frees the phone for another principal's run, whose screen would reach the
    first task's viewers. A frame counts only when the task still ran after it was taken."""
    import asyncio

    from server.live import LiveHub

    running = [True]

    def capture() -> bytes:
        running[0] = False  # alice's task ends while the frame is taken; bob's run has the phone now
        return b"bob's screen"

    async def watch() -> list[bytes]:
        hub = LiveHub(fps=50)
        viewer = hub.join("phone-1", 1, ALICE, capture, lambda: running[0])
        return [frame async for frame in viewer.frames(50, 2.0)]

    assert asyncio.run(watch()) == []


def test_a_flow_sent_to_the_service_cannot_read_the_servers_files(service, sim_phones, llm_server) -> None:
    """An ``extract`` step's ``schema:`` names a file relative to the flow: a flow sent over REST
    has no folder, so it would be read from the server (any JSON file, its content sent to the
    model, its absence told in the error). Refused at submission (422) with the fields inline
    as the way."""
    live = service([], **PRINCIPAL_SETTINGS)
    flow = ("name: t\nsteps:\n  - extract:\n      instruction: read the title\n"
            "      schema: /etc/mobile-agent/creds.json\n")
    with _client(live.url, ALICE) as alice:
        answer = alice.post("/v1/tasks", json={"flow": flow})
        assert answer.status_code == 422, answer.text
        assert "fields" in answer.text and answer.json()["detail"][0]["loc"] == ["body", "flow"]
        inline = flow.replace("schema: /etc/mobile-agent/creds.json", "fields: {title: str}")
        accepted = alice.post("/v1/tasks", json={"flow": inline})  # the service's planner is the scripted model
        assert accepted.status_code == 202, accepted.text


def test_a_callback_url_is_read_back_by_its_owner_and_admins_only(service, sim_phones) -> None:
    """A webhook receiver's URL often holds the receiver's own secret (a hook's path): alice's
    team (her viewer) sees her task and schedule, not the URL; she and the admin do."""
    (phone,) = sim_phones(1, width=540, height=1200)
    live = service([phone], **PRINCIPAL_SETTINGS)
    hook = "https://hooks.example.invalid/services/T0/B1/alices-own-hook-secret"
    clients = {who: _client(live.url, who) for who in (ADMIN, ALICE, VIEWER)}
    try:
        made = clients[ALICE].post("/v1/tasks", json={"script": "Wait (0.1)", "callback_url": hook})
        assert made.status_code == 202, made.text
        assert made.json()["options"]["callback_url"] == hook
        task_id = made.json()["id"]
        scheduled = clients[ALICE].post("/v1/schedules", json={
            "name": "nightly", "cron": "0 3 * * *", "task": {"script": "Wait (0.1)", "callback_url": hook}})
        assert scheduled.status_code == 201, scheduled.text
        schedule_id = scheduled.json()["id"]
        for who, shown in ((ALICE, True), (ADMIN, True), (VIEWER, False)):
            client = clients[who]
            task = client.get(f"/v1/tasks/{task_id}").json()
            listed = next(t for t in client.get("/v1/tasks").json()["data"] if t["id"] == task_id)
            schedule = client.get(f"/v1/schedules/{schedule_id}").json()
            schedules = next(s for s in client.get("/v1/schedules").json()["data"] if s["id"] == schedule_id)
            assert task["options"]["owner"] == ALICE, who  # the rest of the options stay readable
            for options in (task["options"], listed["options"], schedule["task"]["options"],
                            schedules["task"]["options"]):
                assert ("callback_url" in options) is shown, (who, options)
            bodies = [client.get(f"/v1/tasks/{task_id}").text, client.get("/v1/schedules").text]
            assert any("alices-own-hook-secret" in body for body in bodies) is shown, who
        stored = live.state.store.get_task(task_id)
        assert stored is not None and stored.options["callback_url"] == hook  # kept for its deliveries
    finally:
        for client in clients.values():
            client.close()
