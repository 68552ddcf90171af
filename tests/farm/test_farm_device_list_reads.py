"""``GET /v1/devices`` on a farm reads the phones once per listing: a held phone is busy from its
own row (``FarmSlot.held``, what its worker wrote), not from one more read of the phones per free
phone (before: ``FarmPhones.held`` read every phone again for each phone not busy); one phone's
route reads that phone's row alone (``FarmRegistry.phone``; before: every phone's). Real
PostgreSQL, the farm's API server on real uvicorn; the phones registered as a worker registers
them (``FarmRegistry.heartbeat`` / ``claim_phones`` / ``set_phone_held``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.farm.registry import FarmRegistry, PhoneRow
from tests.farm_fixtures import phones, start_farm_api

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(180)]


class _CountingRegistry(FarmRegistry):
    """The API's phone registry (``FarmPhones.registry``), counting every read of the phones
    through its one read method. Once the server has started nothing of the API server reads its
    phones but a request (its startup refresh is over; the queue's maintenance has a registry of
    its own), so every read counted is a device route's."""

    reads = 0
    rows = 0

    def phones(self, serial: str | None = None) -> list[PhoneRow]:
        found = super().phones() if serial is None else super().phones(serial)
        self.reads += 1
        self.rows += len(found)
        return found


def test_the_farm_device_list_reads_the_phones_once_and_shows_a_held_phone_busy(pg_database: str,
                                                                                tmp_path: Path) -> None:
    api = start_farm_api(tmp_path, pg_database, **{"farm.host_timeout_s": 600.0})  # the host stays alive
    try:
        pool = api.state.pool
        worker = FarmRegistry(api.state.store.engine, host_timeout_s=600.0)
        worker.heartbeat("h1", {}, 1, starting=True)
        serials = ["10.0.0.1:5555", "10.0.0.2:5555", "10.0.0.3:5555", "10.0.0.4:5555"]
        assert worker.claim_phones("h1", [(s, "device", {"platform": "android"}) for s in serials]) == {}
        worker.set_phone_held("h1", serials[1], True)  # another interface's run on its host holds it

        counting = _CountingRegistry(api.state.store.engine, host_timeout_s=600.0)
        pool.registry = counting
        listed = phones(api)
        assert listed[serials[1]]["busy"] is True and listed[serials[1]]["current_task"] is None, listed
        assert [listed[s]["busy"] for s in serials] == [False, True, False, False], listed
        assert counting.reads == 1, counting.reads  # before: 1 + one per phone not busy (4)

        counting.reads = counting.rows = 0
        one = api.client.get(f"/v1/devices/{serials[1]}").json()
        assert one["busy"] is True and one["serial"] == serials[1], one
        assert (counting.reads, counting.rows) == (1, 1)  # that phone's row alone (before: every phone's, 4)
    finally:
        api.stop()
