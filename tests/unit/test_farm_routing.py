"""Routing rules of the farm (server/farm/routing.py), without a database: requirements parse
or say why, versions compare as numbers, labels and properties share one namespace, a route
always maps to the same short queue name (Postgres channel names stop at 63 bytes)."""

from __future__ import annotations

import pytest

from server.farm.routing import ANY_QUEUE, Requirement, Route, RouteError, phone_profile, queue_for

PIXEL7 = {"serial": "127.0.0.1:6100", "host": "h1", "model": "Pixel 7", "android": "14", "sdk": "34",
          "profile": "phone", "lab": "berlin"}
NEXUS5 = {"serial": "0123456789ABCDEF", "host": "h2", "model": "Nexus 5", "android": "6.0.1", "sdk": "23",
          "profile": "phone"}


@pytest.mark.parametrize(("text", "phone", "expected"), [
    ("android>=13", PIXEL7, True),
    ("android>=13", NEXUS5, False),
    ("android>6", NEXUS5, True),  # 6.0.1 > 6: versions, not text
    ("android<10", NEXUS5, True),
    ("android=14.0", PIXEL7, True),  # 14 == 14.0
    ("android!=14", PIXEL7, False),
    ("sdk<=23", NEXUS5, True),
    ("lab=berlin", PIXEL7, True),
    ("lab=Berlin", PIXEL7, True),  # text compares without case
    ("lab=berlin", NEXUS5, False),  # no such label: not satisfied
    ("lab!=berlin", NEXUS5, True),
    ("model=Pixel 7", PIXEL7, True),
    ("profile==phone", PIXEL7, True),
])
def test_requirements(text: str, phone: dict[str, str], expected: bool) -> None:
    assert Requirement.parse(text).satisfied_by(phone) is expected


@pytest.mark.parametrize(("text", "words"), [
    ("android", "not a requirement"),
    ("=13", "not a requirement"),
    ("android~13", "not a requirement"),
    ("profile>=tablet", "compares version numbers"),
    ("android>=", "not a requirement"),
])
def test_bad_requirements_say_why(text: str, words: str) -> None:
    with pytest.raises(RouteError, match=words):
        Requirement.parse(text)


def test_routes_match_every_part_and_name_one_queue() -> None:
    assert queue_for(Route.from_request("any", None, None, None)) == ANY_QUEUE
    assert queue_for(Route.from_request(PIXEL7["serial"], None, None, None)) == "p.127.0.0.1:6100"
    route = Route.from_request("any", "h1", ["android>=13"], {"lab": "berlin"})
    assert route.matches(PIXEL7) and not route.matches(NEXUS5)
    assert not Route.from_request("any", "h2", ["android>=13"], None).matches(PIXEL7)
    # the same route, written in another order or twice, is the same queue
    same = Route.from_request("any", "h1", ["lab=berlin", "android>=13", "android>=13"], None)
    assert queue_for(same) == queue_for(route) and queue_for(route).startswith("r.")
    # long serials and long routes still make short queue names
    long_serial = "x" * 200
    assert len(queue_for(Route.from_request(long_serial, None, None, None))) <= 38
    assert Route.from_spec(route.spec()) == route
    assert route.describe() == "host=h1, android>=13, lab=berlin"


def test_profile_is_androids_sw600dp_line() -> None:
    assert phone_profile(1080, 2400, 420) == "phone"  # Pixel 7: 411 dp
    assert phone_profile(2560, 1600, 320) == "tablet"  # Pixel Tablet: 800 dp
    assert phone_profile(1200, 1920, 320) == "tablet"  # 600 dp exactly
    assert phone_profile(None, 2400, 420) is None
