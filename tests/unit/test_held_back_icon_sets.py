"""The held-back icon sets of issue 30 (``benchmarks/data/freshN_icon_targets.json``, N = 2 to 11, the keys of SETS)
are sound, each checked the same way (tests/held_back_icons.py).

Their screenshots are committed beside them (``benchmarks/data/freshN/``), so every check runs
here: each screenshot opens at its recorded size and holds every box drawn on it; the set is wide
enough to measure on (at least 40 targets, at least 8 apps, no app over 8); every screenshot names
where it was published, at which commit and under which licence; the folder's README names each
one and LICENSES/ holds each repository's licence file; and no set shares an app with an earlier
one (a set measured once must be apps nobody looked at).
"""

from __future__ import annotations

import pytest

from tests.held_back_icons import (
    every_item_is_described_and_sourced,
    every_screenshot_opens_at_its_size_and_holds_its_boxes,
    exclusions_say_why,
    no_app_of_an_earlier_set,
    the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources,
    the_set_is_wide_enough,
)

# set -> the licences its screenshots may be under, in the order the sets were built. Permissive,
# or weak copyleft with the licence file copied beside the screenshots (fresh3: OwnTracks,
# openHAB; fresh4: Tower Collector).
SETS = {
    "fresh2": {"MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"},
    "fresh3": {"MIT", "Apache-2.0", "Unlicense", "EPL-1.0", "EPL-2.0"},
    "fresh4": {"MIT", "Apache-2.0", "MPL-2.0"},
    "fresh5": {"MIT", "Apache-2.0", "MPL-2.0", "BSD-3-Clause"},
    "fresh6": {"MIT", "Apache-2.0"},
    "fresh7": {"MIT", "Apache-2.0"},
    "fresh8": {"MIT", "Apache-2.0", "MPL-2.0"},
    "fresh9": {"MIT", "Apache-2.0"},
    "fresh10": {"MIT", "Apache-2.0"},
    "fresh11": {"MIT", "Apache-2.0", "MPL-2.0", "CC0-1.0"},
    "fresh12": {"MIT", "Apache-2.0"},
    "fresh13": {"MIT", "Apache-2.0"},
}
each_set = pytest.mark.parametrize("name", list(SETS))


@each_set
def test_every_screenshot_opens_at_its_size_and_holds_its_boxes(name: str) -> None:
    every_screenshot_opens_at_its_size_and_holds_its_boxes(name)


@each_set
def test_the_set_is_wide_enough(name: str) -> None:
    the_set_is_wide_enough(name)


@each_set
def test_every_item_is_described_and_sourced(name: str) -> None:
    every_item_is_described_and_sourced(name, SETS[name])


@each_set
def test_the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources(name: str) -> None:
    the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources(name)


@each_set
def test_exclusions_say_why(name: str) -> None:
    exclusions_say_why(name)


@pytest.mark.parametrize("name", list(SETS)[1:])
def test_no_app_of_an_earlier_set(name: str) -> None:
    names = list(SETS)
    no_app_of_an_earlier_set(name, names[: names.index(name)])
