"""The safety guard judges a grounded tap where it lands, from every source the operations
locate by (review8 #15): the accessibility tree on a FLAG_SECURE (black) frame, and the snap's
landing point on an ordinary one.

In-process, through ``guard_on`` (the guard the run and MCP build) with the real OCR locator,
the real snapping and the real tree parser; the phone is a small in-process double that answers
a ``uiautomator dump`` (the simulated phone has no protected screen with a payment button)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from mobile_agent.agent.guard import guard_on
from mobile_agent.locate import build_locator
from mobile_agent.operations.coordinates import COORDINATE_REGISTRY
from mobile_agent.operations.parser import ParsedAction
from mobile_agent.operations.registry import parse_action
from mobile_agent.settings import Settings, load_settings

# a uiautomator dump's shape (AOSP UiAutomator's DumpCommand: <hierarchy><node .../>; bounds "[l,t][r,b]")
_PAY_TREE = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes" ?><hierarchy rotation="0">'
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.bank" '
    'content-desc="" clickable="false" enabled="true" password="false" bounds="[0,0][1080,2400]">'
    '<node index="0" text="Pay now" resource-id="com.bank:id/confirm" class="android.widget.Button" '
    'package="com.bank" content-desc="" clickable="true" enabled="true" password="false" bounds="[120,1700][960,1820]"/>'
    '<node index="1" text="" resource-id="com.bank:id/pin" class="android.widget.EditText" package="com.bank" '
    'content-desc="" clickable="true" enabled="true" password="true" bounds="[120,900][960,1020]"/>'
    "</node></hierarchy>"
)


class _Phone:
    """What the guard asks of the phone: its tree, the app in front, Open App's package."""

    def __init__(self, xml: str | None) -> None:
        self.xml = xml
        self.dumps = 0

    def accessibility_xml(self) -> str | None:
        self.dumps += 1
        return self.xml

    def current_app(self) -> str | None:
        return "com.bank"

    def resolve_app_label(self, label: str) -> str | None:
        return None


def _settings(accessibility: bool) -> Settings:
    return load_settings(overrides={"perception.accessibility": accessibility})


def _tap(x: int, y: int) -> ParsedAction:
    return parse_action(f"Tap point ({x}, {y})", COORDINATE_REGISTRY)


def _verdict(settings: Settings, phone: _Phone, action: ParsedAction, pixels: np.ndarray) -> str | None:
    guard = guard_on(settings, phone, build_locator(settings))
    return guard.check(action, pixels).confirm


_BLACK = np.zeros((2400, 1080, 3), np.uint8)  # what screencap gives of a FLAG_SECURE window


def test_a_tap_on_a_protected_screens_pay_button_is_asked_by_the_tree() -> None:
    # the tree is read on a blank frame whatever perception.accessibility says (as the operations do)
    for accessibility in (False, True):
        phone = _Phone(_PAY_TREE)
        confirm = _verdict(_settings(accessibility), phone, _tap(540, 1760), _BLACK)
        assert confirm is not None and "'pay' in 'Pay now'" in confirm, (accessibility, confirm)
        assert phone.dumps == 1  # the reading and the snap share the frame's one dump


def test_typing_into_a_protected_screens_password_field_is_asked() -> None:
    confirm = _verdict(_settings(False), _Phone(_PAY_TREE), parse_action("Type (hunter2)"), _BLACK)
    assert confirm is not None and "password" in confirm


def test_a_protected_screen_without_a_tree_asks_nothing_and_a_harmless_tap_stays_clear() -> None:
    assert _verdict(_settings(False), _Phone(None), _tap(540, 1760), _BLACK) is None
    assert _verdict(_settings(False), _Phone(_PAY_TREE), _tap(540, 300), _BLACK) is None


def _drawn_pay_button() -> np.ndarray:
    img = Image.new("RGB", (1080, 2400), "white")
    ImageDraw.Draw(img).text((380, 1725), "Pay now", fill="black", font=ImageFont.load_default(size=64))
    return np.asarray(img)


def test_a_tap_the_snap_moves_onto_pay_now_is_asked() -> None:
    settings = _settings(False)
    pixels = _drawn_pay_button()
    phone = _Phone(None)
    # 30 px below the words: beyond the guard's own reach around a point, within the snap's
    confirm = _verdict(settings, phone, _tap(540, 1850), pixels)
    assert confirm is not None and "'pay' in 'Pay now'" in confirm
    # with snapping off the tap lands where the model put it: nothing sensitive there
    unsnapped = load_settings(overrides={"planner.snap": False})
    assert _verdict(unsnapped, phone, _tap(540, 1850), pixels) is None


def _mail_node(resource: str, desc: str, bounds: str, text: str = "") -> str:
    return (f'<node index="0" text="{text}" resource-id="{resource}" class="android.widget.ImageButton" '
            f'package="com.mail" content-desc="{desc}" clickable="true" enabled="true" password="false" '
            f'bounds="{bounds}"/>')


# two toolbar buttons side by side (Archive, then Delete) and a feed row whose resource id says "post"
_TOOLBAR_TREE = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes" ?><hierarchy rotation="0">'
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.mail" content-desc="" '
    'clickable="false" enabled="true" password="false" bounds="[0,0][1080,2400]">'
    + _mail_node("com.mail:id/archive", "Archive", "[744,60][876,192]")
    + _mail_node("com.mail:id/trash", "Delete", "[876,60][1008,192]")
    + _mail_node("com.mail:id/post_title", "", "[40,400][1040,520]", text="Best hiking trails near Zurich")
    + "</node></hierarchy>"
)


def _drawn_toolbar() -> np.ndarray:
    img = Image.new("RGB", (1080, 2400), "white")
    draw = ImageDraw.Draw(img)
    draw.rectangle((780, 96, 840, 156), outline="black", width=6)
    draw.rectangle((912, 96, 972, 156), outline="black", width=6)
    draw.text((60, 440), "Best hiking trails near Zurich", fill="black", font=ImageFont.load_default(size=48))
    for i in range(12):
        draw.rectangle((40, 700 + 130 * i, 1040, 800 + 130 * i), fill=(230, 230, 240))
    return np.asarray(img)


def test_a_controls_tree_words_reach_only_taps_inside_it_and_ids_only_on_a_blank_frame() -> None:
    # review9: the tree's words took the OCR lines' 24 px reach, so a tap inside Archive, 24 px
    # from Delete's edge, was asked as a delete; a row's id ("post_title") was asked as publishing
    settings = _settings(True)
    pixels = _drawn_toolbar()
    phone = _Phone(_TOOLBAR_TREE)
    assert _verdict(settings, phone, _tap(852, 126), pixels) is None
    assert _verdict(settings, phone, _tap(540, 460), pixels) is None
    on_delete = _verdict(settings, phone, _tap(940, 126), pixels)
    assert on_delete is not None and "'delete' in 'Delete'" in on_delete
