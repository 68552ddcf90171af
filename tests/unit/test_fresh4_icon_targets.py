"""The fourth held-back icon set (``benchmarks/data/fresh4_icon_targets.json``, issue 30) is sound.

The same checks as the second and third sets' (tests/held_back_icons.py): each screenshot opens at
its recorded size and holds every box drawn on it; at least 40 targets over at least 8 apps, no app
over 8, all five placements; every screenshot names where it was published, at which commit and
under which licence, the README names each one and LICENSES/ holds each repository's licence file.
And none of its apps is in the second or third set.
"""

from __future__ import annotations

from tests.held_back_icons import (
    every_item_is_described_and_sourced,
    every_screenshot_opens_at_its_size_and_holds_its_boxes,
    exclusions_say_why,
    no_app_of_an_earlier_set,
    the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources,
    the_set_is_wide_enough,
)

NAME = "fresh4"
# Permissive, or weak copyleft with the licence file copied beside the screenshots (Tower Collector).
LICENSES = {"MIT", "Apache-2.0", "MPL-2.0"}


def test_every_screenshot_opens_at_its_size_and_holds_its_boxes() -> None:
    every_screenshot_opens_at_its_size_and_holds_its_boxes(NAME)


def test_the_set_is_wide_enough() -> None:
    the_set_is_wide_enough(NAME)


def test_every_item_is_described_and_sourced() -> None:
    every_item_is_described_and_sourced(NAME, LICENSES)


def test_the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources() -> None:
    the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources(NAME)


def test_exclusions_say_why() -> None:
    exclusions_say_why(NAME)


def test_no_app_of_the_second_or_third_set() -> None:
    no_app_of_an_earlier_set(NAME, ["fresh2", "fresh3"])
