"""``AppCommands``: the app part of ``Device`` (list, resolve, launch, the one in front).

A mixin over ``Device.shell`` / ``run`` / ``check``: the commands differ between real
phones (no labels in ``query-activities``), old ones (no ``cmd package``) and phones
without hardware keys (``monkey`` needs ``--pct-syskeys 0``).

May import: the standard library, ``mobile_agent.errors`` and the sibling modules.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mobile_agent.device.parsing import (
    LauncherApp,
    match_label,
    parse_current_app,
    parse_launcher_activities,
    parse_main_activities,
    query_activities_unsupported,
)
from mobile_agent.device.validation import validate_package
from mobile_agent.errors import AppNotFoundError

if TYPE_CHECKING:
    from mobile_agent.device.adb_protocol import ShellResult

__all__ = ["AppCommands"]


class AppCommands:
    """Apps on the phone. Needs ``serial``, ``shell``, ``run``, ``check`` and a
    ``_launcher_cache`` attribute (set by ``Device.__init__``)."""

    serial: str
    _launcher_cache: tuple[float, list[LauncherApp]] | None

    if TYPE_CHECKING:  # provided by Device

        def shell(self, args: list[str]) -> str: ...

        def run(self, args: list[str]) -> ShellResult: ...

        def check(self, args: list[str]) -> str: ...

    def list_packages(self) -> list[str]:
        out = self.check(["pm", "list", "packages"])
        return sorted({ln[8:].strip() for ln in out.splitlines() if ln.startswith("package:")})

    def launcher_apps(self, *, max_age_s: float = 0.0) -> list[LauncherApp]:
        """The launcher activities (``LauncherApp``; real phones print no labels here).

        ``cmd package query-activities`` (Android 7+); where that is missing (old builds
        answer ``cmd: not found`` / ``Unknown command``), the ``MAIN`` entries of
        ``dumpsys package r``'s activity resolver table, and failing that every package
        of ``pm list packages`` (launched through ``monkey``). ``max_age_s`` reuses an
        answer of at most that age.
        """
        now = time.monotonic()
        if max_age_s and self._launcher_cache is not None and now - self._launcher_cache[0] <= max_age_s:
            return list(self._launcher_cache[1])
        out = self.shell(
            [
                "cmd", "package", "query-activities",
                "-a", "android.intent.action.MAIN", "-c", "android.intent.category.LAUNCHER",
            ]
        )  # fmt: skip
        apps = parse_launcher_activities(out)
        if not apps and query_activities_unsupported(out):
            apps = parse_main_activities(self.shell(["dumpsys", "package", "r"]))
            if not apps:
                apps = [LauncherApp(pkg, None, None) for pkg in self.list_packages()]
        self._launcher_cache = (now, apps)
        return list(apps)

    def resolve_app_label(self, label: str) -> str | None:
        """The package of the launcher app whose visible label matches ``label`` (fuzzy,
        case-insensitive) in what the phone prints, or None. ``mobile_agent.apps``
        resolves labels on real phones, whose listings carry none."""
        if not isinstance(label, str) or not label.strip():
            raise ValueError("app label must be a non-empty string")
        return match_label(label, self.launcher_apps())

    def launch_app(self, package: str) -> None:
        """Start ``package``'s launcher activity (``AppNotFoundError`` if it has none)."""
        validate_package(package)
        activity = None
        for app in self.launcher_apps(max_age_s=30.0):
            if app.package == package and app.activity:
                activity = app.activity
                break
        if activity:
            component = f"{package}/{activity}" if "/" not in activity else activity
            result = self.run(["am", "start", "-n", component])
            text = (result.stdout + result.stderr).decode("utf-8", "replace")
            if result.exit_code in (0, None) and "Error" not in text:
                return
        # --pct-syskeys 0: without it monkey aborts (exit 251, "** Monkey aborted") on
        # phones without hardware keys, and an installed app would be reported missing.
        result = self.run(
            ["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "--pct-syskeys", "0", "1"]
        )
        text = (result.stdout + result.stderr).decode("utf-8", "replace")
        if "No activities found" in text or "not found" in text.lower() or "aborted" in text.lower() or result.exit_code not in (0, None):
            raise AppNotFoundError(
                f"no launchable app {package!r} on {self.serial} (`mobile-agent devices` / list_packages shows what is installed)",
                serial=self.serial,
                app=package,
            )

    def current_app(self) -> str | None:
        """The package in front (never the notification shade or the status bar)."""
        app = parse_current_app(self.shell(["dumpsys", "window"]))
        if app is None:
            app = parse_current_app(self.shell(["dumpsys", "activity", "activities"]))
        return app

    def force_stop(self, package: str) -> None:
        self.check(["am", "force-stop", validate_package(package)])
