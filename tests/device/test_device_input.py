"""Text input, keys, swipes and apps on the simulated phone, over the real adb server.

What arrives is read from the phone's own state (``Phone.state()``: the focused field
of the foreground view), never from what the device layer says it sent.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_agent.device import Device, open_device
from mobile_agent.errors import AdbKeyboardMissingError, AppNotFoundError, TextInputError
from mobile_agent.settings import AdbSettings

NOTES = "com.google.android.keep"
SHELL_TRAPS = ["; touch /data/local/tmp/pwned", "$(reboot)", "`id`", "a && rm -rf /", "x | sh", "'\\\"", "$HOME ${PATH}",
               "> /data/local/tmp/out", "100%sure %s %% %%s", "  two  spaces ", "#not a comment", "*?[a]~!", "\\n"]


def _adb(adb_server) -> AdbSettings:
    return AdbSettings(server_port=adb_server.port, command_timeout_s=20)


def _focused_text(phone) -> str:
    state = phone.state()
    field = state["focus"]
    assert field is not None, "no text field has focus"
    return state["tasks"][state["foreground"]][-1]["fields"][field]


def _open_note_editor(device: Device, phone) -> None:
    device.launch_app(NOTES)
    for element in phone.ground_truth():
        if "new note" in element["description"]:
            left, top, right, bottom = element["box"]
            device.tap((left + right) // 2, (top + bottom) // 2)
            break
    assert phone.state()["focus"] is not None


@pytest.fixture
def editor(sim_phone, adb_server):
    device = open_device(_adb(adb_server), serial=sim_phone.serial)
    _open_note_editor(device, sim_phone.phone)
    return device, sim_phone.phone


@pytest.fixture
def keyboard_editor(sim_phones, adb_server):
    (handle,) = sim_phones(1, adb_keyboard=True)
    device = open_device(_adb(adb_server), serial=handle.serial)
    _open_note_editor(device, handle.phone)
    return device, handle.phone


@pytest.mark.parametrize("text", SHELL_TRAPS)
def test_shell_special_text_arrives_literally(editor, text: str) -> None:
    device, phone = editor
    device.clear_text()
    files_before = phone.fs.walk_files("/")
    device.type_text(text)
    assert _focused_text(phone) == text
    # nothing ran: no file written by a redirect, no app switched, same IME
    assert phone.fs.walk_files("/") == files_before
    assert phone.state()["foreground"] == NOTES


def _commands_run(phone) -> list[list[str]]:
    """Every simple command the phone's shell hands to the phone from now on."""
    seen: list[list[str]] = []
    original = phone.run

    def run_and_note(argv: list[str]):
        seen.append(list(argv))
        return original(argv)

    phone.run = run_and_note
    return seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60))
def test_any_ascii_text_arrives_exactly(editor, text: str) -> None:
    device, phone = editor
    device.clear_text()
    assert _focused_text(phone) == ""
    ime = phone.state()["ime"]["current"]
    commands = _commands_run(phone)
    try:
        device.type_text(text)
    finally:
        del phone.run
    assert _focused_text(phone) == text
    assert phone.state()["ime"]["current"] == ime
    # no shell command but `input text ONE-ARGUMENT` ran: nothing in the text was interpreted
    assert all(argv[:2] == ["input", "text"] and len(argv) == 3 for argv in commands), commands


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_any_unicode_text_arrives_exactly_through_adb_keyboard(keyboard_editor, text: str) -> None:
    device, phone = keyboard_editor
    device.clear_text()
    assert _focused_text(phone) == ""
    ime = phone.state()["ime"]["current"]
    assert "adbkeyboard" not in ime
    commands = _commands_run(phone)
    try:
        device.type_text(text)
    finally:
        del phone.run
    assert _focused_text(phone) == text
    assert phone.state()["ime"]["current"] == ime  # the user's IME is back
    # dumpsys: the IME readiness check (input_method) and the display choice (SurfaceFlinger)
    assert {argv[0] for argv in commands} <= {"input", "am", "ime", "settings", "pm", "dumpsys"}, commands


def test_non_ascii_without_adb_keyboard_names_it(editor) -> None:
    device, phone = editor
    device.clear_text()
    with pytest.raises(AdbKeyboardMissingError, match="ADBKeyBoard") as info:
        device.type_text("héllo 日本")
    assert info.value.serial == device.serial
    assert _focused_text(phone) == ""


def test_clear_text_and_delete_key(editor) -> None:
    device, phone = editor
    device.type_text("abc")
    device.key("delete")
    assert _focused_text(phone) == "ab"
    device.clear_text()
    assert _focused_text(phone) == ""


def test_clear_text_through_adb_keyboard_asks_for_it_once(keyboard_editor) -> None:
    device, phone = keyboard_editor
    device.type_text("abc")
    commands = _commands_run(phone)
    try:
        device.clear_text()
    finally:
        del phone.run
    assert _focused_text(phone) == ""
    assert [argv[:2] for argv in commands].count(["ime", "list"]) == 1, commands


def test_apps_launch_resolve_current_stop(sim_phone, adb_server) -> None:
    device = open_device(_adb(adb_server), serial=sim_phone.serial)
    packages = device.list_packages()
    assert NOTES in packages and "com.android.settings" in packages
    assert device.resolve_app_label("settings") == "com.android.settings"
    assert device.resolve_app_label("NOTES") == NOTES
    assert device.resolve_app_label("Google Map") == "com.google.android.apps.maps"
    assert device.resolve_app_label("No Such App Here") is None
    device.launch_app("com.android.settings")
    assert sim_phone.phone.state()["foreground"] == "com.android.settings"
    assert device.current_app() == "com.android.settings"
    device.force_stop("com.android.settings")
    assert device.current_app() != "com.android.settings"
    with pytest.raises(AppNotFoundError):
        device.launch_app("com.example.not.installed")
    with pytest.raises(AppNotFoundError, match="invalid package"):
        device.launch_app("com.x; reboot")


def test_swipe_direction_and_screen_state(sim_phone, adb_server) -> None:
    device = open_device(_adb(adb_server), serial=sim_phone.serial)
    assert device.is_screen_on()
    launcher = "com.android.launcher3"
    stroke = device.swipe_direction("up", distance=0.6)
    assert stroke == (540, 1200 + 720, 540, 1200 - 720)
    assert sim_phone.phone.state()["tasks"][launcher][-1]["view"] == "drawer"
    device.key("back")
    assert sim_phone.phone.state()["tasks"][launcher][-1]["view"] == "home"


def test_newlines_are_the_enter_key(editor) -> None:
    device, phone = editor
    device.type_text("Shopping\nmilk; eggs\n$(bread)")
    view = phone.state()["tasks"][NOTES][-1]
    assert view["fields"]["title"] == "Shopping"  # Enter in the title moves to the body
    assert view["fields"]["body"] == "milk; eggs\n$(bread)"


class _ImeNeverBinds(Device):
    """The phone (real, simulated), except that `dumpsys input_method` keeps answering
    what a real phone prints right after `ime set`, before the IME is bound (sample: a
    public parser test's "cold cycle" dump, see tests/device/test_device_real_formats.py)."""

    def shell(self, args: list[str]) -> str:
        if args[:2] == ["dumpsys", "input_method"]:
            return "  mCurId=com.android.adbkeyboard/.AdbIME\n  mBoundToMethod=false\n"
        return super().shell(args)


def test_text_is_never_reported_typed_when_adb_keyboard_is_not_listening(keyboard_editor) -> None:
    device, phone = keyboard_editor
    ime = phone.state()["ime"]["current"]
    stubborn = _ImeNeverBinds(device.serial, device.settings)
    with pytest.raises(TextInputError) as caught:
        stubborn.type_text("你好")
    assert caught.value.fields["reason"] == "ime_not_active"
    assert _focused_text(phone) == ""  # nothing broadcast
    assert phone.state()["ime"]["current"] == ime  # and the user's keyboard is back
