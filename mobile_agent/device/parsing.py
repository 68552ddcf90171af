"""Parsers of Android command output (``wm``, ``dumpsys``, ``cmd package``) and the
fuzzy label match of launcher apps. Pure functions over text, tested without a phone.

May import: the standard library only.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = [
    "InputViewport",
    "LauncherApp",
    "current_screen_size",
    "match_label",
    "parse_current_app",
    "parse_density",
    "parse_input_viewports",
    "parse_keyguard_secure",
    "parse_launcher_activities",
    "parse_locked",
    "parse_main_activities",
    "parse_rotation",
    "parse_screen_on",
    "parse_wm_size",
    "query_activities_unsupported",
]

_SIZE_RE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")
_DENSITY_RE = re.compile(r"(Physical|Override) density:\s*(\d+)")
_ROTATION_RES = (
    re.compile(r"mCurrentRotation=(?:ROTATION_)?(\d+)"),
    re.compile(r"SurfaceOrientation:\s*(\d)"),
    # Android 13/14 "InputDeviceOrientation: 1", Android 15+ "InputDeviceOrientation: Rotation90"
    re.compile(r"InputDeviceOrientation:\s*(?:Rotation)?(\d+)"),
    re.compile(r"\borientation=(\d)"),
    re.compile(r"mRotation=(\d)"),
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


def current_screen_size(wm_size: str, input_dump: str) -> tuple[int, int, int] | None:
    """(width, height, rotation) of the screen as it is turned now.

    ``wm size`` reports the *natural* orientation: portrait on phones, landscape on many
    tablets. So the size is turned for rotations 1 and 3 whatever its aspect (a
    landscape-natural tablet held upright is taller than wide). None without a size."""
    size = parse_wm_size(wm_size)
    if size is None:
        return None
    rotation = parse_rotation(input_dump) or 0
    width, height = size
    if rotation % 2 == 1:
        width, height = height, width
    return width, height, rotation


def parse_density(text: str) -> int | None:
    values = {kind: int(v) for kind, v in _DENSITY_RE.findall(text)}
    return values.get("Override") or values.get("Physical")


def parse_rotation(text: str) -> int | None:
    """Rotation as 0-3 (quarter turns) from ``dumpsys input`` / ``dumpsys display`` / window.

    ``dumpsys input`` of Android 13+ prints no ``SurfaceOrientation`` any more, only
    viewports (``Viewport INTERNAL: displayId=0, ... orientation=1, ... isActive=[1]``);
    the active one of the default display wins over inactive or placeholder viewports
    (``displayId=-1``).
    """
    viewports = parse_input_viewports(text)
    active = [v for v in viewports if v.active and v.display_id >= 0]
    if active:
        default = [v for v in active if v.display_id == 0]
        return (default or active)[0].orientation
    for pattern in _ROTATION_RES:
        match = pattern.search(text)
        if match:
            value = int(match.group(1))
            return value // 90 if value >= 90 else value % 4
    return None


@dataclass(frozen=True)
class InputViewport:
    """One ``Viewport`` line of ``dumpsys input``: the display it maps touches to, its
    rotation (0-3), the size of the logical frame (current orientation, pixels)."""

    display_id: int
    orientation: int
    width: int | None
    height: int | None
    active: bool


_VIEWPORT_RE = re.compile(
    r"Viewport \w+: displayId=(-?\d+),[^\n]*?orientation=(?:ROTATION_)?(\d+)"
    r"(?:[^\n]*?logicalFrame=\[(-?\d+), (-?\d+), (-?\d+), (-?\d+)\])?(?:[^\n]*?isActive=\[?(\w+)\]?)?"
)


def parse_input_viewports(text: str) -> list[InputViewport]:
    """Every distinct viewport of ``dumpsys input`` (the same one is printed once per
    touch device)."""
    seen: dict[tuple[object, ...], InputViewport] = {}
    for m in _VIEWPORT_RE.finditer(text):
        orientation = int(m.group(2))
        orientation = orientation // 90 if orientation >= 90 else orientation % 4
        width = height = None
        if m.group(3) is not None:
            width = int(m.group(5)) - int(m.group(3))
            height = int(m.group(6)) - int(m.group(4))
        flag = m.group(7)
        active = flag is None or flag in ("1", "true")
        viewport = InputViewport(int(m.group(1)), orientation, width, height, active)
        seen.setdefault((viewport.display_id, orientation, width, height, active), viewport)
    return list(seen.values())


# Windows of the system UI that hold the focus without being an app the user opened:
# the notification shade / lock screen (Android 11+), the status bar (<= 10), the
# keyguard, the IME, and Samsung's cover-screen home on foldables.
_NOT_APPS = re.compile(
    r"^(?:NotificationShade|StatusBar|Keyguard\w*|InputMethod|PopupWindow:.*|Toast|"
    r"com\.android\.systemui/\.subscreen\..*)$"
)
_WINDOW_RE = re.compile(r"mCurrentFocus=Window\{[0-9a-f]+(?: u\d+)? ([^}\s]+)(?: [^}]*)?\}")
# `ActivityRecord{HASH u0 PKG/ACT t9}`; Android 4.0/4.1 printed a bare `u` (`{2 u PKG/ACT t181}`)
# and older ones no `u` at all (`{c 0 PKG/ACT t181}`), as appium-adb's tests quote them.
_RECORD_RE = re.compile(r"ActivityRecord\{[0-9a-f]+ (?:u\d*|\d+) ([A-Za-z][\w.]*)/([\w.$]+)[ ,}]")


def _app_of(component: str) -> str | None:
    if _NOT_APPS.match(component):
        return None
    package = component.split("/", 1)[0]
    if "/" not in component or not re.fullmatch(r"[A-Za-z][\w]*(?:\.[A-Za-z][\w]*)+", package):
        return None
    if package == "com.android.systemui":
        return None
    return package


def _records(text: str, key: str) -> list[str]:
    """The apps of the ``ActivityRecord{...}`` on each ``KEY`` line, in order (system ones left out)."""
    found = []
    for line in re.finditer(rf"{key}(.*)", text):
        record = _RECORD_RE.search(line.group(1))
        if record:
            app = _app_of(f"{record.group(1)}/{record.group(2)}")
            if app:
                found.append(app)
    return found


def parse_current_app(text: str) -> str | None:
    """The package in front, from ``dumpsys window`` (or ``dumpsys activity activities``).

    Two witnesses: ``mFocusedApp`` (the activity holding focus) and ``mCurrentFocus``
    (the window holding focus). Several displays print one of each, some ``null``. The
    focused window answers when its app is one of the focused activities (or none is
    printed); otherwise the focused activity answers, as appium-adb reads it: an old
    phone (Android 4.0/4.1) may print another app's window, ``paused=false``, in focus
    over the activity in front. A system window in focus (notification shade, status
    bar, keyguard) is not an app. From ``dumpsys activity``: ``topResumedActivity=``
    (Android 10+), ``ResumedActivity:`` / ``mResumedActivity:``.
    """
    windows = [p for p in (_app_of(m.group(1)) for m in _WINDOW_RE.finditer(text)) if p]
    activities = _records(text, r"mFocusedApp=")
    if windows and (not activities or windows[-1] in activities):
        return windows[-1]
    if activities:
        return activities[-1]
    for key in (r"topResumedActivity=", r"\bResumedActivity: ", r"mResumedActivity: "):
        found = _records(text, key)
        if found:
            return found[-1]
    return None


_WAKEFULNESS_RE = re.compile(r"(?:\bmWakefulness|\bmWakefulnessRaw|getWakefulnessLocked\(\))=(\w+)")


def parse_screen_on(power: str) -> bool | None:
    """From ``dumpsys power``: is the screen on and interactive?

    ``mWakefulness=Awake`` (AOSP), ``getWakefulnessLocked()=Awake`` (Samsung, Android
    12+); ``Dozing`` (always-on display) and ``Dreaming`` count as off. Older builds:
    ``Display Power: state=ON``, ``mScreenOn=true``.
    """
    match = _WAKEFULNESS_RE.search(power)
    if match:
        return match.group(1).lower() == "awake"
    match = re.search(r"Display Power: state=(\w+)", power)
    if match:
        return match.group(1).upper() == "ON"
    match = re.search(r"mScreenOn=(\w+)", power)
    if match:
        return match.group(1).lower() == "true"
    match = re.search(r"mHoldingDisplaySuspendBlocker=(\w+)", power)
    if match:
        return match.group(1).lower() == "true"
    return None


def parse_locked(window: str) -> bool | None:
    """From ``dumpsys window``: is the keyguard (lock screen) in the way?

    Newest first: the keyguard service's own state (``KeyguardStateMonitor`` with
    ``mIsShowing`` + ``mInputRestricted``, as appium-adb reads it; ``KeyguardServiceDelegate``
    ``showing=`` unless ``occluded=true``), then ``isKeyguardShowing`` / ``mKeyguardShowing``,
    then Android <= 9's ``mShowingLockscreen`` / ``mDreamingLockscreen`` (only written after
    a layout pass, so they go last), then ``isStatusBarKeyguard``.
    """
    monitor = re.search(r"KeyguardStateMonitor\s+mIsShowing=(true|false)", window)
    if monitor:
        if monitor.group(1) == "false":
            return False
        restricted = re.search(r"\bmInputRestricted=(true|false)", window)
        # shown but not restricting input: trusted / being dismissed (appium-adb agrees)
        return restricted is None or restricted.group(1) == "true"
    delegate = re.search(r"KeyguardServiceDelegate\s+showing=(true|false)", window)
    if delegate:
        occluded = re.search(r"\boccluded=(true|false)", window[delegate.start() :])
        return delegate.group(1) == "true" and not (occluded and occluded.group(1) == "true")
    for key in ("isKeyguardShowing", "mKeyguardShowing"):
        match = re.search(rf"\b{key}=(true|false)", window)
        if match:
            return match.group(1) == "true"
    legacy = [m.group(2) for m in re.finditer(r"\b(mShowingLockscreen|mDreamingLockscreen)=(true|false)", window)]
    if legacy:
        return "true" in legacy
    match = re.search(r"\bisStatusBarKeyguard=(true|false)", window)
    if match:
        return match.group(1) == "true"
    return None


def parse_keyguard_secure(window: str) -> bool | None:
    """From ``dumpsys window``: does dismissing the keyguard take a credential (a PIN,
    pattern or password)?

    ``KeyguardServiceDelegate``'s ``secure=`` line (its ``KeyguardState.secure``, printed by
    AOSP ``services/core/java/com/android/server/policy/keyguard/KeyguardServiceDelegate.java``
    ``dump()``; ``secure=false`` as in appium-adb@8eea1a8 ``test/unit/lockmgmt.spec.ts``).
    That field is the delegate's cache of ``isSecure()``, refreshed whenever the system asks
    it and ``true`` until first asked (``KeyguardState()``: "Assume keyguard is showing and
    secure until we know for sure"): a phone just booted may say ``true`` with no credential,
    an error on the safe side (the run asks its person instead of swiping).
    Android <= 9's ``mShowingLockscreen`` dumps say nothing of it: None (unknown).
    """
    delegate = re.search(r"KeyguardServiceDelegate\b", window)
    if delegate is None:
        return None
    match = re.search(r"^\s*secure=(true|false)\s*$", window[delegate.end():], re.M)
    return None if match is None else match.group(1) == "true"


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
            shown = (match.group(3) or "").strip() or None
            apps.append(LauncherApp(match.group(1), match.group(2), shown))
    return apps


# What a phone answers to `cmd package query-activities` when it cannot: Android 6 and
# older have no `cmd` (the shell's "cmd: not found"), some vendor builds no such verb.
_UNSUPPORTED_RE = re.compile(r"cmd: not found|inaccessible or not found|Unknown command|Can't find service|Unknown option", re.I)


def query_activities_unsupported(text: str) -> bool:
    return bool(_UNSUPPORTED_RE.search(text))


_RESOLVER_ENTRY_RE = re.compile(r"^\s+[0-9a-f]+ ([A-Za-z][\w.]*)/([\w.$]+)(?: filter [0-9a-f]+)?\s*$")


def parse_main_activities(text: str) -> list[LauncherApp]:
    """Launcher activities from the activity resolver table of ``dumpsys package r``
    (old phones without ``cmd package``): the entries under ``android.intent.action.MAIN:``
    whose filter lists ``Category: "android.intent.category.LAUNCHER"`` (all of them
    when the build prints no categories)."""
    lines = text.splitlines()
    entries: list[tuple[LauncherApp, bool]] = []
    inside = False
    saw_category = False
    for line in lines:
        stripped = line.strip()
        if stripped.endswith(":") and not stripped.startswith(("Action", "Category")):
            inside = stripped == "android.intent.action.MAIN:"
            continue
        if not inside:
            continue
        entry = _RESOLVER_ENTRY_RE.match(line)
        if entry:
            entries.append((LauncherApp(entry.group(1), entry.group(2), None), False))
        elif stripped.startswith("Category:") and entries:
            saw_category = True
            if "android.intent.category.LAUNCHER" in stripped:
                entries[-1] = (entries[-1][0], True)
    seen: dict[str, LauncherApp] = {}
    for app, launcher in entries:
        if launcher or not saw_category:
            seen.setdefault(app.package, app)
    return list(seen.values())


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
