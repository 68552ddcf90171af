"""The simulated phone's navigation and input state: per-app task back stacks, the
foreground app, recents, the notification shade, the runtime-permission dialog, BACK, text
focus and typing, screen power and the keyguard.

`NavigationMixin` is one half of `simphone.phone.PhoneModel` (the other holds settings,
packages, geometry, the clock and the whole-state dict); split off to keep each file to one
concern. It works on the model's `_state` dict (schema in simphone/STATE.md) and calls the
app registry's `main_view` / `on_back` / `on_enter` through the context the screen side
gives (`app_context`).

May import: the standard library, `simphone.permissions`, `simphone.profiles` (types only). Knows nothing of the agent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from simphone import permissions

if TYPE_CHECKING:
    from simphone.profiles import Profile

__all__ = ["LAUNCHER", "NavigationMixin"]

LAUNCHER = "com.android.launcher3"


class NavigationMixin:
    """Tasks, navigation, focus and power over `PhoneModel._state` (mixed into `PhoneModel`)."""

    # provided by PhoneModel (and app_context by the screen side, simphone.screen)
    apps: Mapping[str, Any]
    profile: Profile
    lock: threading.RLock
    _state: dict[str, Any]
    app_context: Callable[[str], Any]

    # -- tasks and navigation -----------------------------------------------------------
    @property
    def foreground(self) -> str:
        return self._state["foreground"]

    def task(self, package: str) -> list[dict[str, Any]]:
        return self._state["tasks"][package]

    def activity_of(self, package: str) -> str:
        app = self.apps.get(package)
        if app is None:
            return ".MainActivity"
        tasks = self._state["tasks"]
        return app.view_activity(tasks[package][-1]) if package in tasks else app.activity

    def launch(self, package: str, view: dict[str, Any] | None = None) -> None:
        """Bring `package`'s task to the front (starting it with `view` or its main view)."""
        if package not in self._state["installed"] or package not in self.apps:
            raise KeyError(f"package {package!r} is not installed")
        if package == LAUNCHER:
            self.go_home()
            return
        tasks = self._state["tasks"]
        if view is not None or package not in tasks:
            tasks[package] = [view if view is not None else self.apps[package].main_view()]
        self._state["foreground"] = package
        recents = self._state["recents"]
        if package in recents:
            recents.remove(package)
        recents.insert(0, package)
        self._state["focus"] = None
        self._state["shade_open"] = False
        permissions.on_front(self._state, package)

    def go_home(self) -> None:
        page = 0
        if self.foreground != LAUNCHER:
            page = self.task(LAUNCHER)[0].get("page", 0)
        self._state["tasks"][LAUNCHER] = [dict(self.apps[LAUNCHER].main_view(), page=page)]
        self._state["foreground"] = LAUNCHER
        self._state["focus"] = None
        self._state["shade_open"] = False
        self._state["permission_request"] = None

    def show_recents(self) -> None:
        self._state["tasks"][LAUNCHER] = [self.task(LAUNCHER)[0], {"view": "recents"}]
        self._state["foreground"] = LAUNCHER
        self._state["focus"] = None
        self._state["shade_open"] = False

    def force_stop(self, package: str) -> None:
        with self.lock:
            if package == LAUNCHER:
                return
            self._state["tasks"].pop(package, None)
            if package in self._state["recents"]:
                self._state["recents"].remove(package)
            if self.foreground == package:
                self.go_home()

    def push_view(self, package: str, view: dict[str, Any]) -> None:
        self.task(package).append(view)
        self._state["focus"] = None

    def pop_view(self, package: str) -> None:
        stack = self.task(package)
        self._state["focus"] = None
        if len(stack) > 1:
            stack.pop()
        elif package != LAUNCHER and self.foreground == package:
            self.go_home()  # Android 12+: BACK on a task's root moves the task to the back

    @property
    def permission_request(self) -> dict[str, Any] | None:
        """The runtime permission the system's dialog asks for now (`simphone.permissions`)."""
        return permissions.request(self._state)

    def answer_permission(self, allow: bool) -> None:
        permissions.settle_request(self._state, allow)

    def change_permission(self, verb: str, package: str, permission: str) -> str | None:
        """`pm grant` / `pm revoke`: None, or the error text."""
        change = permissions.grant if verb == "grant" else permissions.revoke
        return change(self._state, package, permission)

    @property
    def shade_open(self) -> bool:
        """The notification shade (quick settings) is pulled down over the app."""
        return bool(self._state["shade_open"])

    def set_shade(self, open_: bool) -> None:
        self._state["shade_open"] = open_

    def press_back(self) -> None:
        if self._state["shade_open"]:
            self._state["shade_open"] = False
            return
        if self._state.get("permission_request"):  # BACK answers the permission dialog: not allowed
            permissions.settle_request(self._state, allow=False)
            return
        if self._state["focus"] is not None:  # the first BACK only hides the keyboard
            self._state["focus"] = None
            return
        package = self.foreground
        if self.apps[package].on_back(self.app_context(package)):
            return
        self.pop_view(package)

    # -- text focus ---------------------------------------------------------------------
    def focused_field(self) -> str | None:
        return self._state["focus"]

    def set_focus(self, field: str | None) -> None:
        self._state["focus"] = field

    @property
    def keyboard_visible(self) -> bool:
        return self._state["focus"] is not None

    def type_text(self, text: str) -> bool:
        """Append `text` to the focused field; False when no field has focus."""
        field = self._state["focus"]
        if field is None or not self.screen_on:
            return False
        ctx = self.app_context(self.foreground)
        parts = text.split("\n")
        for i, part in enumerate(parts):
            if part:
                ctx.set_field(field, ctx.field(field) + part)
            if i < len(parts) - 1:
                self.apps[self.foreground].on_enter(ctx, field)
                if self._state["focus"] is None:
                    break
        return True

    def press_enter(self) -> None:
        field = self._state["focus"]
        if field is not None:
            self.apps[self.foreground].on_enter(self.app_context(self.foreground), field)

    def delete_char(self) -> None:
        field = self._state["focus"]
        if field is not None:
            ctx = self.app_context(self.foreground)
            ctx.set_field(field, ctx.field(field)[:-1])

    def clear_text(self) -> None:
        field = self._state["focus"]
        if field is not None:
            self.app_context(self.foreground).set_field(field, "")

    # -- screen power -------------------------------------------------------------------
    @property
    def screen_on(self) -> bool:
        return bool(self._state["screen_on"])

    def set_screen(self, on: bool) -> None:
        """POWER / WAKEUP / SLEEP: a dark screen shows black, has no elements, ignores touch."""
        self._state["screen_on"] = on
        if not on:
            self._state["shade_open"] = False
            self._state["bouncer"] = None
            if self.profile.lock_screen or self.keyguard_secure:
                self._state["keyguard"] = True

    # -- keyguard (the lock screen) ------------------------------------------------------
    @property
    def keyguard_showing(self) -> bool:
        return bool(self._state["keyguard"])

    @property
    def keyguard_secure(self) -> bool:
        """A credential is set (`locksettings set-pin`): a swipe up asks for it."""
        return self._state["lock_pin"] is not None

    def set_lock_pin(self, pin: str | None) -> None:
        self._state["lock_pin"] = pin

    def lock_pin_matches(self, candidate: str) -> bool:
        return self._state["lock_pin"] is not None and candidate == self._state["lock_pin"]

    def unlock(self) -> None:
        """A swipe up or `input keyevent 82`: dismisses a keyguard with no credential; with a
        PIN set it opens the PIN entry (the bouncer) instead, as Android does."""
        if self.keyguard_secure:
            if self._state["bouncer"] is None:
                self._state["bouncer"] = ""
            return
        self._state["keyguard"] = False

    @property
    def bouncer_entry(self) -> str | None:
        """The digits typed into the shown PIN entry, or None when it is not shown."""
        return self._state["bouncer"] if self.keyguard_showing else None

    def bouncer_key(self, text: str) -> None:
        """Digits typed on the PIN entry; Enter (``"\n"``) checks them: the right PIN
        dismisses the keyguard, a wrong one empties the entry."""
        if self._state["bouncer"] is None:
            return
        for ch in text:
            if ch == "\n":
                if self._state["bouncer"] == self._state["lock_pin"]:
                    self._state["keyguard"] = False
                    self._state["bouncer"] = None
                    return
                self._state["bouncer"] = ""
            elif ch == "\b":
                self._state["bouncer"] = self._state["bouncer"][:-1]
            elif ch.isdigit() and len(self._state["bouncer"]) < 16:
                self._state["bouncer"] += ch

