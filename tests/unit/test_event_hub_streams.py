"""The per-token limit of open event streams (``server.state.EventHub``, server.event_streams_per_token):
a stream not seen for ``STREAM_STALE_S`` is not counted (one whose response never started
streaming never closes), and one that goes on after being dropped so is counted again from its
next pass. The hub's clock is a stand-in: no test here waits."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

import server.state as state_module
from server.state import STREAM_STALE_S, EventHub


class _Clock:
    now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_a_stale_stream_that_goes_on_is_counted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(state_module, "time", SimpleNamespace(monotonic=clock.monotonic, time=time.time))
    hub = EventHub(streams_per_token=1)
    held_up = hub.open_stream("alice")
    assert held_up is not None
    assert hub.open_stream("alice") is None  # the limit: one
    assert hub.open_stream("bob") is not None  # another token's own

    clock.now += STREAM_STALE_S + 1  # held up past the stale mark (a client that stopped reading)
    second = hub.open_stream("alice")
    assert second is not None  # the stale one is not counted
    hub.close_stream(second)
    hub.stream_alive(held_up, "alice")  # it goes on: counted again (before: never counted again)
    assert hub.open_stream("alice") is None
    hub.close_stream(held_up)
    assert hub.open_stream("alice") is not None
