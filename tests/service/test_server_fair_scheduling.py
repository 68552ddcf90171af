"""Fair scheduling: tasks for "any" phone spread over every free phone (least recently leased
first), not over the first ones in serial order. 200 script tasks over 4 simulated phones
through real uvicorn and the real adb server, submitted two at a time with a pause (so that
usually every phone is free when they arrive; first-in-serial-order gave the first two phones
all of them): each phone runs 50 ± 25 %."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from server.devices import DevicePool

FINAL = {"completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"}


class _FourPhones:
    """A ``DeviceSource`` of four phones that always answer (the pool's own logic under test)."""

    def list(self) -> list[tuple[str, str, str | None]]:
        return [(f"phone-{n}", "device", "sim") for n in range(4)]

    def screen_size(self, serial: str) -> tuple[int, int]:
        return 540, 1200

    def screenshot(self, serial: str, fmt: str) -> bytes:
        raise NotImplementedError

    def connect(self, address: str) -> str:
        return address

    def close(self) -> None:
        return  # holds nothing open


def test_the_pool_leases_the_least_recently_used_free_phone() -> None:
    pool = DevicePool(_FourPhones())
    pool.refresh()
    order = []
    for task_id in range(1, 9):  # each task ends before the next comes: old code gave phone-0 all eight
        serial = pool.lease("any", task_id)
        assert serial is not None
        order.append(serial)
        pool.release(serial, task_id)
    assert order == [f"phone-{n}" for n in range(4)] * 2
    assert pool.lease("phone-2", 9) == "phone-2"  # a named phone is still that phone
    assert pool.lease("any", 10) == "phone-0"  # the least recent of the free ones


@pytest.mark.slow
def test_200_tasks_spread_over_4_phones_within_25_percent(service, sim_phones) -> None:
    phones = sim_phones(4, width=540, height=1200)
    live = service(phones)
    ids = []
    for _ in range(100):  # two clients at a time, then a pause about as long as a task (~0.3 s here)
        for _ in range(2):
            created = live.client.post("/v1/tasks", json={"script": "Home"})
            assert created.status_code == 202, created.text
            ids.append(created.json()["id"])
        time.sleep(0.4)
    deadline = time.monotonic() + 240
    while True:
        tasks = live.client.get("/v1/tasks", params={"limit": 200}).json()["data"]
        if len(tasks) == 200 and all(t["status"] in FINAL for t in tasks):
            break
        assert time.monotonic() < deadline, Counter(t["status"] for t in tasks)
        time.sleep(0.5)
    assert {t["id"] for t in tasks} == set(ids)
    assert Counter(t["status"] for t in tasks) == {"completed": 200}
    per_phone = Counter(t["device"] for t in tasks)
    assert set(per_phone) == {p.serial for p in phones}
    assert all(37 <= n <= 63 for n in per_phone.values()), per_phone
