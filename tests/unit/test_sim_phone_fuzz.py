"""Random input sequences never break the simulated phone: every command answers, the
state stays JSON-able and consistent, the screen renders, ground truth stays on screen."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simphone import Phone

coord_x = st.integers(min_value=-50, max_value=1130)
coord_y = st.integers(min_value=-50, max_value=2450)
command = st.one_of(
    st.builds(lambda x, y: ["input", "tap", str(x), str(y)], coord_x, coord_y),
    st.builds(lambda a, b, c, d, t: ["input", "swipe", str(a), str(b), str(c), str(d), str(t)],
              coord_x, coord_y, coord_x, coord_y, st.integers(min_value=0, max_value=1500)),
    st.builds(lambda k: ["input", "keyevent", k], st.sampled_from(["BACK", "HOME", "APP_SWITCH", "ENTER", "DEL", "62"])),
    st.builds(lambda t: ["input", "text", t], st.text(min_size=1, max_size=12)),
    st.builds(lambda p: ["monkey", "-p", p, "-c", "android.intent.category.LAUNCHER", "1"],
              st.sampled_from(["com.android.settings", "com.google.android.keep", "com.weather.Weather",
                               "com.google.android.calendar", "com.android.chrome"])),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(command, min_size=1, max_size=12))
def test_random_input_keeps_the_phone_consistent(commands: list[list[str]]) -> None:
    phone = Phone()
    for argv in commands:
        result = phone.run(argv)
        assert result.exit_code in (0, 1, 255), (argv, result)
    state = phone.state()
    assert json.loads(json.dumps(state)) == state
    assert state["current"]["package"] in state["installed"]
    assert state["tasks"][state["current"]["package"]]  # the foreground task has a view
    assert state["keyboard_visible"] == (state["focus"] is not None)
    for el in phone.ground_truth():
        left, top, right, bottom = el["box"]
        assert 0 <= left < right <= 1080 and 0 <= top < bottom <= 2400
    assert phone.screencap_png().startswith(b"\x89PNG")
