"""The Rico development apps split in two halves, for two-fold measurement (issue 30).

A change to perception is tuned by looking at the misses of one half only, then measured
on the other half, which it has not seen; then the halves swap. The split is by app (a
screen never sits in one half while another screen of its app sits in the other), made
once by hand so each half holds icons in list rows, toolbar icons and text targets in
like numbers (icons: A 20 control + 18 row, B 30 control + 10 row; text: A 110, B 102).

May import: the standard library.
"""

from __future__ import annotations

HALVES: dict[str, tuple[str, ...]] = {
    "A": (
        "afzkl.development.mVideoPlayer",
        "air.com.adobe.connectpro",
        "air.com.interactech.moovz",
        "air.com.nbcuni.com.nbcsports.liveextra",
        "air.fisherprice.com.shapesAndColors",
    ),
    "B": (
        "aa.apps.dailyreflections",
        "adidas.app3",
        "air.com.launchday.mobile.rocketleague",
        "air.com.readysquare.scsm",
        "air.com.stardoll.access",
        "air.com.tinychat.mobile",
    ),
}


def half_of(image: str) -> str:
    """'A' or 'B' for a screen path relative to rico-dev (``<package>/trace_N/n.jpg``)."""
    app = image.split("/", 1)[0]
    for name, apps in HALVES.items():
        if app in apps:
            return name
    raise KeyError(f"{app!r} is in no half of benchmarks/rico_folds.py: add it to one")
