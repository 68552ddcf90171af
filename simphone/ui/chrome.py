"""The system UI drawn over every app: status bar, navigation bar and the keyboard.

Status bar: the clock (HH:MM from the phone's clock), the real-time network speed when
`settings system status_bar_network_speed` is 1 ("0.5 KB/s", derived from seed and clock),
airplane icon or Wi-Fi icon, signal bars, battery icon and percentage. Navigation bar:
back triangle, home circle, recents square. Keyboard (while a text field has focus): a
QWERTY keyboard whose keys type, or the ADB Keyboard's one-line bar when that IME is current.
Notification shade (a swipe down from the status bar): quick-settings tiles for Wi-Fi,
Bluetooth, Airplane mode and Dark theme, drawn over the whole screen.

The bars and the keyboard are as many dp high on a large screen (smallest width 600dp or
more: a tablet, a foldable's inner screen) as on a phone: there they are drawn at the
screen's density (`bar_scale`), not stretched with the screen's width.

May import: the standard library, `simphone.ui` modules. Uses the `Phone` passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simphone.ui.canvas import Canvas

if TYPE_CHECKING:
    from simphone.phone import PhoneModel as Phone

__all__ = ["KEYBOARD_H", "LARGE_SCREEN_DP", "NAV_H", "STATUS_H", "UNIT_DENSITY", "bar_scale", "content_box",
           "draw_system_ui", "is_large_screen", "network_speed", "status_bar_px"]

STATUS_H = 110
NAV_H = 130
KEYBOARD_H = 780
ADB_KEYBOARD_H = 110
ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


UNIT_DENSITY = 420  # the density at which one layout unit is one pixel (a 1080-pixel, 420-dpi phone)
LARGE_SCREEN_DP = 600  # Android's large screens: smallest width 600dp and more (sw600dp)


def is_large_screen(phone: Phone) -> bool:
    return min(phone.width, phone.height) * 160 / phone.density >= LARGE_SCREEN_DP


def bar_scale(phone: Phone) -> float:
    """Pixels per layout unit of the system bars: the screen's width / 1080 on a phone, the
    density / 420 on a large screen."""
    return phone.density / UNIT_DENSITY if is_large_screen(phone) else phone.width / 1080


def status_bar_px(phone: Phone) -> int:
    return round(STATUS_H * bar_scale(phone))


def _nav_bar_px(phone: Phone) -> int:
    return round(NAV_H * bar_scale(phone))


def _keyboard_height(phone: Phone) -> float:
    if not phone.keyboard_visible:
        return 0
    return ADB_KEYBOARD_H if phone.current_ime.startswith("com.android.adbkeyboard/") else KEYBOARD_H


def content_box(phone: Phone, width_px: int, height_px: int) -> tuple[float, float, float, float]:
    """The apps' area in layout units: between the status bar and the navigation bar / keyboard."""
    root = width_px / 1080
    height = height_px / root
    keyboard = _keyboard_height(phone)
    if is_large_screen(phone):  # drawn at the density too
        keyboard = round(keyboard * bar_scale(phone)) / root
    return (0, status_bar_px(phone) / root, 1080, height - _nav_bar_px(phone) / root - keyboard)


def network_speed(phone: Phone) -> str:
    if phone.airplane_mode:
        return "0.0 KB/s"
    tenths = (phone.seed * 7 + phone.clock.hour * 60 + phone.clock.minute) % 97 + 1
    return f"{tenths / 10:.1f} KB/s"


def draw_system_ui(phone: Phone, c: Canvas) -> None:
    nav_top = c.height - _nav_bar_px(phone) / c.scale
    if phone.shade_open:
        _shade(phone, c)
    elif phone.keyboard_visible and not is_large_screen(phone):
        _keyboard(phone, c, nav_top)
    elif phone.keyboard_visible:  # a large screen's keyboard: as many dp high as a phone's, the full width
        bottom = c.height_px - _nav_bar_px(phone)
        with c.pane((0, bottom - round(_keyboard_height(phone) * bar_scale(phone)), c.width_px, bottom), bar_scale(phone)):
            _keyboard(phone, c, c.height)
    ios = phone.system_look == "ios"
    status, bottom_bar = (_ios_status_bar, _home_indicator) if ios else (_status_bar, _nav_bar)
    if bar_scale(phone) == c.scale:  # a phone: the bars span the layout as drawn
        status(phone, c)
        bottom_bar(phone, c, c.height - NAV_H)
        return
    with c.pane((0, 0, c.width_px, status_bar_px(phone)), bar_scale(phone)):
        status(phone, c)
    with c.pane((0, c.height_px - _nav_bar_px(phone), c.width_px, c.height_px), bar_scale(phone)):
        bottom_bar(phone, c, 0)


def _ios_status_bar(phone: Phone, c: Canvas) -> None:
    """iOS's: the time at the left (no leading zero), then signal, Wi-Fi and the battery at the
    right; no Bluetooth or network-speed item (iOS shows neither there)."""
    th = c.theme
    c.rect((0, 0, c.width, STATUS_H), fill=th.status_bg)
    mid = STATUS_H / 2
    c.text((90, mid), f"{phone.clock.hour}:{phone.clock.minute:02d}", size=42, color=th.status_fg, anchor="lm",
           bold=True)
    x = c.width - 50
    level = phone.battery["level"]
    c.icon("battery", (x - 60, mid - 28, x, mid + 28), th.status_fg, description="battery")
    c.rect((x - 44, mid + 22 - 46 * level / 100, x - 16, mid + 22), fill=th.status_fg)
    x -= 80
    if phone.airplane_mode:
        c.icon("airplane", (x - 50, mid - 25, x, mid + 25), th.status_fg, description="airplane mode")
        return
    if phone.settings_get("global", "wifi_on") == "1":
        c.icon("wifi", (x - 50, mid - 25, x, mid + 25), th.status_fg, description="wifi")
        x -= 70
    c.icon("signal", (x - 44, mid - 22, x, mid + 22), th.status_fg, description="mobile signal")


def _home_indicator(phone: Phone, c: Canvas, top: float) -> None:
    """iOS's home indicator where Android draws its navigation bar: a rounded bar and no buttons
    (Back is the edge swipe or the app's own button, Home WDA's home button)."""
    th = c.theme
    c.rect((0, top, c.width, top + NAV_H), fill=th.background)
    middle, y = c.width / 2, top + NAV_H * 0.62
    c.rect((middle - 200, y - 8, middle + 200, y + 8), fill=th.text, radius=8)


def _status_bar(phone: Phone, c: Canvas) -> None:
    th = c.theme
    c.rect((0, 0, c.width, STATUS_H), fill=th.status_bg)
    mid = STATUS_H / 2
    c.text((50, mid), phone.clock.strftime("%H:%M"), size=40, color=th.status_fg, anchor="lm", bold=True)
    x = c.width - 40
    level = phone.battery["level"]
    if phone.settings_get("system", "status_bar_show_battery_percent") != "0":  # on unless turned off
        box = c.text((x, mid), f"{level}%", size=34, color=th.status_fg, anchor="rm")
        x = box[0] - 10
    c.icon("battery", (x - 50, mid - 28, x, mid + 28), th.status_fg, description="battery")
    fill_top = mid + 24 - 46 * level / 100
    c.rect((x - 34, fill_top, x - 16, mid + 22), fill=th.status_fg)
    x -= 70
    if phone.airplane_mode:
        c.icon("airplane", (x - 50, mid - 25, x, mid + 25), th.status_fg, description="airplane mode")
        x -= 70
    else:
        c.icon("signal", (x - 44, mid - 22, x, mid + 22), th.status_fg, description="mobile signal")
        x -= 64
        if phone.settings_get("global", "wifi_on") == "1":
            c.icon("wifi", (x - 50, mid - 25, x, mid + 25), th.status_fg, description="wifi")
            x -= 70
    if phone.settings_get("global", "bluetooth_on") == "1":
        c.icon("bluetooth", (x - 44, mid - 22, x, mid + 22), th.status_fg, description="bluetooth")
        x -= 64
    if phone.settings_get("system", "status_bar_network_speed") == "1":
        c.text((x, mid), network_speed(phone), size=30, color=th.status_fg, anchor="rm")


def _nav_bar(phone: Phone, c: Canvas, top: float) -> None:
    th = c.theme
    c.rect((0, top, c.width, top + NAV_H), fill=th.nav_bg)
    cy = top + NAV_H / 2
    middle = c.width / 2
    for cx, icon, description, action in (
        (middle - 290, "nav_back", "back", phone.press_back),
        (middle, "nav_home", "home", phone.go_home),
        (middle + 290, "nav_recents", "recent apps", phone.show_recents),
    ):
        c.icon(icon, (cx - 36, cy - 36, cx + 36, cy + 36), th.nav_fg, description=description)
        c.on_tap((cx - 120, top, cx + 120, top + NAV_H), action)


def _shade(phone: Phone, c: Canvas) -> None:
    """The pulled-down notification shade: four quick-settings tiles and the notifications.
    A tap outside the tiles, a swipe up, BACK or HOME closes it."""
    th = c.theme
    c.rect((0, 0, c.width, c.height), fill=th.surface)
    c.on_tap((0, 0, c.width, c.height), lambda: phone.set_shade(False))
    c.on_scroll((0, 0, c.width, c.height), lambda dx, dy: dy < -100 and (phone.set_shade(False) or True))
    c.text((60, STATUS_H + 40), phone.clock.strftime("%A, %B %-d"), size=44, color=th.text_secondary)

    def flip(ns: str, key: str):
        return lambda: phone.settings_put(ns, key, "0" if phone.settings_get(ns, key) == "1" else "1")

    tiles = [
        ("Wi-Fi", "wifi", phone.settings_get("global", "wifi_on") == "1", flip("global", "wifi_on")),
        ("Bluetooth", "bluetooth", phone.settings_get("global", "bluetooth_on") == "1", flip("global", "bluetooth_on")),
        ("Airplane mode", "airplane", phone.airplane_mode, lambda: phone.set_airplane_mode(not phone.airplane_mode)),
        ("Dark theme", "moon", phone.dark_mode,
         lambda: phone.settings_put("secure", "ui_night_mode", "1" if phone.dark_mode else "2")),
    ]
    for i, (label, icon, on, action) in enumerate(tiles):
        row, col = divmod(i, 2)
        left, top = 50 + col * 500, STATUS_H + 140 + row * 220
        box = (left, top, left + 480, top + 190)
        c.rect(box, fill=th.primary if on else th.field_bg, radius=60)
        fg = ((255, 255, 255) if th.name == "light" else (20, 20, 24)) if on else th.text
        c.icon(icon, (left + 40, top + 55, left + 120, top + 135), fg, description=f"{label} tile icon")
        c.text((left + 150, top + 95), label, size=42, color=fg, anchor="lm", max_width=310)
        c.widget(box, f"{label} quick setting, {'on' if on else 'off'}", text=label)
        c.on_tap(box, action)
    c.text((c.width / 2, STATUS_H + 720), "No notifications", size=42, color=th.text_secondary, anchor="mm")


def _keyboard(phone: Phone, c: Canvas, bottom: float) -> None:
    th = c.theme
    if phone.current_ime.startswith("com.android.adbkeyboard/"):
        top = bottom - ADB_KEYBOARD_H
        c.rect((0, top, c.width, bottom), fill=th.keyboard_bg)
        c.text((c.width / 2, top + ADB_KEYBOARD_H / 2), "ADB Keyboard {ON}", size=36, color=th.key_fg, anchor="mm")
        return
    top = bottom - KEYBOARD_H
    c.rect((0, top, c.width, bottom), fill=th.keyboard_bg)
    key_w, key_h, gap = 100, 150, 8
    y = top + 20
    for row in ROWS:
        x = (c.width - len(row) * (key_w + gap)) / 2
        for ch in row:
            _key(c, (x, y, x + key_w, y + key_h), ch, lambda ch=ch: phone.type_text(ch))
            x += key_w + gap
        y += key_h + 30
    _key(c, (c.width - 150, y - key_h - 30, c.width - 20, y - 30), "⌫", phone.delete_char, label_text="delete")
    shift = (c.width - 1080) / 2  # the bottom row centred under the others (0 on a phone)
    _key(c, (shift + 200, y, shift + 760, y + key_h), "space", lambda: phone.type_text(" "))
    _key(c, (shift + 780, y, shift + 1060, y + key_h), "enter", phone.press_enter)
    _key(c, (shift + 20, y, shift + 180, y + key_h), ",", lambda: phone.type_text(","))


def _key(c: Canvas, box: tuple[float, float, float, float], label: str, action, label_text: str | None = None) -> None:
    th = c.theme
    c.rect(box, fill=th.key_bg, radius=14)
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if label_text is not None:  # a glyph the fonts may lack: draw it, record its name
        c.line([(cx + 25, cy - 20), (cx - 10, cy - 20), (cx - 30, cy), (cx - 10, cy + 20), (cx + 25, cy + 20),
                (cx + 25, cy - 20)], fill=th.key_fg, width=4)
        c.widget(box, f"{label_text} key", text="")
    else:
        c.text((cx, cy), label, size=52 if len(label) == 1 else 40, color=th.key_fg, anchor="mm")
    c.on_tap(box, action)
