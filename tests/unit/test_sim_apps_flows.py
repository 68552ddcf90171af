"""The content apps of the simulated phone (Chrome, Gmail, Google Maps, Play Store, Amazon
Music, YouTube, TikTok, Alibaba.com), driven as a person would - taps at the ground-truth
positions of what is on screen, `input text`, key events, swipes - through
`Phone.run(argv)`; success is read from `Phone.state()`."""

from __future__ import annotations

import pytest

from simphone import Phone

CHROME = "com.android.chrome"
GMAIL = "com.google.android.gm"
MAPS = "com.google.android.apps.maps"
STORE = "com.android.vending"
MUSIC = "com.amazon.mp3"
YOUTUBE = "com.google.android.youtube"
TIKTOK = "com.zhiliaoapp.musically"
ALIBABA = "com.alibaba.intl.android.apps.poseidon"


def texts(phone: Phone) -> list[str]:
    return [el["text"] or el["description"] for el in phone.ground_truth()]


def drawn(phone: Phone) -> list[str]:
    """The texts drawn on the screen (not the full contents of text fields)."""
    return [el["text"] for el in phone.ground_truth() if el["kind"] == "text"]


def element(phone: Phone, text: str) -> dict:
    for el in phone.ground_truth():
        if text in (el["text"], el["description"]):
            return el
    raise AssertionError(f"{text!r} not on screen: {texts(phone)}")


def run(phone: Phone, *argv: str) -> None:
    result = phone.run(list(argv))
    assert result.exit_code == 0, result


def tap(phone: Phone, text: str) -> None:
    left, top, right, bottom = element(phone, text)["box"]
    run(phone, "input", "tap", str((left + right) // 2), str((top + bottom) // 2))


def type_text(phone: Phone, text: str) -> None:
    run(phone, "input", "text", text.replace(" ", "%s"))


def enter(phone: Phone) -> None:
    run(phone, "input", "keyevent", "KEYCODE_ENTER")


def back(phone: Phone) -> None:
    run(phone, "input", "keyevent", "4")


def page_down(phone: Phone) -> None:
    run(phone, "input", "swipe", "540", "1800", "540", "600", "400")


def page_up(phone: Phone) -> None:
    run(phone, "input", "swipe", "540", "600", "540", "1800", "400")


def data(phone: Phone, package: str) -> dict:
    return phone.state()["apps"][package]


def open_app(phone: Phone, label: str) -> None:
    tap(phone, f"{label} app icon")


@pytest.fixture
def phone() -> Phone:
    return Phone()


# -- Chrome ------------------------------------------------------------------------------------
def test_chrome_search_shows_todays_lakers_score(phone: Phone) -> None:
    open_app(phone, "Chrome")
    tap(phone, "Search or type web address")
    assert phone.state()["keyboard_visible"]
    type_text(phone, "Lakers game today")
    enter(phone)
    chrome = data(phone, CHROME)
    assert [s["query"] for s in chrome["searches"]] == ["Lakers game today"]
    assert phone.state()["current"]["view"] == "results"
    shown = texts(phone)
    assert "NBA · Final · Today, May 20, 2024" in shown  # the phone's date
    assert any(t.startswith("Lakers win") or t.startswith("Lakers lose") for t in shown)
    # another day, another game
    run(phone, "cmd", "simphone", "clock", "2024-06-02T10:00:00")
    assert any("June 2, 2024" in t for t in texts(phone))


def test_chrome_result_pages_and_a_second_search(phone: Phone) -> None:
    open_app(phone, "Chrome")
    tap(phone, "Search or type web address")
    type_text(phone, "Taylor Swift")
    enter(phone)
    assert "American singer-songwriter" in texts(phone)
    tap(phone, "Taylor Swift - Wikipedia")
    chrome = data(phone, CHROME)
    assert chrome["history"][-1]["url"] == "https://en.wikipedia.org/wiki/Taylor_Swift"
    assert chrome["tab"]["title"] == "Taylor Swift - Wikipedia"
    back(phone)
    tap(phone, "Search or type web address search bar")  # showing the query; a tap clears it
    assert phone.state()["focus"] == "address"
    type_text(phone, "xyzzy plugh")
    enter(phone)
    assert [s["query"] for s in data(phone, CHROME)["searches"]] == ["Taylor Swift", "xyzzy plugh"]
    assert "Your search - xyzzy plugh - did not match any documents." in " ".join(texts(phone))


def test_chrome_typed_address_opens_the_page_or_says_unreachable(phone: Phone) -> None:
    open_app(phone, "Chrome")
    tap(phone, "Search or type web address")
    type_text(phone, "nba.com/lakers/schedule")
    enter(phone)
    assert data(phone, CHROME)["searches"] == []
    assert "Los Angeles Lakers schedule." in texts(phone)
    tap(phone, "Search or type web address search bar")
    type_text(phone, "example.org")
    enter(phone)
    assert "This site can't be reached" in texts(phone)


# -- Gmail -------------------------------------------------------------------------------------
def test_gmail_send_an_email(phone: Phone) -> None:
    open_app(phone, "Gmail")
    tap(phone, "Compose")
    assert phone.state()["focus"] == "to"  # the To field has focus when compose opens
    type_text(phone, "alex.chen@example.com")
    tap(phone, "Subject")
    type_text(phone, "My new work")
    tap(phone, "Compose email")
    type_text(phone, "Hi, I started a new job as a software engineer.")
    tap(phone, "send, paper plane")
    sent = data(phone, GMAIL)["sent"]
    assert len(sent) == 1
    assert sent[0]["to"] == ["alex.chen@example.com"]
    assert sent[0]["subject"] == "My new work"
    assert sent[0]["body"] == "Hi, I started a new job as a software engineer."
    assert phone.state()["current"]["view"] == "main"
    tap(phone, "Sent")
    assert "To: alex.chen@example.com" in texts(phone)


def test_gmail_empty_email_and_enter_moves_between_fields(phone: Phone) -> None:
    open_app(phone, "Gmail")
    tap(phone, "Compose")
    type_text(phone, "a@b.io")
    enter(phone)
    assert phone.state()["focus"] == "subject"
    enter(phone)
    assert phone.state()["focus"] == "body"
    tap(phone, "send, paper plane")
    assert data(phone, GMAIL)["sent"][0] == {"id": data(phone, GMAIL)["sent"][0]["id"], "to": ["a@b.io"],
                                             "subject": "", "body": "", "time": "09:41"}


def test_gmail_refuses_a_mail_without_a_valid_recipient(phone: Phone) -> None:
    open_app(phone, "Gmail")
    tap(phone, "Compose")
    type_text(phone, "not an address")
    tap(phone, "send, paper plane")
    assert data(phone, GMAIL)["sent"] == []
    assert "Add at least one recipient (name@example.com)" in texts(phone)
    assert phone.state()["current"]["view"] == "compose"


def test_gmail_back_keeps_a_draft_and_the_draft_can_be_sent(phone: Phone) -> None:
    open_app(phone, "Gmail")
    tap(phone, "Compose")
    type_text(phone, "maria@example.com")
    back(phone)  # hides the keyboard
    back(phone)  # leaves compose: a draft
    drafts = data(phone, GMAIL)["drafts"]
    assert [d["to"] for d in drafts] == ["maria@example.com"]
    tap(phone, "Drafts")
    tap(phone, "To: maria@example.com")
    tap(phone, "send, paper plane")
    gmail = data(phone, GMAIL)
    assert gmail["drafts"] == [] and gmail["sent"][0]["to"] == ["maria@example.com"]


# -- Google Maps -------------------------------------------------------------------------------
def test_maps_navigate_to_west_lake(phone: Phone) -> None:
    open_app(phone, "Google Maps")
    tap(phone, "Search here")
    type_text(phone, "Hangzhou West Lake")
    enter(phone)
    assert phone.state()["current"]["view"] == "place"
    tap(phone, "Directions")
    assert data(phone, MAPS)["navigation"]["active"] is False
    tap(phone, "Start")
    nav = data(phone, MAPS)["navigation"]
    assert nav == {"active": True, "destination": "West Lake", "category": "scenic spot", "mode": "drive"}
    back(phone)  # the route again, navigation goes on
    assert data(phone, MAPS)["navigation"]["active"] is True
    tap(phone, "Resume")
    tap(phone, "Exit")
    assert data(phone, MAPS)["navigation"]["active"] is False


def test_maps_gas_station_lists_nearby_ones_nearest_first(phone: Phone) -> None:
    open_app(phone, "Google Maps")
    tap(phone, "Search here")
    type_text(phone, "gas station")
    enter(phone)
    assert phone.state()["current"]["view"] == "list"
    distances = [float(t.split("·")[1].split()[0]) for t in texts(phone) if t.startswith("Gas station ·")]
    assert len(distances) == 3 and distances == sorted(distances)
    bar_bottom = element(phone, "Search here search bar")["box"][3]
    pins = [el["box"] for el in phone.ground_truth() if el["description"].startswith("red map pin")]
    assert len(pins) == 3 and all(top >= bar_bottom for _, top, _, _ in pins)  # none hidden by the search bar
    tap(phone, "Directions")
    tap(phone, "Walk " + next(t for t in texts(phone) if t.startswith("Walk ")).split(" ", 1)[1])
    tap(phone, "Start")
    nav = data(phone, MAPS)["navigation"]
    assert nav["active"] and nav["category"] == "gas station" and nav["mode"] == "walk"
    assert "Gas Station" in nav["destination"]
    assert [s["query"] for s in data(phone, MAPS)["searches"]] == ["gas station"]


def test_maps_category_chip_and_other_result_page(phone: Phone) -> None:
    open_app(phone, "Google Maps")
    tap(phone, "Coffee")
    assert "Starbucks (Hubin)" in texts(phone)
    tap(phone, "Starbucks (Hubin)")
    tap(phone, "Save")
    assert data(phone, MAPS)["saved"] == ["starbucks"]
    assert "Saved" in texts(phone)


# -- Play Store --------------------------------------------------------------------------------
def test_play_store_installs_whatsapp_onto_the_launcher(phone: Phone) -> None:
    assert "com.whatsapp" not in phone.state()["installed"]
    open_app(phone, "Play Store")
    tap(phone, "Search apps & games")
    type_text(phone, "WhatsApp")
    enter(phone)
    tap(phone, "Install")
    state = phone.state()
    assert "com.whatsapp" in state["installed"]
    assert data(phone, STORE)["installs"][0]["package"] == "com.whatsapp"
    tap(phone, "Open")
    assert phone.state()["current"]["package"] == "com.whatsapp"
    tap(phone, "Agree and continue")
    assert "Maria Lopez" in texts(phone)
    run(phone, "input", "keyevent", "HOME")
    run(phone, "input", "swipe", "900", "1200", "100", "1200", "300")  # the second launcher page
    assert "WhatsApp app icon" in texts(phone)


def test_play_store_app_page_install_and_uninstall(phone: Phone) -> None:
    open_app(phone, "Play Store")
    tap(phone, "Search apps & games")
    type_text(phone, "instagram")
    enter(phone)
    tap(phone, "Threads")  # a similar app opens its page
    assert phone.state()["current"]["view"] == "app"
    back(phone)
    tap(phone, "Install")
    assert "com.instagram.android" in phone.state()["installed"]
    tap(phone, "Instagram")
    tap(phone, "Uninstall")
    assert "com.instagram.android" not in phone.state()["installed"]
    assert "Install" in texts(phone)


def test_play_store_unknown_app(phone: Phone) -> None:
    open_app(phone, "Play Store")
    tap(phone, "Search apps & games")
    type_text(phone, "qwertyzzz")
    enter(phone)
    assert 'No results for "qwertyzzz"' in texts(phone)
    assert "Install" not in texts(phone)


# -- Amazon Music ------------------------------------------------------------------------------
def test_music_search_agent_and_play(phone: Phone) -> None:
    open_app(phone, "Amazon Music")
    tap(phone, "Search")
    assert phone.state()["focus"] == "query"
    type_text(phone, "agent")
    enter(phone)
    assert data(phone, MUSIC)["searches"][0]["query"] == "agent"
    tap(phone, "Secret Agent")
    assert data(phone, MUSIC)["playing"] == {"title": "Secret Agent", "artist": "Nova Lane", "playlist": None,
                                             "playing": True}
    tap(phone, "pause button, pause")
    assert data(phone, MUSIC)["playing"]["playing"] is False
    tap(phone, "play button, play triangle")
    assert data(phone, MUSIC)["playing"]["playing"] is True


def test_music_artist_search_and_relaxing_playlist(phone: Phone) -> None:
    open_app(phone, "Amazon Music")
    tap(phone, "Search")
    type_text(phone, "Jay Chou")
    enter(phone)
    tap(phone, "Jay Chou")
    assert phone.state()["current"]["view"] == "artist"
    assert {"Mojito", "Sunny Day", "Nocturne"} <= set(texts(phone))
    tap(phone, "Home")
    assert data(phone, MUSIC)["playing"] is None
    tap(phone, "Relaxing Piano")
    playing = data(phone, MUSIC)["playing"]
    assert playing["playlist"] == "Relaxing Piano" and playing["playing"] is True


# -- YouTube -----------------------------------------------------------------------------------
def test_youtube_search_comment_and_like(phone: Phone) -> None:
    open_app(phone, "YouTube")
    assert "Stephen Curry Top Plays" not in texts(phone)
    tap(phone, "search, magnifier")
    type_text(phone, "Stephen Curry")
    enter(phone)
    assert data(phone, YOUTUBE)["searches"][0]["query"] == "Stephen Curry"
    tap(phone, "Stephen Curry Top Plays")
    tap(phone, "thumbs up")
    tap(phone, "Subscribe")
    tap(phone, "Comments")
    tap(phone, "Add a comment...")
    type_text(phone, "Oh, chef, your basketball spirit has always inspired me")
    tap(phone, "send, paper plane")
    yt = data(phone, YOUTUBE)
    assert [(r["video_id"], r["video_title"]) for r in yt["liked"]] == [("curry-top", "Stephen Curry Top Plays")]
    assert yt["comments"][0]["text"] == "Oh, chef, your basketball spirit has always inspired me"
    assert yt["comments"][0]["video_title"] == "Stephen Curry Top Plays"
    assert yt["subscriptions"] == ["NBA"]
    assert "Oh, chef, your basketball spirit has always inspired me" in " ".join(texts(phone))


def test_youtube_like_twice_takes_it_back_and_empty_comment_is_not_posted(phone: Phone) -> None:
    open_app(phone, "YouTube")
    tap(phone, "search, magnifier")
    type_text(phone, "cats")
    enter(phone)
    tap(phone, "Funny Cats Compilation")
    tap(phone, "thumbs up")
    assert len(data(phone, YOUTUBE)["liked"]) == 1
    tap(phone, "thumbs up, liked")
    assert data(phone, YOUTUBE)["liked"] == []
    tap(phone, "Comments")
    tap(phone, "send, paper plane")
    assert data(phone, YOUTUBE)["comments"] == []


# -- TikTok ------------------------------------------------------------------------------------
def caption(phone: Phone) -> str:
    return " ".join(t for t in texts(phone) if "#" in t)


def test_tiktok_swipe_to_a_cat_like_and_comment(phone: Phone) -> None:
    open_app(phone, "TikTok")
    assert "#cat" not in caption(phone)
    page_down(phone)
    page_down(phone)
    assert "#cat" in caption(phone)
    tap(phone, "white heart")
    liked = data(phone, TIKTOK)["liked"]
    assert len(liked) == 1 and "cat" in liked[0]["tags"]
    assert "red heart, liked" in texts(phone)
    tap(phone, "white speech bubble")
    tap(phone, "Add comment...")
    type_text(phone, "Ohhhh, so cute cat!")
    enter(phone)
    comment = data(phone, TIKTOK)["comments"][0]
    assert comment["text"] == "Ohhhh, so cute cat!" and "cat" in comment["tags"]
    assert comment["video_id"] == liked[0]["video_id"]


def test_tiktok_like_three_cat_videos_and_unlike(phone: Phone) -> None:
    open_app(phone, "TikTok")
    for _ in range(10):
        if "#cat" in caption(phone):
            tap(phone, "white heart")
        page_down(phone)
    liked = data(phone, TIKTOK)["liked"]
    assert len(liked) == 4 and all("cat" in r["tags"] for r in liked)
    page_up(phone)  # back to the 10th, a cat video already liked
    tap(phone, "red heart, liked")
    assert len(data(phone, TIKTOK)["liked"]) == 3


def test_tiktok_first_video_has_nothing_above_and_feed_depends_on_seed(phone: Phone) -> None:
    open_app(phone, "TikTok")
    first = caption(phone)
    page_up(phone)
    assert caption(phone) == first
    assert phone.state()["tasks"][TIKTOK][-1]["index"] == 0
    other = Phone(seed=3)
    open_app(other, "TikTok")
    assert caption(other) != first


# -- Alibaba.com -------------------------------------------------------------------------------
def test_alibaba_find_caps_and_add_to_cart(phone: Phone) -> None:
    open_app(phone, "Alibaba.com")
    tap(phone, "Search")
    type_text(phone, "caps")
    enter(phone)
    shown = texts(phone)
    assert {"Baseball Cap", "Trucker Mesh Cap", "Snapback Hip Hop Cap"} <= set(shown)
    assert "Wireless Earbuds" not in shown
    tap(phone, "Baseball Cap")
    ali = data(phone, ALIBABA)
    assert ali["searches"][0]["query"] == "caps"
    assert ali["viewed"][0]["title"] == "Baseball Cap"
    tap(phone, "Add to cart")
    tap(phone, "Add to cart")
    cart = data(phone, ALIBABA)["cart"]
    assert [(i["title"], i["quantity"]) for i in cart] == [("Baseball Cap", 100)]  # twice the minimum order
    tap(phone, "cart, shopping cart")
    assert "Cart (1)" in texts(phone)
    assert "Total: US$185.00" in texts(phone)


# -- all of them -------------------------------------------------------------------------------
def _search(field: str, query: str):
    def act(phone: Phone) -> None:
        tap(phone, field)
        type_text(phone, query)
        enter(phone)
    return act


# something each app keeps in its data, done as a person would
CHANGE_DATA = {
    "Chrome": _search("Search or type web address", "Taylor Swift"),
    "Gmail": lambda phone: (tap(phone, "Compose"), type_text(phone, "bo@example.com"), back(phone), back(phone)),
    "Google Maps": lambda phone: tap(phone, "Coffee"),
    "Play Store": _search("Search apps & games", "Telegram"),
    "Amazon Music": lambda phone: (tap(phone, "Search tab"), type_text(phone, "agent"), enter(phone)),
    "YouTube": lambda phone: (tap(phone, "search, magnifier"), type_text(phone, "curry"), enter(phone)),
    "TikTok": lambda phone: tap(phone, "white heart"),
    "Alibaba.com": _search("Search", "cap"),
}


@pytest.mark.parametrize("label", list(CHANGE_DATA))
def test_apps_are_real_deterministic_and_reset(label: str) -> None:
    a, b = Phone(seed=5), Phone(seed=5)
    for p in (a, b):
        open_app(p, label)
    assert "Nothing here yet" not in texts(a)
    assert a.run(["screencap", "-p"]).stdout == b.run(["screencap", "-p"]).stdout
    package = a.state()["current"]["package"]
    seeded = a.state()["apps"][package]
    CHANGE_DATA[label](a)
    assert a.state()["apps"][package] != seeded  # so that the reset below has something to undo
    a.reset()
    assert a.state()["apps"][package] == seeded
    assert a.state()["current"]["package"] == "com.android.launcher3"


def test_dark_theme_draws_the_apps_dark() -> None:
    phone = Phone()
    run(phone, "settings", "put", "secure", "ui_night_mode", "2")
    for label in ("Gmail", "Play Store", "YouTube"):
        run(phone, "input", "keyevent", "HOME")
        open_app(phone, label)
        pixel = phone.screenshot().getpixel((700, 200))  # the app's top bar
        assert sum(pixel[:3]) < 200, (label, pixel)


@pytest.mark.parametrize(("label", "field", "query"), [("Chrome", "Search or type web address", "Taylor Swift"),
                                                       ("Google Maps", "Search here", "coffee"),
                                                       ("Play Store", "Search apps & games", "Telegram"),
                                                       ("Alibaba.com", "Search", "yoga mat")])
def test_back_from_results_finds_the_search_box_empty(phone: Phone, label: str, field: str, query: str) -> None:
    open_app(phone, label)
    for _ in range(2):
        tap(phone, field)
        type_text(phone, query)
        enter(phone)
        assert phone.state()["current"]["view"] != "main"
        back(phone)
        assert phone.state()["current"]["view"] == "main"
    package = phone.state()["current"]["package"]
    assert [s["query"] for s in data(phone, package)["searches"]] == [query, query]


def test_music_search_tab_starts_a_new_query(phone: Phone) -> None:
    open_app(phone, "Amazon Music")
    for query in ("agent", "relax"):
        tap(phone, "Search")
        type_text(phone, query)
        enter(phone)
    assert [s["query"] for s in data(phone, MUSIC)["searches"]] == ["agent", "relax"]
    assert "Relaxing Piano" in texts(phone)


def test_a_focused_field_shows_the_end_of_a_long_text_as_a_phone_scrolls_to_the_cursor(phone: Phone) -> None:
    # the notes multi-app-2 asks for run past the title field and down the body: what was
    # just typed must be on screen, or nobody can check it
    open_app(phone, "Notes")
    tap(phone, "orange plus button: new note")
    type_text(phone, "Temperature analysis for the next 5 days: Today 16-26, Tue 14-20")
    (title,) = [t for t in drawn(phone) if "14-20" in t]
    # its start cut off at the field's edge, with no ellipsis, as an EditText scrolls
    assert not title.startswith(("Temperature", "…")) and title.endswith("Today 16-26, Tue 14-20")
    enter(phone)
    for i in range(40):
        type_text(phone, f"row {i} of the body")
        enter(phone)
    assert "row 39 of the body" in drawn(phone) and "row 0 of the body" not in drawn(phone)
    back(phone)  # the keyboard closes, the body loses focus: its start shows again, the title's too
    assert "row 0 of the body" in drawn(phone)
    assert any(t.startswith("Temperature analysis") for t in drawn(phone))


def test_the_battery_percentage_switch_says_what_the_status_bar_shows(phone: Phone) -> None:
    def percent_shown() -> bool:
        return any(t.endswith("%") and t[:-1].isdigit() for t in drawn(phone))

    open_app(phone, "Settings")
    tap(phone, "Notifications & status bar")
    assert percent_shown()
    tap(phone, "Show battery percentage switch, on")
    assert not percent_shown()
    assert phone.state()["settings"]["system"]["status_bar_show_battery_percent"] == "0"
    tap(phone, "Show battery percentage switch, off")
    assert percent_shown()


def test_a_notes_card_shows_a_long_title_on_two_lines(phone: Phone) -> None:
    open_app(phone, "Notes")
    tap(phone, "orange plus button: new note")
    type_text(phone, "Temperature analysis for the next 5 days, low-high in C: Today 16-26, Tue 14-20")
    back(phone)
    back(phone)
    assert phone.state()["current"]["view"] == "main"
    lines = [t for t in drawn(phone) if t not in ("Notes", "09:41", "85%")]
    assert len(lines) == 2 and lines[0].startswith("Temperature analysis") and lines[1].endswith("…")
    assert "".join(lines).replace("…", "").replace(" ", "") in data(phone, "com.google.android.keep")["notes"][0][
        "title"].replace(" ", "")
