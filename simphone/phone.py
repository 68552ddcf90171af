"""The simulated phone's state model: settings, installed packages, clock, rotation and app
data, as one JSON-able dict (schema in simphone/STATE.md); its tasks and navigation, text
focus, screen power and keyguard are `simphone.navigation.NavigationMixin`. It knows which
real phone it plays through its device profile (`simphone.profiles`).

What the model does not hold is given to it from outside (`simphone.assembly` builds the
phone): the app registry (`apps`: package -> app object with `initial_data`,
`main_view`, `on_back`, `on_enter`, `view_activity` ...), the shell command runner
(`shell(phone, argv)`) and the screen (`app_context`, rendering, touch: a subclass adds
them). So this module imports neither the command shell nor the apps nor the renderer,
and they may import it.

May import: the standard library, `simphone.types`, `simphone.fs`, `simphone.profiles`,
`simphone.navigation`.
Knows nothing of the agent.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from simphone.fs import VirtualFS
from simphone.navigation import LAUNCHER, NavigationMixin
from simphone.profiles import DEFAULT_PROFILE, Profile, load_profile
from simphone.types import CommandResult

__all__ = ["ADB_KEYBOARD_IME", "DEFAULT_CLOCK", "LATIN_IME", "LAUNCHER", "PhoneModel", "ShellRunner"]

LATIN_IME = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_PACKAGE = "com.android.adbkeyboard"
DEFAULT_CLOCK = datetime(2024, 5, 20, 9, 41, 0)
SYSTEM_PACKAGES = ["android", "com.android.systemui", "com.android.shell", "com.android.phone",
                   "com.android.providers.settings", "com.google.android.inputmethod.latin", LAUNCHER]
SCHEMA_VERSION = 1

ShellRunner = Callable[["PhoneModel", list[str]], CommandResult]


class PhoneModel(NavigationMixin):
    """The state of one simulated Android phone (see simphone/STATE.md). Build a working
    phone with `simphone.Phone` (`simphone.assembly`), which supplies apps, shell, screen."""

    def __init__(self, *, apps: Mapping[str, Any], shell: ShellRunner, profile: str | Profile = DEFAULT_PROFILE,
                 width: int | None = None, height: int | None = None, density: int | None = None,
                 seed: int = 0, name: str | None = None, number: int = 1, adb_keyboard: bool = False,
                 clock: datetime | None = None) -> None:
        self.profile = profile if isinstance(profile, Profile) else load_profile(profile)
        natural_w, natural_h = self.profile.screen_size
        natural_w, natural_h = width or natural_w, height or natural_h
        if not (320 <= natural_w <= 4096 and 320 <= natural_h <= 8192 and max(natural_w, natural_h) >= 480):
            raise ValueError(f"unsupported screen size {natural_w}x{natural_h} (320x480 to 4096x8192)")
        if not isinstance(number, int) or number < 1:
            raise ValueError(f"number (the phone's place among those started together) must be >= 1, got {number!r}")
        self.apps = apps
        self._shell = shell
        self.natural_width, self.natural_height = natural_w, natural_h
        self._sized_by_caller = width is not None or height is not None
        self.density = density or self.profile.override_density or self.profile.density
        # what `wm size WxH` / `wm density N` force until `reset` (None: nothing forced)
        self._boot_display = (natural_w, natural_h, self.density)
        self.forced_size: tuple[int, int] | None = None
        self.forced_density: int | None = None
        self.number = number
        # the system bars drawn: "android" (status bar, navigation bar with Back/Home/Recents), or
        # "ios" (the simulated iPhone, ``simphone.ios``: an iOS status bar and the home indicator)
        self.system_look = "android"
        # identity: phones started together differ by serial and, where the profile says
        # so (the default SimPhone), by model; real models repeat ("Pixel 7" twice)
        self.serial = f"{self.profile.props.get('ro.product.device', 'sim')[:4].upper()}{number:06d}"
        self.props = {k: _fill(v, number=number, serial=self.serial) for k, v in self.profile.props.items()}
        self.name = name or self.props.get("ro.product.name", "simphone")
        self.model = self.props.get("ro.product.model", "SimPhone")
        self.device = self.props.get("ro.product.device", "simphone")
        self.adb_keyboard = adb_keyboard
        self.adb_features = self.profile.adb_features  # what its adbd announces (None: Android 7+'s)
        self.fs = VirtualFS()
        self.history: deque[list[str]] = deque(maxlen=64)  # the last commands run (tests read it)
        self.lock = threading.RLock()  # one command at a time, whatever thread serves ADB
        self._ime_bound_at = 0.0
        self._initial_clock = clock or DEFAULT_CLOCK
        self._initial_seed = seed
        self.reset(seed)

    # -- what the assembly provides ----------------------------------------------------------
    def app_context(self, package: str) -> Any:
        """The context an app's callbacks get (the screen side builds it)."""
        raise NotImplementedError("a PhoneModel needs a screen: use simphone.Phone")

    # -- screen geometry ----------------------------------------------------------------
    @property
    def rotation(self) -> int:
        """Quarter turns from the natural orientation (0-3), as `dumpsys input` reports."""
        return int(self._state["rotation"])

    def set_rotation(self, rotation: int) -> None:
        self._state["rotation"] = int(rotation) % 4

    @property
    def width(self) -> int:
        """Screen width in the current orientation (pixels)."""
        return self.natural_height if self.rotation % 2 else self.natural_width

    @property
    def height(self) -> int:
        return self.natural_width if self.rotation % 2 else self.natural_height

    def force_size(self, size: tuple[int, int] | None) -> None:
        """`wm size WxH` (natural orientation) or, with None, `wm size reset`: the phone
        draws, captures and takes touches at the forced size, as a real display does."""
        width, height = size or self._boot_display[:2]
        if not (320 <= width <= 4096 and 320 <= height <= 8192 and max(width, height) >= 480):
            raise ValueError(f"unsupported screen size {width}x{height} (320x480 to 4096x8192)")
        with self.lock:
            self.natural_width, self.natural_height = width, height
            self.forced_size = size

    def force_density(self, density: int | None) -> None:
        """`wm density N` or, with None, `wm density reset`."""
        with self.lock:
            self.density = density or self._boot_display[2]
            self.forced_density = density

    # -- state --------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Back to the freshly set-up phone of `seed` (default: the seed it was made with).
        The filesystem is left as it is."""
        if seed is not None and not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        with self.lock:
            self.seed = self._initial_seed if seed is None else seed
            self.clock = self._initial_clock
            self.force_size(None)  # a freshly set-up phone has no `wm size` / `wm density` override
            self.force_density(None)
            installed = [p for p, app in self.apps.items() if app.preinstalled]
            if self.adb_keyboard:
                installed.append(ADB_KEYBOARD_PACKAGE)
            imes = [LATIN_IME] + ([ADB_KEYBOARD_IME] if self.adb_keyboard else [])
            settings = {
                "system": {"screen_brightness": "128", "screen_off_timeout": "60000", "font_scale": "1.0",
                           "time_12_24": "24", "status_bar_network_speed": "0", "accelerometer_rotation": "0",
                           "user_rotation": str(self.profile.rotation)},
                "secure": {"ui_night_mode": "1", "default_input_method": LATIN_IME,
                           "enabled_input_methods": ":".join(imes), "android_id": f"{self.seed:016x}",
                           "location_mode": "3"},
                "global": {"airplane_mode_on": "0", "wifi_on": "1", "bluetooth_on": "0", "mobile_data": "1",
                           "adb_enabled": "1", "device_name": self.model, "stay_on_while_plugged_in": "0"},
            }
            for namespace, table in self.profile.settings.items():
                settings.setdefault(namespace, {}).update(table)
            launcher = self.apps[LAUNCHER]
            self._state: dict[str, Any] = {
                "settings": settings,
                "battery": {"level": 85, "charging": False},
                "installed": installed,
                "foreground": LAUNCHER,
                "tasks": {LAUNCHER: [launcher.main_view()]},
                "recents": [],
                "focus": None,
                "shade_open": False,
                "revoked": {},
                "permission_request": None,
                "screen_on": True,
                "keyguard": self.profile.lock_screen,
                "lock_pin": None,  # `locksettings set-pin`; never in state(): only whether one is set
                "bouncer": None,  # the PIN typed so far while the PIN entry shows
                "rotation": self.profile.rotation,
                "radios_before_airplane": None,
                "apps": {p: self.apps[p].initial_data(self.seed) for p in installed if p in self.apps},
            }

    def state(self) -> dict[str, Any]:
        """The whole state, JSON-able (see simphone/STATE.md)."""
        with self.lock:
            s = copy.deepcopy(self._state)
            del s["lock_pin"]  # a credential stays on the phone; screen.secure says one is set
            top = self.task(self.foreground)[-1]
            s.update({
                "schema_version": SCHEMA_VERSION,
                "seed": self.seed,
                "clock": self.clock.isoformat(),
                "profile": self.profile.name,
                "identity": {"serial": self.serial, "model": self.model, "name": self.name, "number": self.number},
                "screen": {"width": self.width, "height": self.height, "density": self.density,
                           "on": self.screen_on, "rotation": self.rotation, "locked": self.keyguard_showing,
                           "secure": self.keyguard_secure},
                "current": {"package": self.foreground, "activity": self.activity_of(self.foreground),
                            "view": top.get("view")},
                "theme": "dark" if self.dark_mode else "light",
                "airplane_mode": self.airplane_mode,
                "wifi": self.settings_get("global", "wifi_on") == "1",
                "bluetooth": self.settings_get("global", "bluetooth_on") == "1",
                "network_speed_shown": self.settings_get("system", "status_bar_network_speed") == "1",
                "keyboard_visible": self.keyboard_visible,
                "ime": {"current": self.current_ime, "enabled": self.enabled_imes,
                        "adb_keyboard_installed": ADB_KEYBOARD_PACKAGE in self._state["installed"]},
            })
            for package, data in s["apps"].items():  # what an app shows but computes (the forecast)
                derived = getattr(self.apps.get(package), "derived_data", None)
                if derived is not None:
                    data.update(derived(self.seed, self.clock))
            return s

    def set_clock(self, when: datetime) -> None:
        """Set the phone's clock (a zone, if any, is dropped: the phone shows local time)."""
        if not isinstance(when, datetime):
            raise TypeError(f"the clock takes a datetime, got {type(when).__name__}")
        with self.lock:
            self.clock = when.replace(tzinfo=None) if when.tzinfo else when

    def settings_get(self, namespace: str, key: str, default: str | None = None) -> str | None:
        return self._state["settings"][namespace].get(key, default)

    def settings_put(self, namespace: str, key: str, value: str | None) -> None:
        table = self._state["settings"][namespace]
        if (namespace, key) == ("secure", "default_input_method") and value != table.get(key):
            # the new input method binds a moment later (InputMethodManagerService binds
            # the service asynchronously); until then it receives nothing
            self._ime_bound_at = time.monotonic() + self.profile.ime_bind_ms / 1000
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value

    @property
    def ime_bound(self) -> bool:
        """The current input method's service is bound (`mBoundToMethod=true`)."""
        return time.monotonic() >= self._ime_bound_at

    def settings_table(self, namespace: str) -> dict[str, str]:
        """A copy of one settings namespace (`system`, `secure`, `global`)."""
        return dict(self._state["settings"][namespace])

    @property
    def battery(self) -> dict[str, Any]:
        """{"level": 0-100, "charging": bool} (a copy)."""
        return dict(self._state["battery"])

    @property
    def recents(self) -> list[str]:
        """Packages of the recent-apps screen, most recent first (a copy)."""
        return list(self._state["recents"])

    def task_ids(self) -> dict[str, int]:
        """A stable task number per package with a task (for `dumpsys` records)."""
        return {package: 10 + i for i, package in enumerate(sorted(self._state["tasks"]))}

    @property
    def dark_mode(self) -> bool:
        return self.settings_get("secure", "ui_night_mode") == "2"

    @property
    def airplane_mode(self) -> bool:
        return self.settings_get("global", "airplane_mode_on") == "1"

    def set_airplane_mode(self, on: bool) -> None:
        """As Android does: airplane mode turns the radios off and back on as they were."""
        if on == self.airplane_mode:
            return
        self.settings_put("global", "airplane_mode_on", "1" if on else "0")
        if on:
            self._state["radios_before_airplane"] = {k: self.settings_get("global", k) for k in ("wifi_on", "bluetooth_on")}
            self.settings_put("global", "wifi_on", "0")
            self.settings_put("global", "bluetooth_on", "0")
        else:
            for k, v in (self._state.get("radios_before_airplane") or {}).items():
                self.settings_put("global", k, v)
            self._state["radios_before_airplane"] = None

    @property
    def current_ime(self) -> str:
        return self.settings_get("secure", "default_input_method") or LATIN_IME

    @property
    def enabled_imes(self) -> list[str]:
        return [i for i in (self.settings_get("secure", "enabled_input_methods") or "").split(":") if i]

    @property
    def installed(self) -> list[str]:
        return list(self._state["installed"])

    def install(self, package: str) -> None:
        """Install a registered app (what the Play Store does); it appears on the launcher."""
        with self.lock:
            if package not in self.apps:
                raise KeyError(f"no app registered for {package!r}")
            if package not in self._state["installed"]:
                self._state["installed"].append(package)
                self._state["apps"][package] = self.apps[package].initial_data(self.seed)

    def uninstall(self, package: str) -> None:
        with self.lock:
            self.force_stop(package)
            if package in self._state["installed"]:
                self._state["installed"].remove(package)
            self._state["apps"].pop(package, None)

    def app_data(self, package: str) -> dict[str, Any]:
        apps = self._state["apps"]
        if package not in apps:
            apps[package] = self.apps[package].initial_data(self.seed) if package in self.apps else {}
        return apps[package]

    # -- shell --------------------------------------------------------------------------
    def run(self, argv: list[str]) -> CommandResult:
        """Run one simple shell command (argv[0] is the program)."""
        argv = [str(a) for a in argv]
        with self.lock:
            self.history.append(argv)
            return self._shell(self, argv)

    def frame_key(self) -> str:
        """Everything the screen shows, as one string (the screen re-renders when it changes)."""
        return json.dumps([self._state, self.clock.isoformat(), self.seed, self.width, self.height],
                          sort_keys=True, default=str)


def _fill(template: str, **values: object) -> str:
    """A profile value with `${number}` / `${serial}` filled in."""
    from string import Template

    return Template(template).safe_substitute({k: str(v) for k, v in values.items()})
