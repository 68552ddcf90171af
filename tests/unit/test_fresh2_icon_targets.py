"""The second held-back icon set (``benchmarks/data/fresh2_icon_targets.json``, issue 30) is sound.

Its screenshots are committed beside it (``benchmarks/data/fresh2/``), so every check runs here
(tests/held_back_icons.py): each screenshot opens at its recorded size and holds every box drawn on
it; the set is wide enough to measure on (at least 40 targets, at least 8 apps, no app over 8); every
screenshot names where it was published, at which commit, and under which licence; the folder's
README names each one and LICENSES/ holds each repository's licence file.
"""

from __future__ import annotations

from tests.held_back_icons import (
    every_item_is_described_and_sourced,
    every_screenshot_opens_at_its_size_and_holds_its_boxes,
    exclusions_say_why,
    the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources,
    the_set_is_wide_enough,
)

NAME = "fresh2"
PERMISSIVE = {"MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"}


def test_every_screenshot_opens_at_its_size_and_holds_its_boxes() -> None:
    every_screenshot_opens_at_its_size_and_holds_its_boxes(NAME)


def test_the_set_is_wide_enough() -> None:
    the_set_is_wide_enough(NAME)


def test_every_item_is_described_and_sourced() -> None:
    every_item_is_described_and_sourced(NAME, PERMISSIVE)


def test_the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources() -> None:
    the_folder_holds_exactly_the_sets_screenshots_and_names_their_sources(NAME)


def test_exclusions_say_why() -> None:
    exclusions_say_why(NAME)
