"""A planner's position names the wrong part of the screen: the real Mobile-Agent v1 runs
said "center" for a launcher tile at the top left and "bottom center" for a like button in
the middle third (benchmarks/RESULTS.md, the fresh held-back set). The named part then
offers candidates without the icon; the one clear match on the whole screen joins them,
last and said to be elsewhere. It is never tapped: a tap stays inside the part named.

On a real Rico development screen (mVideoPlayer 3362.jpg, CC BY 4.0, tests/data/rico-dev):
its toolbar's three vertical dots at the top right, described with the wrong part.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from perception import Box, LocateStatus, Perception, PerceptionConfig

SCREEN = Path(__file__).resolve().parents[1] / "data" / "rico-dev" / "afzkl.development.mVideoPlayer/trace_0/3362.jpg"
KEBAB = Box(466, 32, 540, 94)  # rico_icon_targets.json: the overflow button's box on the 540-wide screenshot


@pytest.fixture(scope="module")
def pixels() -> np.ndarray:
    return np.asarray(Image.open(SCREEN).convert("RGB"))


def _perception() -> Perception:
    return Perception(PerceptionConfig(detector="proposals", ranker="heuristic", compute_device="cpu"))


def test_the_clear_match_elsewhere_joins_the_candidates_last_and_is_never_tapped(pixels: np.ndarray) -> None:
    right = _perception().find_icon(pixels, "three vertical dots", "top right")
    assert right.status is LocateStatus.FOUND and KEBAB.contains(*right.point)  # the right part: a tap, as before
    wrong = _perception().find_icon(pixels, "three vertical dots", "bottom")
    assert wrong.status is LocateStatus.CANDIDATES and wrong.point is None, wrong
    *named, elsewhere = wrong.candidates
    assert KEBAB.contains(*elsewhere.box.center) and elsewhere.index == len(wrong.candidates)
    assert not any(KEBAB.contains(*c.box.center) for c in named)  # the bottom part's own offers
    assert elsewhere.crop is not None and "not in the bottom part" in wrong.feedback


def test_a_count_keeps_its_own_answer(pixels: np.ndarray) -> None:
    # which-words already check the named part after picking: nothing is added to them
    counted = _perception().find_icon(pixels, "the first three vertical dots", "bottom")
    assert "clear match" not in counted.feedback
