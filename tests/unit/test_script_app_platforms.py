"""Which platform a script's app ids are written for (``mobile_agent.agent.script_app_platforms``,
``mobile_agent.apps.platforms``): the server pins ``"device": "any"`` with it
(tests/service/test_any_platform_script.py)."""

from __future__ import annotations

import pytest

from mobile_agent.agent import parse_script, script_app_platforms
from mobile_agent.apps.platforms import app_id_platform
from mobile_agent.device.ios.apps import bundle_for_label


def test_ids_of_one_platform_are_told_apart_and_names_pin_nothing() -> None:
    assert app_id_platform("com.android.settings") == "android"  # the alias table
    assert app_id_platform("com.google.android.apps.nbu.files") == "android"
    assert app_id_platform("com.apple.android.music") == "android"  # Apple Music for Android: not an iPhone's
    assert app_id_platform("org.example.android.notes") == "android"  # a part 'android'
    assert app_id_platform("com.apple.Preferences") == "ios"  # Apple's bundle ids
    assert app_id_platform("com.google.Gmail") == "ios"  # a listed third-party app's iPhone id
    for unknown in ("Settings", "Google Maps", "com.example.notes", "设置", "android"):
        assert app_id_platform(unknown) is None, unknown


def test_a_scripts_open_app_lines_name_its_platform() -> None:
    script = ("Open App (Settings)\n# Open App (com.apple.Preferences)\nopen app (com.android.settings)\n"
              "Click text (com.apple.Preferences)\nType (com.apple.Preferences)\nOpen App (com.example.x)")
    assert script_app_platforms(parse_script(script)) == {"com.android.settings": "android"}
    assert script_app_platforms(parse_script("Open App (com.apple.mobilenotes)\nStop")) == {"com.apple.mobilenotes": "ios"}


def test_an_iphone_opens_a_listed_bundle_id_as_itself() -> None:
    """A script pinned to an iPhone by ``Open App (com.apple.Preferences)`` can run there."""
    assert bundle_for_label("com.apple.Preferences") == "com.apple.Preferences"
    assert bundle_for_label(" com.google.Gmail ") == "com.google.Gmail"
    assert bundle_for_label("Settings") == "com.apple.Preferences"
    assert bundle_for_label("com.android.settings") is None and bundle_for_label("com.example.x") is None


def test_flow_pins_read_do_steps_and_word_every_refusal_alike() -> None:
    from mobile_agent.apps.platforms import PinnedApps, PlatformPinError
    from mobile_agent.testing import flow_pins, parse_flow

    flow = parse_flow("name: f\nvars: {pkg: com.android.chrome}\nsteps:\n  - do: Open App (com.android.settings)\n"
                      "  - do: Open App ({{pkg}})\n  - run: open com.apple.Preferences\n"
                      "  - extract: {instruction: the app, fields: {id: str}, save_as: found}\n"
                      "  - do: Open App ({{found.id}})\n")
    pins = flow_pins([flow])  # a run: step, and a variable known only once the flow runs, pin nothing
    assert (pins.where, pins.platform()) == ("flow", "android")
    assert dict(pins.apps) == {"com.android.settings": "android", "com.android.chrome": "android"}  # vars: filled in
    given = flow_pins([flow], {"pkg": "com.apple.mobilesafari"})  # --var over vars:
    assert given.apps["com.apple.mobilesafari"] == "ios" and "com.android.chrome" not in given.apps
    assert pins.on_device("127.0.0.1:6100") is None and pins.conflict("android") is None
    refused = pins.on_device("ios:sim-1")
    assert refused is not None and refused.code == "unroutable"
    assert refused.message == ("the flow opens com.android.chrome (an Android app), com.android.settings (an Android "
                               "app): device 'ios:sim-1' is not an Android phone")
    conflict = pins.conflict("ios")
    assert conflict is not None and conflict.code == "platform_conflict"
    ios = parse_flow("name: g\nsteps:\n  - do: Open App (com.apple.Preferences)\n")
    with pytest.raises(PlatformPinError) as mixed:
        flow_pins([flow, ios]).platform()
    assert mixed.value.code == "platforms_mixed" and mixed.value.message.startswith("the flows open apps of several")
    assert PinnedApps("instruction").platform() is None


def test_flow_pins_read_a_step_as_written_and_never_expand_its_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of 3365799: filling every variable into every step before parsing let a 64 KiB
    request expand into millions of lines while the server checked it, and a step holding a
    run-time variable (an extract's ``save_as``) lost its literal app id too."""
    from mobile_agent.testing import flow_pins, parse_flow, runner

    otp = parse_flow("name: f\nsteps:\n  - extract: {instruction: the code, fields: {code: str}, save_as: otp}\n"
                     "  - do: \"Open App (com.apple.Preferences)\\nType ({{otp.code}})\"\n")
    assert dict(flow_pins([otp]).apps) == {"com.apple.Preferences": "ios"}  # the literal id still pins

    big = "x" * 20_000
    body = "name: g\nvars: {blob: " + big + ", pkg: com.android.chrome}\nsteps:\n" + "".join(
        f"  - do: \"Type ({{{{blob}}}}) {i}\\nOpen App ({{{{pkg}}}})\"\n" for i in range(200))
    parsed: list[int] = []
    real_parse = runner.parse_script

    def parse_and_count(text: str) -> object:
        parsed.append(len(text))
        return real_parse(text)

    monkeypatch.setattr(runner, "parse_script", parse_and_count)
    pins = flow_pins([parse_flow(body)])
    assert dict(pins.apps) == {"com.android.chrome": "android"}  # a whole-argument variable is filled in
    assert max(parsed) < 100 and sum(parsed) < len(body)  # each step parsed as written, the 20 KB value never
    assert dict(flow_pins([parse_flow("name: h\nvars: {pkg: " + "com.android.chrome" * 20 + "}\nsteps:\n"
                                      "  - do: Open App ({{pkg}})\n")]).apps) == {}  # no app id is that long


def test_a_vars_name_an_extract_saves_over_pins_nothing_after_that_extract() -> None:
    """The run gives ``{{pkg}}`` the extract's answer from that step on (runner: ``values[save_as]
    = data``), so ``vars:``' value is stale there: before it, it pins; after it, nothing does."""
    from mobile_agent.testing import flow_pins, parse_flow

    over = ("name: f\nvars: {pkg: com.apple.Preferences}\nsteps:\n"
            "  - extract: {instruction: the app to open, fields: {id: str}, save_as: pkg}\n"
            "  - do: Open App ({{pkg}})\n")
    assert dict(flow_pins([parse_flow(over)]).apps) == {}
    assert dict(flow_pins([parse_flow(over)], {"pkg": "com.android.chrome"}).apps) == {}  # --var too
    before = over.replace("steps:\n", "steps:\n  - do: Open App ({{pkg}})\n")
    assert dict(flow_pins([parse_flow(before)]).apps) == {"com.apple.Preferences": "ios"}  # the run opens it first
