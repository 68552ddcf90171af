"""The content apps through the real adb server and adbutils, as a host client sees a
real phone: app_start, clicks at ground-truth positions, typed text, swipes, intents;
the outcome read back with `dumpsys simphone`."""

from __future__ import annotations


def test_gmail_over_adb_types_shell_characters_verbatim(sim_phone):
    d = sim_phone.device
    d.app_start("com.google.android.gm")
    sim_phone.tap_element("Compose")
    d.send_keys("alex.chen@example.com")
    sim_phone.tap_element("Subject")
    subject = "New job; $(reboot) & `id` | 'quoted' \"too\""
    d.shell(["input", "text", subject.replace(" ", "%s")])
    sim_phone.tap_element("send, paper plane")
    sent = sim_phone.adb_state()["apps"]["com.google.android.gm"]["sent"]
    assert [(m["to"], m["subject"]) for m in sent] == [(["alex.chen@example.com"], subject)]
    assert d.app_current().package == "com.google.android.gm"


def test_play_store_install_shows_in_package_manager(sim_phone):
    d = sim_phone.device
    assert "com.whatsapp" not in d.list_packages()
    d.app_start("com.android.vending")
    sim_phone.tap_element("Search apps & games")
    d.send_keys("WhatsApp")
    d.keyevent("ENTER")
    sim_phone.tap_element("Install")
    assert "com.whatsapp" in d.list_packages()
    d.app_start("com.whatsapp")
    assert d.app_current().package == "com.whatsapp"


def test_chrome_opens_a_view_intent(sim_phone):
    d = sim_phone.device
    d.shell(["am", "start", "-a", "android.intent.action.VIEW", "-d", "https://en.wikipedia.org/wiki/Taylor_Swift"])
    assert d.app_current().package == "com.android.chrome"
    chrome = sim_phone.adb_state()["apps"]["com.android.chrome"]
    assert chrome["tab"]["title"] == "Taylor Swift - Wikipedia"
    assert sim_phone.element("Taylor Swift - Wikipedia")


def test_tiktok_swipes_and_likes_over_adb(sim_phone):
    d = sim_phone.device
    d.app_start("com.zhiliaoapp.musically")
    for _ in range(2):
        d.swipe(540, 1800, 540, 600, 0.4)
    sim_phone.tap_element("white heart")
    liked = sim_phone.adb_state()["apps"]["com.zhiliaoapp.musically"]["liked"]
    assert len(liked) == 1 and "cat" in liked[0]["tags"]
