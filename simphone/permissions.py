"""Runtime permissions and the system's permission dialog.

`pm revoke PACKAGE PERMISSION` and `pm grant PACKAGE PERMISSION` (the real shell
commands; silent, exit 0, on success) change what an app may do. Every permission is
granted at reset. An app that needs a permission group when it comes to the front
(`ASKS_AT_START`: Google Maps asks for the location) finds it revoked and asks: the
system's dialog (PermissionController's GrantPermissionsActivity) shows over the app, its
background dimmed, and takes every tap until it is answered:

- "While using the app" or "Only this time": granted, the dialog goes;
- "Don’t allow" or BACK: still revoked, the dialog goes (the app asks again the next
  time it comes to the front); HOME leaves it, the same.

Texts as AOSP's PermissionController has them (packages/modules/Permission/
PermissionController/res/values/strings.xml: the location group's request "Allow
<b>%1$s</b> to access this device’s location?", `grant_dialog_button_allow_foreground`
"While using the app", `grant_dialog_button_allow_one_time` "Only this time",
`grant_dialog_button_deny` "Don’t allow"), as Appium tests quote them on Android 11+.
While it shows, `uiautomator dump` names the window's package
`com.google.android.permissioncontroller` and lists the dialog's elements only.

State (`Phone.state()`): `revoked` (package → revoked permissions), `permission_request`
(`{package, group}` or null). This module keeps that part of the state model (functions
over the state dict); `simphone.ui.permission_dialog` draws the dialog.

May import: the standard library only (the state model imports it).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ASKS_AT_START", "CONTROLLER_PACKAGE", "REQUESTS", "grant", "on_front", "request", "revoke", "settle_request"]

CONTROLLER_PACKAGE = "com.google.android.permissioncontroller"
LOCATION = ("android.permission.ACCESS_FINE_LOCATION", "android.permission.ACCESS_COARSE_LOCATION")
GROUPS = {"location": LOCATION}
REQUESTS = {"location": "Allow {label} to access this device’s location?"}
ASKS_AT_START = {"com.google.android.apps.maps": "location"}
KNOWN = frozenset(p for group in GROUPS.values() for p in group)

State = dict[str, Any]  # the phone's state dict (PhoneModel._state)


def _revoked(state: State) -> dict[str, list[str]]:
    revoked: dict[str, list[str]] = state.setdefault("revoked", {})
    return revoked


def revoke(state: State, package: str, permission: str) -> str | None:
    """`pm revoke`: None, or the error text."""
    error = _check(state, "revoke", package, permission)
    if error is None and permission not in _revoked(state).setdefault(package, []):
        _revoked(state)[package].append(permission)
    return error


def grant(state: State, package: str, permission: str) -> str | None:
    """`pm grant`: None, or the error text."""
    error = _check(state, "grant", package, permission)
    if error is None and permission in _revoked(state).get(package, []):
        _revoked(state)[package].remove(permission)
    return error


def _check(state: State, verb: str, package: str, permission: str) -> str | None:
    head = f"Exception occurred while executing '{verb}':\njava.lang.IllegalArgumentException: "
    if package not in state["installed"]:
        return f"{head}Unknown package: {package}\n"
    if permission not in KNOWN:
        return f"{head}Unknown permission: {permission}\n"
    return None


def on_front(state: State, package: str) -> None:
    """`package` came to the front: it asks for the group it needs when that is revoked."""
    group = ASKS_AT_START.get(package)
    revoked = set(_revoked(state).get(package, []))
    asks = group is not None and bool(revoked & set(GROUPS[group]))
    state["permission_request"] = {"package": package, "group": group} if asks else None


def request(state: State) -> dict[str, Any] | None:
    """The request the dialog shows, if one does."""
    value = state.get("permission_request")
    return value if isinstance(value, dict) else None


def settle_request(state: State, allow: bool) -> None:
    """The dialog's answer (BACK, HOME: not allowed)."""
    asked = request(state)
    if asked is None:
        return
    if allow:
        for permission in GROUPS[asked["group"]]:
            if permission in _revoked(state).get(asked["package"], []):
                _revoked(state)[asked["package"]].remove(permission)
    state["permission_request"] = None
