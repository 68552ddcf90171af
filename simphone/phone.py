"""The simulated phone's device model: state, screen, input and the shell commands.

`Phone` holds everything a real Android phone would (settings, installed packages,
per-app task back stacks, text focus, clock, app data) as one JSON-able dict (schema in
simphone/STATE.md); the screen is rendered from that state with Pillow only when the
state changed, and the PNG / raw framebuffer bytes of the current frame are cached.
The clock does not tick by itself: it is what `set_clock` (or `cmd simphone clock`) set.

May import: the standard library, Pillow, `simphone.types`, `simphone.fs`, `simphone.ui`,
`simphone.apps`, `simphone.commands`. Knows nothing of the agent.
"""

from __future__ import annotations

import copy
import io
import json
import struct
import threading
from datetime import datetime
from typing import Any

from simphone import system_commands  # noqa: F401  (registers its shell commands)
from simphone.apps import APPS, AppContext
from simphone.apps.builtin import LAUNCHER, load_builtin_apps
from simphone.fs import VirtualFS
from simphone.system_commands import ADB_KEYBOARD_IME, LATIN_IME
from simphone.types import CommandResult
from simphone.ui import chrome
from simphone.ui.canvas import Canvas
from simphone.ui.theme import theme_for

__all__ = ["ADB_KEYBOARD_IME", "DEFAULT_CLOCK", "LATIN_IME", "LAUNCHER", "Phone"]

ADB_KEYBOARD_PACKAGE = "com.android.adbkeyboard"
DEFAULT_CLOCK = datetime(2024, 5, 20, 9, 41, 0)
SCHEMA_VERSION = 1


class Phone:
    """A simulated Android phone. See docs/architecture.md (`simphone`) and simphone/STATE.md."""

    def __init__(self, width: int = 1080, height: int = 2400, seed: int = 0, name: str = "simphone",
                 adb_keyboard: bool = False, clock: datetime | None = None, density: int = 420) -> None:
        if width < 320 or height < 480 or width > 4096 or height > 8192:
            raise ValueError(f"unsupported screen size {width}x{height} (320x480 to 4096x8192)")
        load_builtin_apps()
        self.width = width
        self.height = height
        self.density = density
        self.name = name
        self.model = "SimPhone 1"
        self.device = "simphone"
        self.adb_keyboard = adb_keyboard
        self.fs = VirtualFS()
        self.lock = threading.RLock()  # one command at a time, whatever thread serves ADB
        self._initial_clock = clock or DEFAULT_CLOCK
        self._initial_seed = seed
        self._frame_key: str | None = None
        self._canvas: Canvas | None = None
        self._png: bytes | None = None
        self._raw: bytes | None = None
        self.reset(seed)

    # -- state --------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Back to the freshly set-up phone of `seed` (default: the seed it was made with).
        The filesystem is left as it is."""
        if seed is not None and not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        with self.lock:
            self.seed = self._initial_seed if seed is None else seed
            self.clock = self._initial_clock
            installed = [p for p, app in APPS.items() if app.preinstalled]
            if self.adb_keyboard:
                installed.append(ADB_KEYBOARD_PACKAGE)
            imes = [LATIN_IME] + ([ADB_KEYBOARD_IME] if self.adb_keyboard else [])
            self._state: dict[str, Any] = {
                "settings": {
                    "system": {"screen_brightness": "128", "screen_off_timeout": "60000", "font_scale": "1.0",
                               "time_12_24": "24", "status_bar_network_speed": "0"},
                    "secure": {"ui_night_mode": "1", "default_input_method": LATIN_IME,
                               "enabled_input_methods": ":".join(imes), "android_id": f"{self.seed:016x}",
                               "location_mode": "3"},
                    "global": {"airplane_mode_on": "0", "wifi_on": "1", "bluetooth_on": "0", "mobile_data": "1",
                               "adb_enabled": "1", "device_name": self.name, "stay_on_while_plugged_in": "0"},
                },
                "battery": {"level": 85, "charging": False},
                "installed": installed,
                "foreground": LAUNCHER,
                "tasks": {LAUNCHER: [APPS[LAUNCHER].main_view()]},
                "recents": [],
                "focus": None,
                "shade_open": False,
                "screen_on": True,
                "radios_before_airplane": None,
                "apps": {p: APPS[p].initial_data(self.seed) for p in installed if p in APPS},
            }
            self._frame_key = None

    def state(self) -> dict[str, Any]:
        """The whole state, JSON-able (see simphone/STATE.md)."""
        with self.lock:
            s = copy.deepcopy(self._state)
            top = self.task(self.foreground)[-1]
            s.update({
                "schema_version": SCHEMA_VERSION,
                "seed": self.seed,
                "clock": self.clock.isoformat(),
                "screen": {"width": self.width, "height": self.height, "density": self.density,
                           "on": self.screen_on},
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
                derived = getattr(APPS.get(package), "derived_data", None)
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
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value

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
            if package not in APPS:
                raise KeyError(f"no app registered for {package!r}")
            if package not in self._state["installed"]:
                self._state["installed"].append(package)
                self._state["apps"][package] = APPS[package].initial_data(self.seed)

    def uninstall(self, package: str) -> None:
        with self.lock:
            self.force_stop(package)
            if package in self._state["installed"]:
                self._state["installed"].remove(package)
            self._state["apps"].pop(package, None)

    def app_data(self, package: str) -> dict[str, Any]:
        apps = self._state["apps"]
        if package not in apps:
            apps[package] = APPS[package].initial_data(self.seed) if package in APPS else {}
        return apps[package]

    # -- tasks and navigation -----------------------------------------------------------
    @property
    def foreground(self) -> str:
        return self._state["foreground"]

    def task(self, package: str) -> list[dict[str, Any]]:
        return self._state["tasks"][package]

    def activity_of(self, package: str) -> str:
        app = APPS.get(package)
        if app is None:
            return ".MainActivity"
        tasks = self._state["tasks"]
        return app.view_activity(tasks[package][-1]) if package in tasks else app.activity

    def launch(self, package: str, view: dict[str, Any] | None = None) -> None:
        """Bring `package`'s task to the front (starting it with `view` or its main view)."""
        if package not in self._state["installed"] or package not in APPS:
            raise KeyError(f"package {package!r} is not installed")
        if package == LAUNCHER:
            self.go_home()
            return
        tasks = self._state["tasks"]
        if view is not None or package not in tasks:
            tasks[package] = [view if view is not None else APPS[package].main_view()]
        self._state["foreground"] = package
        recents = self._state["recents"]
        if package in recents:
            recents.remove(package)
        recents.insert(0, package)
        self._state["focus"] = None
        self._state["shade_open"] = False

    def go_home(self) -> None:
        page = 0
        if self.foreground != LAUNCHER:
            page = self.task(LAUNCHER)[0].get("page", 0)
        self._state["tasks"][LAUNCHER] = [dict(APPS[LAUNCHER].main_view(), page=page)]
        self._state["foreground"] = LAUNCHER
        self._state["focus"] = None
        self._state["shade_open"] = False

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
    def shade_open(self) -> bool:
        """The notification shade (quick settings) is pulled down over the app."""
        return bool(self._state["shade_open"])

    def set_shade(self, open_: bool) -> None:
        self._state["shade_open"] = open_

    def press_back(self) -> None:
        if self._state["shade_open"]:
            self._state["shade_open"] = False
            return
        if self._state["focus"] is not None:  # the first BACK only hides the keyboard
            self._state["focus"] = None
            return
        package = self.foreground
        if APPS[package].on_back(self.app_context(package)):
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
                APPS[self.foreground].on_enter(ctx, field)
                if self._state["focus"] is None:
                    break
        return True

    def press_enter(self) -> None:
        field = self._state["focus"]
        if field is not None:
            APPS[self.foreground].on_enter(self.app_context(self.foreground), field)

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

    # -- touch --------------------------------------------------------------------------
    def tap(self, x: float, y: float) -> None:
        with self.lock:
            target = self._ensure_frame().target_at(x, y)
            if target is not None:
                target.on_tap()

    def long_press(self, x: float, y: float) -> None:
        with self.lock:
            target = self._ensure_frame().target_at(x, y)
            if target is not None:
                (target.on_long_press or target.on_tap)()

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        """A swipe; one that hardly moves is a tap, or a long press when it lasts ≥ 500 ms."""
        with self.lock:
            if abs(x2 - x1) < 24 and abs(y2 - y1) < 24:
                if duration_ms >= 500:
                    self.long_press(x1, y1)
                else:
                    self.tap(x1, y1)
                return
            canvas = self._ensure_frame()
            if not self.shade_open and y1 < chrome.STATUS_H * canvas.scale and y2 - y1 > 100 * canvas.scale:
                self._state["shade_open"] = True  # pulled down from the status bar
                return
            area = canvas.scroll_area_at(x1, y1)
            if area is not None:
                area.on_scroll((x2 - x1) / canvas.scale, (y2 - y1) / canvas.scale)

    # -- screen -------------------------------------------------------------------------
    def app_context(self, package: str, content: tuple[float, float, float, float] | None = None) -> AppContext:
        if content is None:
            content = chrome.content_box(self, self.width, self.height)
        return AppContext(self, package, content, theme_for(self.dark_mode))

    def _ensure_frame(self) -> Canvas:
        """Render the current state, unless the frame on hand already shows it."""
        key = json.dumps([self._state, self.clock.isoformat(), self.seed], sort_keys=True, default=str)
        if self._canvas is None or key != self._frame_key:
            canvas = Canvas(self.width, self.height, theme_for(self.dark_mode))
            if not self.screen_on:
                canvas.draw.rectangle((0, 0, self.width, self.height), fill=(0, 0, 0))
                self._canvas, self._frame_key, self._png, self._raw = canvas, key, None, None
                return canvas
            package = self.foreground
            ctx = self.app_context(package, chrome.content_box(self, self.width, self.height))
            if not self.shade_open:  # the pulled-down shade covers the whole screen
                with canvas.clip(ctx.content):
                    APPS[package].render(ctx, canvas)
            chrome.draw_system_ui(self, canvas)
            canvas.finish()
            self._canvas, self._frame_key, self._png, self._raw = canvas, key, None, None
        return self._canvas

    def ground_truth(self) -> list[dict[str, Any]]:
        """Every visible element: {kind: text|icon|widget, text, description, box: [l, t, r, b]
        in screen pixels, clickable}."""
        with self.lock:
            return copy.deepcopy(self._ensure_frame().elements)

    def screencap_png(self) -> bytes:
        with self.lock:
            canvas = self._ensure_frame()
            if self._png is None:
                buf = io.BytesIO()
                canvas.image.save(buf, format="PNG", compress_level=1)
                self._png = buf.getvalue()
            return self._png

    def screencap_raw(self) -> bytes:
        """Android's raw framebuffer: u32 LE width, height, format (1 = RGBA_8888), colorspace (0), RGBA bytes."""
        with self.lock:
            canvas = self._ensure_frame()
            if self._raw is None:
                img = canvas.image  # RGB; "RGBX" packs it as RGBA with alpha 255, without a converted copy
                self._raw = struct.pack("<IIII", img.width, img.height, 1, 0) + img.tobytes("raw", "RGBX")
            return self._raw

    def screenshot(self):
        """The current frame as a Pillow RGB image (a copy)."""
        with self.lock:
            return self._ensure_frame().image.copy()

    # -- shell --------------------------------------------------------------------------
    def run(self, argv: list[str]) -> CommandResult:
        """Run one simple shell command (argv[0] is the program)."""
        from simphone.commands import run_command

        with self.lock:
            return run_command(self, [str(a) for a in argv])
