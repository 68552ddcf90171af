"""Open App: resolve the name to a package and launch it; when no layer of
``mobile_agent.apps`` knows the name, find the icon on the screen like a person would.

The order: (1) the name's package (an Android phone: ``mobile_agent.apps``' layers; an
iPhone: its bundle id table, ``IosDevice.resolve_app_label``); (2) on a phone that names its
apps itself (``lists_apps`` False: an iPhone), the home screen's icons as the phone's own tree
names them (WDA's page source: SpringBoard's ``XCUIElementTypeIcon`` elements, read whatever
the ``perception.accessibility`` setting, which governs perception's use of the tree, not
the phone's own answer) - the icon labelled with the name on the page shown is tapped;
(3) the screen search below, which on such a phone reads each page's tree the same way
before its text lookup.

A phone behind its keyguard is unlocked first where no credential is needed, else the
step hands over saying the phone is locked (``operations.keyguard``).

The screen search goes through every home-screen page (swiping left until the page
stops changing), then opens the app drawer (a swipe up from the bottom) and scrolls it
to its end, reading the labels with the locator (OCR, and the accessibility tree where the
``perception.accessibility`` setting is on: ``lookup.find_text_on``, every operation's
lookup; an iPhone's tree is WDA's page source). Where several tiles match, or an icon's
logo repeats the name above its label, the lowest match is the label and is
tapped: the planner is not asked to choose between copies of one app. "Not installed"
is said only when the resolver and every page of the search agree.

May import: numpy, perception.types, perception.accessibility, mobile_agent.errors,
mobile_agent.apps, mobile_agent.settings and the sibling modules.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mobile_agent.apps import resolver_for
from mobile_agent.apps.names import normalize_name
from mobile_agent.errors import AppNotFoundError
from mobile_agent.operations.context import OperationContext, Outcome
from mobile_agent.operations.keyguard import unlock_or_stop
from mobile_agent.operations.lookup import find_text_on
from perception.accessibility import parse_uiautomator_dump
from perception.errors import InvalidInputError
from perception.types import LocateStatus, Location

__all__ = ["HOME_ICONS", "ScreenSearch", "open_app_by_name", "pick_tile", "tap_home_icon"]

log = logging.getLogger(__name__)

_MAX_HOME_PAGES = 8
_MAX_DRAWER_SCROLLS = 12
_SAME_FRAME = 0.004  # share of changed pixels under which a swipe "did nothing"


def open_app_by_name(name: str, ctx: OperationContext) -> Outcome:
    locked = unlock_or_stop(ctx)  # an app launched behind the keyguard is not open for anyone
    if locked is not None:
        return locked
    package, layer = _resolve(name, ctx)
    if package is not None:
        try:
            ctx.device.launch_app(package)
        except AppNotFoundError:
            log.info(
                "%s resolved %r to %s, which did not launch; looking on the screen", layer, name, package
            )
        else:
            return Outcome(ok=True, feedback=f"Opened {name} ({package}).")
    if not ctx.device.lists_apps:
        tapped = tap_home_icon(ctx, name)
        if tapped is not None:
            return tapped
    return ScreenSearch(ctx, name).run()


HOME_ICONS = "page source"  # the Location backend of an icon found in the phone's own tree


def tap_home_icon(ctx: OperationContext, name: str) -> Outcome | None:
    """Step (2): go home and tap the icon the phone's own tree labels ``name`` (on the page
    shown, the Dock included); None when the tree gives none (no tree, or no such icon there)."""
    device = ctx.device
    device.key("home")
    agent = ctx.settings.agent
    device.wait_settled(agent.settle_timeout_s, agent.settle_interval_s, agent.settle_tolerance, cancel=ctx.cancel)
    return _tap_icon_in_tree(ctx, name, "on the home screen")


def _tap_icon_in_tree(ctx: OperationContext, name: str, where: str) -> Outcome | None:
    """Tap the icon the phone's own tree (an iPhone: WDA's page source) labels ``name`` on the
    screen shown; None when the tree names none."""
    device = ctx.device
    xml = device.accessibility_xml()
    if not xml:
        return None
    try:
        nodes = parse_uiautomator_dump(xml)
    except InvalidInputError as exc:
        log.info("no home screen tree for Open App: %s", exc)
        return None
    wanted = normalize_name(name)
    icons = [n for n in nodes if n.clickable and n.label and normalize_name(n.label) == wanted and n.bounds.width > 0]
    if not icons:
        return None
    icon = max(icons, key=lambda n: n.bounds.width * n.bounds.height)  # the icon, not a smaller look-alike
    point = icon.bounds.center
    device.tap(*point)
    location = Location(LocateStatus.FOUND, name, point=point, box=icon.bounds, backend=HOME_ICONS)
    return Outcome(ok=True, feedback=f"Tapped the {name!r} icon {where}.", tap_point=point, location=location)


def _resolve(name: str, ctx: OperationContext) -> tuple[str | None, str | None]:
    device = ctx.device
    if not device.lists_apps:  # an iPhone: the phone's own names (its bundle id table) only
        return device.resolve_app_label(name), "device"
    cache = ctx.settings.adb.app_cache_dir
    resolution = resolver_for(device, Path(cache).expanduser() if cache is not None else None).resolve(name)
    return resolution.package, resolution.layer


def pick_tile(loc: Location, name: str) -> tuple[int, int] | None:
    """Where to tap for ``name`` on a launcher screen: the single match, or among several
    the exact label matches first and of those the lowest (a tile's label sits under its
    icon, whose logo may spell the name too)."""
    if loc.status is LocateStatus.FOUND and loc.point is not None:
        return loc.point
    if loc.status is not LocateStatus.CANDIDATES or not loc.candidates:
        return None
    wanted = normalize_name(name)
    exact = [c for c in loc.candidates if c.text is not None and normalize_name(c.text) == wanted]
    pool = exact or list(loc.candidates)
    lowest = max(pool, key=lambda c: (c.box.bottom, -c.box.left))
    return lowest.box.center


@dataclass
class ScreenSearch:
    """The search of the home pages and the app drawer for one name."""

    ctx: OperationContext
    name: str

    def run(self) -> Outcome:
        device = self.ctx.device
        device.key("home")
        frame = self._settle()
        found = self._find(frame)
        if found:
            return found
        for _ in range(_MAX_HOME_PAGES - 1):  # the pages right of the first one
            moved = self._swipe_page(frame, 0.85, 0.5, 0.15, 0.5)
            if moved is None:
                break
            frame = moved
            found = self._find(frame, where="on a home screen page")
            if found:
                return found
        device.key("home")
        self._settle()
        drawer = self._swipe_page(None, 0.5, 0.9, 0.5, 0.3)  # opens the app drawer
        if drawer is not None:
            found = self._find(drawer, where="in the app drawer")
            if found:
                return found
            for _ in range(_MAX_DRAWER_SCROLLS):
                moved = self._swipe_page(drawer, 0.5, 0.75, 0.5, 0.3)
                if moved is None:
                    break
                drawer = moved
                found = self._find(drawer, where="in the app drawer")
                if found:
                    return found
        device.key("home")
        return Outcome(
            ok=False,
            feedback=f"No installed app is called {self.name!r}: it is not on any home screen page nor in the app "
            "drawer; check the app's exact name or open it another way.",
        )

    def _settle(self) -> np.ndarray:
        agent = self.ctx.settings.agent
        shot = self.ctx.device.wait_settled(
            agent.settle_timeout_s, agent.settle_interval_s, agent.settle_tolerance, cancel=self.ctx.cancel
        )
        return shot.pixels

    def _swipe_page(
        self, before: np.ndarray | None, fx1: float, fy1: float, fx2: float, fy2: float
    ) -> np.ndarray | None:
        """Swipe (fractions of the screen), wait; the new frame, or None if nothing moved."""
        width, height = self.ctx.size
        self.ctx.device.swipe(
            int(width * fx1), int(height * fy1), int(width * fx2), int(height * fy2), duration_ms=350
        )
        after = self._settle()
        if before is not None and _difference(before, after) <= _SAME_FRAME:
            return None
        return after

    def _find(self, frame: np.ndarray, where: str = "on the home screen") -> Outcome | None:
        if not self.ctx.device.lists_apps:  # the phone's own tree names its icons (an iPhone's page source)
            tapped = _tap_icon_in_tree(self.ctx, self.name, where)
            if tapped is not None:
                return tapped
        # the one text lookup (the accessibility tree with that setting on: an iPhone's page source)
        loc = find_text_on(self.ctx.device, self.ctx.locator, frame, self.name, self.ctx.settings)
        point = pick_tile(loc, self.name)
        if point is None:
            return None
        self.ctx.device.tap(*point)
        return Outcome(ok=True, feedback=f"Tapped {self.name!r} {where}.", tap_point=point, location=loc)


def _difference(a: np.ndarray, b: np.ndarray, step: int = 8, threshold: int = 8) -> float:
    if a.shape != b.shape:
        return 1.0
    ta = a[::step, ::step].astype(np.int16).sum(axis=2) // 3
    tb = b[::step, ::step].astype(np.int16).sum(axis=2) // 3
    return float(np.count_nonzero(np.abs(ta - tb) > threshold)) / float(ta.size)
