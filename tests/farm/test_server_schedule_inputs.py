"""Schedules against careless input, through the real service (uvicorn, SQLite, the adb server):
every cron expression and interval is checked when the schedule is made (a 422 naming the
field, never a 500, nothing stored that breaks the list), a token has at most
``server.max_schedules_per_token``, and a stored row this version cannot read (a hand edit,
an older version's) is skipped with a logged reason instead of failing ``GET /v1/schedules``.
"""

from __future__ import annotations

import logging
import math
import time

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.farm.recurring import ScheduleError, check_when

TASK = {"script": "Home"}

# cron-looking text: the fields' own characters, names, and some that are not
_CRON_FIELD = st.one_of(
    st.sampled_from(["*", "*/5", "0", "59", "60", "31", "30", "29", "2", "1-5", "5-1", "L", "1#5", "MON", "feb",
                     "*/0", "?", "H", "-1", "1,2,3", "0-59/7", "7", "13", "99999999999999999999"]),
    st.text(alphabet="0123456789*/,-LW#?", min_size=1, max_size=6),
    st.text(min_size=1, max_size=4),
)
CRONS = st.one_of(
    st.lists(_CRON_FIELD, min_size=5, max_size=5).map(" ".join),
    st.lists(_CRON_FIELD, min_size=0, max_size=7).map(" ".join),
    st.text(max_size=40),
)
NUMBERS = st.one_of(
    st.floats(allow_nan=False),  # JSON has no NaN; Infinity is sent as 1e999 below
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, 59, 60, 61, 3600, 366 * 86400, 366 * 86400 + 1, 1e308]),
)


def _body(when: dict[str, object]) -> bytes:
    """The JSON a client would send; an infinite number as 1e999 (what Python's json cannot write)."""
    import json

    text = json.dumps({"name": "generated", "task": TASK, **when}, allow_nan=True)
    return text.replace("-Infinity", "-1e999").replace("Infinity", "1e999").encode()


def _listed_cleanly(client) -> list[dict]:  # noqa: ANN001
    listed = client.get("/v1/schedules")
    assert listed.status_code == 200, listed.text
    rows: list[dict] = listed.json()["data"]
    for row in rows:
        assert math.isfinite(row["next_at"]) and row["next_in_s"] <= 366 * 86400 + 1
    return rows


@pytest.mark.slow
def test_generated_crons_and_numbers_never_answer_500_nor_store_a_broken_row(service) -> None:
    live = service([], **{"server.schedule_min_interval_s": 60.0, "server.max_schedules_per_token": 0})
    headers = {"content-type": "application/json"}

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(when=st.one_of(CRONS.map(lambda c: {"cron": c}), NUMBERS.map(lambda n: {"every_s": n}),
                          st.tuples(CRONS, NUMBERS).map(lambda p: {"cron": p[0], "every_s": p[1]})))
    def check(when: dict[str, object]) -> None:
        answer = live.client.post("/v1/schedules", content=_body(when), headers=headers)
        assert answer.status_code in (201, 422), answer.text
        if answer.status_code == 422:
            fields = {e["loc"][-1] for e in answer.json()["detail"]}
            assert fields & {"cron", "every_s", "body"}, answer.text
        else:
            made = answer.json()
            if made["every_s"] is not None:
                assert made["every_s"] >= 60 and made["next_in_s"] >= 59  # nothing closer than the minimum
            assert live.client.delete(f"/v1/schedules/{made['id']}").status_code == 204
        _listed_cleanly(live.client)

    check()


def test_the_inputs_of_the_issue_get_a_422_naming_the_field(service) -> None:
    live = service([], **{"server.schedule_min_interval_s": 30.0})
    headers = {"content-type": "application/json"}
    for raw, field, words in (
        (b'{"name": "n", "cron": "0 0 31 2 *", "task": {"script": "Home"}}', "cron", "never fires"),
        (b'{"name": "n", "cron": "0 0 30 2 *", "task": {"script": "Home"}}', "cron", "never fires"),
        (b'{"name": "n", "every_s": 1e999, "task": {"script": "Home"}}', "every_s", "finite"),
        (b'{"name": "n", "every_s": Infinity, "task": {"script": "Home"}}', "every_s", "finite"),
        (b'{"name": "n", "every_s": -Infinity, "task": {"script": "Home"}}', "every_s", "finite"),
        (b'{"name": "n", "every_s": 1e300, "task": {"script": "Home"}}', "every_s", "at most"),
        (b'{"name": "n", "every_s": 10, "task": {"script": "Home"}}', "every_s", "at least 30"),
        (b'{"name": "n", "cron": "* * * * * *", "task": {"script": "Home"}}', "cron", "five fields"),
        (b'{"name": "n\\u0000", "cron": "0 3 * * *", "task": {"script": "Home"}}', "name", "NUL"),
    ):
        answer = live.client.post("/v1/schedules", content=raw, headers=headers)
        assert answer.status_code == 422, (raw, answer.text)
        detail = answer.json()["detail"]
        assert detail[0]["loc"][-1] == field and words in detail[0]["msg"], (raw, detail)
    assert _listed_cleanly(live.client) == []
    # a cron that fires every minute is within a 30 s minimum
    assert live.client.post("/v1/schedules", json={"name": "m", "cron": "* * * * *", "task": TASK}).status_code == 201


def test_a_cron_closer_than_the_minimum_interval_is_refused() -> None:
    check_when("*/5 * * * *", None, 300.0)
    with pytest.raises(ScheduleError, match="60 s apart") as refused:
        check_when("* * * * *", None, 90.0)
    assert refused.value.field == "cron"
    with pytest.raises(ScheduleError, match="at least 90") as refused:
        check_when(None, 89.0, 90.0)
    assert refused.value.field == "every_s"
    # Feb 29th: next in 2028 seen from 2026-11-26, more than a year away
    with pytest.raises(ScheduleError, match="less than once a year"):
        check_when("0 0 29 2 *", None, 60.0, now=1795651200.0)


def test_a_token_has_at_most_its_schedules_and_others_are_not_held_back(service) -> None:
    live = service([], **{"server.api_token": "main-token", "server.tokens": {"alice": "alice-token"},
                          "server.max_schedules_per_token": 2})
    alice = {"Authorization": "Bearer alice-token"}
    made = [live.client.post("/v1/schedules", headers=alice, json={"name": f"s{n}", "cron": "0 3 * * *", "task": TASK})
            for n in range(2)]
    assert [m.status_code for m in made] == [201, 201]
    third = live.client.post("/v1/schedules", headers=alice, json={"name": "s3", "cron": "0 3 * * *", "task": TASK})
    assert third.status_code == 429
    assert "'alice' has 2 schedules" in third.text and "server.max_schedules_per_token" in third.text
    mine = live.client.post("/v1/schedules", json={"name": "main", "cron": "0 3 * * *", "task": TASK})
    assert mine.status_code == 201  # the main token has its own count
    assert live.client.delete(f"/v1/schedules/{made[0].json()['id']}").status_code == 204
    again = live.client.post("/v1/schedules", headers=alice, json={"name": "s3", "cron": "0 3 * * *", "task": TASK})
    assert again.status_code == 201


def test_a_stored_row_that_cannot_be_read_is_skipped_with_a_logged_reason(service, caplog) -> None:
    live = service([])
    good = live.client.post("/v1/schedules", json={"name": "good", "every_s": 3600, "task": TASK})
    assert good.status_code == 201
    engine = live.state.schedules.engine
    now = time.time()
    with engine.begin() as conn:  # what a hand edit or an older version may leave
        for values in (
            {"cron": None, "interval_s": math.inf, "task": '{"instruction": "Home", "options": {}}'},
            {"cron": "bogus", "interval_s": None, "task": '{"instruction": "Home", "options": {}}'},
            {"cron": None, "interval_s": 60.0, "task": "not json {"},
            {"cron": None, "interval_s": 60.0, "task": '["a list"]'},
            {"cron": "0 0 31 2 *", "interval_s": None, "task": '{"instruction": "Home", "options": {}}'},
        ):
            conn.execute(sa.text(
                "INSERT INTO farm_schedules (name, cron, interval_s, task, owner, enabled, next_at, runs, created_at) "
                "VALUES ('hand edit', :cron, :interval_s, :task, 'anonymous', 1, :next_at, 0, :now)"),
                {**values, "next_at": now - 5, "now": now})
    with caplog.at_level(logging.WARNING, logger="server.farm.recurring"):
        rows = _listed_cleanly(live.client)
        time.sleep(2.5)  # the ticker meets the due ones too, and goes on
    assert [r["name"] for r in rows] == ["good", "hand edit"]  # only the never-firing cron is readable
    reasons = [r.getMessage() for r in caplog.records]
    assert any("cannot be read and is skipped" in m and "interval" in m for m in reasons), reasons
    assert any("cannot be read and is skipped" in m and "not five valid fields" in m for m in reasons), reasons
    assert any("cannot be read and is skipped" in m and "JSONDecodeError" in m for m in reasons), reasons
    assert any("is skipped: CroniterBadDateError" in m for m in reasons), reasons
    unreadable = [r for r in range(2, 7) if live.client.get(f"/v1/schedules/{r}").status_code == 404]
    assert len(unreadable) == 4
    for schedule_id in unreadable:  # and each can be deleted through the API
        assert live.client.delete(f"/v1/schedules/{schedule_id}").status_code == 204


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def schedules_url(request: pytest.FixtureRequest, tmp_path) -> str:  # noqa: ANN001
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'schedules.sqlite3'}"
    url: str = request.getfixturevalue("pg_database")
    return url


def test_twenty_creates_at_once_make_exactly_the_cap(schedules_url: str) -> None:
    import threading

    from server.farm.recurring import ScheduleLimit, Schedules
    from server.store import TaskStore

    stores = [TaskStore(schedules_url, instance=f"i{n}") for n in range(2)]  # two API servers
    try:
        schedules = [Schedules(store.engine) for store in stores]
        made: list[int] = []
        refused: list[int] = []
        start = threading.Barrier(20)

        def create(n: int) -> None:
            start.wait()
            try:
                row = schedules[n % 2].create(f"s{n}", "0 3 * * *", None, {"instruction": "Home", "options": {}},
                                              owner="alice", max_per_owner=3)
                made.append(row.id)
            except ScheduleLimit:
                refused.append(n)

        threads = [threading.Thread(target=create, args=(n,)) for n in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(made) == 3 and len(refused) == 17
        assert schedules[0].count_of("alice") == 3
    finally:
        for store in stores:
            store.close()
