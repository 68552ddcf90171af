"""Parsers of Android command output (``wm``, ``dumpsys``, ``cmd package``) and the
fuzzy label match of launcher apps. Pure functions over text, tested without a phone.

May import: the standard library only.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = [
    "LauncherApp",
    "match_label",
    "parse_current_app",
    "parse_density",
    "parse_launcher_activities",
    "parse_locked",
    "parse_rotation",
    "parse_screen_on",
    "parse_wm_size",
]

_SIZE_RE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")
_DENSITY_RE = re.compile(r"(Physical|Override) density:\s*(\d+)")
_ROTATION_RES = (
    re.compile(r"mCurrentRotation=(?:ROTATION_)?(\d+)"),
    re.compile(r"SurfaceOrientation:\s*(\d)"),
    re.compile(r"\borientation=(\d)"),
    re.compile(r"mRotation=(\d)"),
)
_FOCUS_RES = (
    re.compile(r"mCurrentFocus=Window\{[^}]*?\s([A-Za-z][\w.]*)/[^\s}]+\}"),
    re.compile(r"mFocusedApp=.*?\s([A-Za-z][\w.]*)/[^\s}]+"),
    re.compile(r"mCurrentFocus=Window\{[^}]*?\s([A-Za-z][\w.]*)\}"),
)
_PACKAGE_LINE_RE = re.compile(r"^\s*packageName=(\S+)", re.M)
# `labelRes=0x7f14 nonLocalizedLabel=YouTube Music icon=0x7f08`: the label may hold spaces
_LABEL_RE = re.compile(r"(?:^|\s)(?:nonLocalizedLabel|label)=(.*?)(?=\s+(?:icon|banner|logo|theme)=|\s*$)", re.M)


@dataclass(frozen=True)
class LauncherApp:
    """A launcher activity: its package, activity (may be None) and visible label."""

    package: str
    activity: str | None
    label: str | None


def parse_wm_size(text: str) -> tuple[int, int] | None:
    """(width, height) from ``wm size``; the override size wins over the physical one."""
    sizes = {kind: (int(w), int(h)) for kind, w, h in _SIZE_RE.findall(text)}
    return sizes.get("Override") or sizes.get("Physical")


def parse_density(text: str) -> int | None:
    values = {kind: int(v) for kind, v in _DENSITY_RE.findall(text)}
    return values.get("Override") or values.get("Physical")


def parse_rotation(text: str) -> int | None:
    """Rotation as 0-3 (quarter turns) from ``dumpsys input`` / ``dumpsys display`` / window."""
    for pattern in _ROTATION_RES:
        match = pattern.search(text)
        if match:
            value = int(match.group(1))
            return value // 90 if value >= 90 else value % 4
    return None


def parse_current_app(text: str) -> str | None:
    """The focused package from ``dumpsys window`` (mCurrentFocus, then mFocusedApp)."""
    for pattern in _FOCUS_RES:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


def parse_screen_on(power: str) -> bool | None:
    """From ``dumpsys power``: ``mWakefulness=Awake`` / ``Display Power: state=ON``."""
    match = re.search(r"mWakefulness=(\w+)", power)
    if match:
        return match.group(1).lower() == "awake"
    match = re.search(r"Display Power: state=(\w+)", power)
    if match:
        return match.group(1).upper() == "ON"
    match = re.search(r"mScreenOn=(\w+)", power)
    if match:
        return match.group(1).lower() == "true"
    return None


def parse_locked(window: str) -> bool | None:
    """From ``dumpsys window``: keyguard showing (mDreamingLockscreen, isStatusBarKeyguard…)."""
    for key in ("mDreamingLockscreen", "isStatusBarKeyguard", "mShowingLockscreen", "showing"):
        match = re.search(rf"\b{key}=(true|false)", window)
        if match:
            return match.group(1) == "true"
    return None


def parse_launcher_activities(text: str) -> list[LauncherApp]:
    """Launcher activities from ``cmd package query-activities`` output.

    Understood: the verbose ResolveInfo dump (blocks with ``packageName=``, ``name=``
    and ``nonLocalizedLabel=`` / ``label=``), and brief lines ``pkg/activity`` with an
    optional label after a tab or `` label=``.
    """
    apps: list[LauncherApp] = []
    if _PACKAGE_LINE_RE.search(text):
        blocks = re.split(r"(?m)^\s*(?:Activity #\d+:|ResolveInfo\{)", text)
        for block in blocks:
            pkg = _PACKAGE_LINE_RE.search(block)
            if not pkg:
                continue
            name = re.search(r"^\s*name=(\S+)", block, re.M)
            label = _LABEL_RE.search(block)
            label_text = label.group(1).strip() if label else None
            if label_text in ("null", ""):
                label_text = None
            apps.append(LauncherApp(pkg.group(1), name.group(1) if name else None, label_text))
        return apps
    for line in text.splitlines():
        line = line.strip()
        match = re.match(r"^([A-Za-z][\w.]*)/([\w.$]+)(?:\s+(?:label=)?(.*))?$", line)
        if match:
            label = (match.group(3) or "").strip() or None
            apps.append(LauncherApp(match.group(1), match.group(2), label))
    return apps


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def match_label(label: str, apps: list[LauncherApp], cutoff: float = 0.75) -> str | None:
    """The package whose label matches ``label`` best (case-insensitive, fuzzy), or None.

    Exact (normalized) match first, then a unique prefix/containment, then the closest
    label by similarity ratio above ``cutoff``, then (for apps without a label) a unique
    package whose last part is the label.
    """
    wanted = _norm(label)
    if not wanted:
        return None
    named = [(app, _norm(app.label)) for app in apps if app.label]
    for app, norm in named:
        if norm == wanted:
            return app.package
    partial = {app.package for app, norm in named if norm.startswith(wanted) or wanted in norm.split()}
    if len(partial) == 1:
        return partial.pop()
    best: tuple[float, str] | None = None
    for app, norm in named:
        ratio = difflib.SequenceMatcher(None, wanted, norm).ratio()
        if ratio >= cutoff and (best is None or ratio > best[0]):
            best = (ratio, app.package)
    if best:
        return best[1]
    # Real phones mostly print nonLocalizedLabel=null: then a package whose last part is
    # the label ("Chrome" -> com.android.chrome), if exactly one is.
    squeezed = wanted.replace(" ", "")
    unlabeled = {app.package for app in apps if not app.label and app.package.rsplit(".", 1)[-1].lower() == squeezed}
    return unlabeled.pop() if len(unlabeled) == 1 else None
