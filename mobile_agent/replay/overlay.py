"""Something new on top of a replayed step's screen: a dialog over the recorded screen.

A modal dialog takes every tap: a replayed tap on a target beside it changes nothing,
and the replay only found that out after tapping and settling. Before a replayed step
acts, ``on_top`` compares the current screen with the recorded one for the two signs a
dialog leaves, and the replay hands the step to the planner at once when it finds one:

- **a scrim**: Android dims the window under a dialog by drawing black over it at a
  fixed alpha (``WindowManager.LayoutParams.dimAmount``; AOSP's default
  ``backgroundDimAmount`` 0.6, Material dialogs 0.32), so every grey level under it is
  scaled by the same factor while the dialog's box is drawn anew. On the 16x32 grey
  thumbnails (``fingerprint.grey_thumbnail``; the recorded one from its ``level``) that
  is: many cells darker by one common ratio, the cells around the target among them,
  and a block of cells that the ratio does not explain. A standardised thumbnail cannot
  see it (a uniform dimming standardises away), hence the absolute levels.
- **a system dialog's texts** that the recorded screen did not show, when the screen was
  read anyway (its layout was not the recorded one at a glance, so the replay OCR'd it):
  the buttons of AOSP's permission dialog (PermissionController
  ``res/values/strings.xml``: ``grant_dialog_button_allow_foreground`` "While using the
  app", ``grant_dialog_button_allow_one_time`` "Only this time",
  ``grant_dialog_button_deny`` "Don’t allow").

A screen in the other theme than the recorded one is not compared by levels (the ratios
of an inverted screen are not one factor): its texts still are.

May import: numpy, the standard library and this package's fingerprints.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from mobile_agent.replay.fingerprint import ScreenFingerprint, fold_text

__all__ = ["DIALOG_TEXTS", "on_top"]

DIALOG_TEXTS = frozenset(fold_text(t) for t in ("While using the app", "Only this time", "Don’t allow", "Don't allow"))

_MEASURABLE = 48.0  # a recorded cell darker than this cannot show a dimming
_DIM_RANGE = (0.15, 0.85)  # the ratio of a dimmed cell to its recorded level
_SAME_RATIO = 0.12  # cells dimmed by one scrim agree on the ratio to this much
_SCREEN_SHARE = 0.4  # share of the measurable cells dimmed alike: the screen is under a scrim
_BAND_SHARE = 0.6  # share of the target's rows dimmed alike: the target is under a scrim
_NEW_BOX_SHARE = 0.03  # share of the cells that the dimming does not explain: something drawn on top
_NEW_LEVEL = 30.0  # grey levels off the dimmed prediction for a cell to count as new


def on_top(
    recorded: ScreenFingerprint,
    grey: np.ndarray,
    *,
    rows: tuple[float, float] | None = None,
    texts: Iterable[str] | None = None,
) -> str | None:
    """Why something new seems to be on top of the screen whose grey thumbnail is
    ``grey``, compared with ``recorded``; None when nothing is. ``rows``: the band
    around the replayed step's target, as shares of the screen's body height (top,
    bottom); ``texts``: the screen's folded texts, when it was read."""
    if texts is not None:
        new = sorted(DIALOG_TEXTS & (set(texts) - recorded.texts))
        if new:
            return f"a system dialog that the recorded screen did not have shows ({', '.join(repr(t) for t in new)})"
    before = recorded.grey()
    if before is None or before.shape != grey.shape:
        return None
    return _scrim(before, grey, rows)


def _scrim(before: np.ndarray, after: np.ndarray, rows: tuple[float, float] | None) -> str | None:
    measurable = before >= _MEASURABLE
    if measurable.mean() < 0.25:
        return None  # a dark screen: a scrim over it hardly shows
    ratio = np.where(measurable, (after + 1.0) / (before + 1.0), np.nan)
    dimmed = measurable & (ratio >= _DIM_RANGE[0]) & (ratio <= _DIM_RANGE[1])
    if not dimmed.any():
        return None
    factor = float(np.median(ratio[dimmed]))
    alike = dimmed & (np.abs(ratio - factor) <= _SAME_RATIO)
    unexplained = ~alike & (np.abs(after - factor * before) > _NEW_LEVEL)
    if unexplained.mean() < _NEW_BOX_SHARE:
        return None  # dimmed all over with nothing new: no dialog drawn
    screen_share = alike.sum() / measurable.sum()
    if screen_share >= _SCREEN_SHARE:
        return (f"the screen is dimmed to {factor:.2f} of its recorded levels over {screen_share:.0%} of it, "
                f"with something new drawn on {unexplained.mean():.0%}: a dialog over it")
    if rows is not None:
        top = max(0, int(np.floor(rows[0] * after.shape[0])))
        bottom = min(after.shape[0], max(top + 1, int(np.ceil(rows[1] * after.shape[0]))))
        band = measurable[top:bottom]
        if band.sum() and alike[top:bottom].sum() / band.sum() >= _BAND_SHARE:
            return f"the screen around the target is dimmed to {factor:.2f} of its recorded levels: something is over it"
    return None
