"""The families: settings toggles, one-app searches and sends, and multi-app chains.

Parameter pools name what the simulated apps hold (simphone/apps/*.py catalogues: Maps'
places, Amazon Music's songs, Alibaba's products, YouTube's videos, the Play Store's apps),
so that every instance is solvable; the tests run each family's reference solution on the
simulated phone over adb.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from eval.families.events import event_families
from eval.families.family import Family, Params
from eval.mobile_eval.schema import EvalTask

__all__ = ["FAMILIES", "Family", "distinct_instances", "family_by_name", "sample_instances"]

NOTES, GM, CHROME = "apps[com.google.android.keep].notes", "apps[com.google.android.gm].sent", "apps[com.android.chrome].searches"
NOTE_END = ["Type ({text})", "Back", "Back || Click icon (check mark, top right)"]
NEW_NOTE = ["Open App (Notes)", "Click icon (orange plus, bottom right)"]


def _pick(*pools: Iterable[str]) -> Any:
    return [list(p) for p in pools]


# -- settings: the phone starts in the other state (adb `settings put` / `cmd ...`) ------------

def _toggle(name: str, label: str, page: str | None, path: str, namespace: str, key: str,
            on_words: tuple[str, ...], extra_changes: tuple[str, ...] = (), guard: str = "") -> Family:
    def params(rng: random.Random) -> Params:
        return {"want": rng.choice(["on", "off"])}

    def setup(p: Params) -> list[list[str]]:
        return [["settings", "put", namespace, key, "0" if p["want"] == "on" else "1"]]

    def reference(p: Params) -> list[str]:
        return ["Open App (Settings)"] + ([f"Click text ({page})"] if page else []) + [f"Click text ({label})"]

    phrasings = tuple(f"{w} {{want}}." for w in on_words)
    return Family(name, "Settings", ("Settings",), 1, phrasings, params, reference,
                  lambda p: {"name": "setting_is", "params": {"path": path, "value": p["want"] == "on"}},
                  changes=(guard or path,) + extra_changes, setup=setup)


def _dark_params(rng: random.Random) -> Params:
    return {"mode": rng.choice(["dark", "light"])}


SETTINGS = [
    Family("settings-theme", "Settings", ("Settings",), 1,
           ("Switch the phone to {mode} mode.", "Turn on {mode} mode.", "I prefer the {mode} theme; change it for me.",
            "Set the display theme to {mode}."),
           _dark_params,
           lambda p: ["Open App (Settings)", "Click text (Display & brightness)", f"Click text ({p['mode'].title()} mode)"],
           lambda p: {"name": "setting_is", "params": {"path": "theme", "value": p["mode"]}},
           changes=("theme",),
           setup=lambda p: [["cmd", "uimode", "night", "yes" if p["mode"] == "light" else "no"]]),
    Family("settings-airplane", "Settings", ("Settings",), 1,
           ("Turn airplane mode {want}.", "Switch {want} the airplane mode.", "Airplane mode: {want}, please."),
           lambda rng: {"want": rng.choice(["on", "off"])},
           lambda p: ["Open App (Settings)", "Click text (Airplane mode)"],
           lambda p: {"name": "setting_is", "params": {"path": "airplane_mode", "value": p["want"] == "on"}},
           changes=("airplane_mode", "wifi", "bluetooth"),
           setup=lambda p: [["cmd", "connectivity", "airplane-mode", "enable"]] if p["want"] == "off" else []),
    # Wi-Fi / Bluetooth are left out: their page title and their switch row carry the same word, and a
    # scripted "Click text (Wi-Fi)" on the page hits the title (to do: a reference that taps the switch).
    _toggle("settings-network-speed", "Real-time network speed", "Notifications & status bar", "network_speed_shown",
            "system", "status_bar_network_speed",
            ("Turn the real-time network speed in the status bar", "Switch the status bar's network speed")),
    Family("settings-battery-percent", "Settings", ("Settings",), 1,
           ("{verb} the battery percentage in the status bar.", "{verb} the battery level percentage."),
           lambda rng: {"verb": rng.choice(["Show", "Hide"])},
           lambda p: ["Open App (Settings)", "Click text (Notifications & status bar)", "Click text (Show battery percentage)"],
           lambda p: {"name": "setting_is", "params": {"path": "settings.system.status_bar_show_battery_percent",
                                                        "value": "1" if p["verb"] == "Show" else "0"}},
           changes=("settings.system.status_bar_show_battery_percent",),
           setup=lambda p: [["settings", "put", "system", "status_bar_show_battery_percent",
                             "0" if p["verb"] == "Show" else "1"]]),
]

# -- pools: what the simulated apps hold -----------------------------------------------------
TOPICS = ["Taylor Swift", "Lakers game today", "weather in Hangzhou", "best pasta recipe", "Python tutorial",
          "Golden State Warriors", "cheap flights to Tokyo", "how to grow tomatoes", "electric cars 2024",
          "Stephen Curry stats", "Hangzhou West Lake", "moon landing", "marathon training plan", "Jay Chou concert",
          "coffee brewing methods", "yoga for beginners", "Olympic games", "Mars rover", "jazz history", "chess openings"]
ARTISTS = ["Jay Chou", "Taylor Swift", "Adele", "Piano Dreams", "Lo-Fi Crew", "Nature Sounds", "Pulse", "Nova Lane",
           "Kid Static", "Luna Park"]
# (what to search, the song to play): the query differs from the title, so that the title on
# screen is the result row and not the search field's text
SONGS = [("agent", "Secret Agent"), ("agent", "Double Agent"), ("agent", "Agent of Love"), ("Jay Chou", "Mojito"),
         ("Jay Chou", "Sunny Day"), ("Taylor Swift", "Anti-Hero"), ("Taylor Swift", "Shake It Off"), ("Adele", "Hello")]
PLACES = ["West Lake", "Leifeng Pagoda", "Lingyin Temple", "Hangzhou East Railway Station", "Hefang Street",
          "Grand Hyatt Hangzhou", "Green Tea Restaurant", "Grandma's Home Restaurant"]
CATEGORIES = ["gas station", "restaurant", "coffee shop", "hotel"]
# (what to search, the product to open): the query shares no word with the title, so that
# the title on screen is the result row, never the search field's text
PRODUCTS = [("caps", "Baseball Cap"), ("fisherman", "Bucket Hat"), ("winter knitted", "Knitted Beanie"),
            ("headphones", "Wireless Earbuds"), ("cover", "Silicone Phone Case"), ("fitness exercise", "Yoga Mat"),
            ("light", "LED Desk Lamp"), ("apparel", "Cotton T-Shirt")]
STORE_APPS = [("WhatsApp", "com.whatsapp"), ("Instagram", "com.instagram.android"), ("Telegram", "org.telegram.messenger"),
              ("Spotify", "com.spotify.music"), ("Facebook", "com.facebook.katana"), ("Threads", "com.instagram.barcelona")]
VIDEO_QUERIES = [("Stephen Curry", "Stephen Curry Top Plays", "curry"), ("funny cats", "Funny Cats Compilation 2024", "cats"),
                 ("pasta recipe", "Easy 15-Minute Pasta", "pasta"), ("West Lake walking tour", "Hangzhou West Lake Walking Tour 4K", "west lake"),
                 ("Lakers Warriors highlights", "Lakers vs Warriors Full Game Highlights", "lakers")]
NAMES = ["alex.chen", "maria.garcia", "li.wei", "sam.okafor", "yuki.tanaka", "priya.shah", "tom.muller", "ana.silva",
         "omar.haddad", "emma.jones", "ivan.petrov", "lucy.kim"]
DOMAINS = ["example.com", "example.org", "mail.example.net", "work.example.com"]
SUBJECTS = ["Lunch on Friday", "Project update", "Weekend plans", "Meeting notes", "Happy birthday", "Trip photos"]
BODIES = ["See you at noon.", "The draft is ready for review.", "Shall we go hiking on Saturday?",
          "I attached the notes from today.", "Have a wonderful day!", "The photos are in the shared folder."]
NOTE_THINGS = ["meeting at", "call mom at", "dentist at", "gym at", "pick up parcel at", "team standup at",
               "buy groceries at", "pay rent at", "water plants at", "book club at"]
HOURS = ["8am", "9am", "10am", "11am", "1pm", "2pm", "3pm", "4pm", "5pm", "6pm", "7pm"]
COMMENTS = ["Great video, thanks!", "This made my day", "Amazing, watched it twice", "So helpful, thank you",
            "Love this channel"]


def _address(rng: random.Random) -> str:
    return f"{rng.choice(NAMES)}@{rng.choice(DOMAINS)}"


def _search(app: str, slug: str, field: str, root: str, pool: list[str], phrasings: tuple[str, ...]) -> Family:
    return Family(f"{slug}-search", app, (app,), 1, phrasings, lambda rng: {"query": rng.choice(pool)},
                  lambda p: [f"Open App ({app})", f"Click {field}", "Type ({query})", "Enter"],
                  lambda p: {"name": "new_record", "params": {"root": root, "describe": "search",
                                                               "where": {"query": [p["query"].lower()]}}})


SEARCHES = [
    _search("Chrome", "chrome", "text (Search or type web address)", CHROME, TOPICS,
            ("Search the web for {query}.", "Look up {query} in Chrome.", "Google {query} for me.")),
    _search("Amazon Music", "amazon-music", "text (Search)", "apps[com.amazon.mp3].searches", ARTISTS,
            ("Search singer {query} in Amazon Music.", "Find music by {query} on Amazon Music.")),
    _search("YouTube", "youtube", "icon (search magnifier, top right)", "apps[com.google.android.youtube].searches",
            [q for q, _, _ in VIDEO_QUERIES] + ["Taylor Swift", "lofi hip hop"],
            ("Search for videos about {query} on YouTube.", "Find {query} videos on YouTube.")),
    _search("Alibaba.com", "alibaba", "text (Search)", "apps[com.alibaba.intl.android.apps.poseidon].searches",
            [q for q, _ in PRODUCTS], ("Help me find {query} in Alibaba.com.", "Search Alibaba.com for {query}.")),
    _search("Google Maps", "google-maps", "text (Search here)", "apps[com.google.android.apps.maps].searches",
            PLACES + CATEGORIES, ("Search for {query} in Google Maps.", "Find {query} on the map.")),
    _search("Play Store", "google-play", "text (Search apps & games)", "apps[com.android.vending].searches",
            [a for a, _ in STORE_APPS], ("Search {query} in Play Store.", "Look for the {query} app in the Play Store.")),
]

MAIL_SEND = ["Open App (Gmail)", "Click text (Compose)", "Type ({address})"]
ONE_APP = [
    Family("notes-create", "Notes", ("Notes",), 1,
           ("Create a note in Notes: {text}.", "Write down \"{text}\" in a new note.", "Make a new note saying {text}."),
           lambda rng: {"text": f"{rng.choice(NOTE_THINGS)} {rng.choice(HOURS)}"},
           lambda p: NEW_NOTE + NOTE_END,
           lambda p: {"name": "note_created", "params": {"words": ["{text}"]}}, changes=(NOTES,),
           human_steps=lambda p: 4),
    Family("gmail-send-empty", "Gmail", ("Gmail",), 1,
           ("Send an empty email to {address}.", "Email {address} with nothing in it."),
           lambda rng: {"address": _address(rng)},
           lambda p: MAIL_SEND + ["Click icon (paper plane, top right)"],
           lambda p: {"name": "new_record", "params": {"root": GM, "describe": "sent mail", "equals": {"to": "{address}"},
                                                        "empty": ["body"]}}, changes=(GM,)),
    Family("gmail-send-message", "Gmail", ("Gmail",), 2,
           ("Send an email to {address} with the subject \"{subject}\" saying \"{body}\".",
            "Email {address}: subject {subject}, message: {body}"),
           lambda rng: {"address": _address(rng), "subject": rng.choice(SUBJECTS), "body": rng.choice(BODIES)},
           lambda p: MAIL_SEND + ["Click text (Subject)", "Type ({subject})", "Click text (Compose email)", "Type ({body})",
                                  "Click icon (paper plane, top right)"],
           lambda p: {"name": "new_record", "params": {"root": GM, "describe": "sent mail", "equals": {"to": "{address}"},
                                                        "where": {"subject": ["{subject}"], "body": ["{body}"]}}},
           changes=(GM,)),
    Family("google-play-install", "Play Store", ("Play Store",), 2,
           ("Download {name} in Play Store.", "Install {name} from the Play Store."),
           lambda rng: dict(zip(("name", "package"), rng.choice(STORE_APPS), strict=True)),
           lambda p: ["Open App (Play Store)", "Click text (Search apps & games)", "Type ({name})", "Enter", "Click text (Install)"],
           lambda p: {"name": "app_installed", "params": {"package": "{package}"}}, changes=("installed",)),
    Family("google-maps-navigate", "Google Maps", ("Google Maps",), 2,
           ("Navigate to {place}.", "Start driving directions to {place}.", "Take me to {place}."),
           lambda rng: {"place": rng.choice(PLACES)},
           lambda p: ["Open App (Google Maps)", "Click text (Search here)", "Type ({place})", "Enter",
                      "Click text (Directions)", "Click text (Start)"],
           lambda p: {"name": "current_is", "params": {"path": "apps[com.google.android.apps.maps].navigation",
                                                        "describe": "navigation", "where": {"destination": ["{place}"]},
                                                        "equals": {"active": True}}}),
    Family("google-maps-nearby", "Google Maps", ("Google Maps",), 2,
           ("Navigate to a nearby {category}.", "Find the closest {category} and start navigation."),
           lambda rng: {"category": rng.choice(CATEGORIES)},
           lambda p: ["Open App (Google Maps)", "Click text (Search here)", "Type ({category})", "Enter",
                      "Click text (Directions)", "Click text (Start)"],
           lambda p: {"name": "current_is", "params": {"path": "apps[com.google.android.apps.maps].navigation",
                                                        "describe": "navigation", "where": {"category": ["{category}"]},
                                                        "equals": {"active": True}}}),
    Family("amazon-music-play", "Amazon Music", ("Amazon Music",), 2,
           ("Play the song \"{song}\" in Amazon Music.", "Search {song} in Amazon Music and play it."),
           lambda rng: dict(zip(("query", "song"), rng.choice(SONGS), strict=True)),
           lambda p: ["Open App (Amazon Music)", "Click text (Search)", "Type ({query})", "Enter", "Click text ({song})"],
           lambda p: {"name": "current_is", "params": {"path": "apps[com.amazon.mp3].playing", "describe": "now playing",
                                                        "where": {"title": ["{song}"]}, "equals": {"playing": True}}}),
    Family("alibaba-add-to-cart", "Alibaba.com", ("Alibaba.com",), 2,
           ("Find {query} in Alibaba.com and add the {title} to my cart.", "Put a {title} in my Alibaba.com cart."),
           lambda rng: dict(zip(("query", "title"), rng.choice(PRODUCTS), strict=True)),
           lambda p: ["Open App (Alibaba.com)", "Click text (Search)", "Type ({query})", "Enter", "Click text ({title})",
                      "Click text (Add to cart)"],
           lambda p: {"name": "new_record", "params": {"root": "apps[com.alibaba.intl.android.apps.poseidon].cart",
                                                        "describe": "cart item", "where": {"title": ["{title}"]}}}),
    Family("youtube-comment", "YouTube", ("YouTube",), 2,
           ("Search {query} on YouTube, open \"{title}\" and comment \"{comment}\".",
            "Leave the comment \"{comment}\" on the YouTube video {title}."),
           lambda rng: {**dict(zip(("query", "title", "word"), rng.choice(VIDEO_QUERIES), strict=True)),
                        "comment": rng.choice(COMMENTS)},
           lambda p: ["Open App (YouTube)", "Click icon (search magnifier, top right)", "Type ({query})", "Enter",
                      "Click text ({title})", "Click text (Comments)", "Click text (Add a comment...)", "Type ({comment})",
                      "Enter || Click icon (paper plane, right)"],
           lambda p: {"name": "new_record", "params": {"root": "apps[com.google.android.youtube].comments",
                                                        "describe": "comment",
                                                        "where": {"video_title": ["{word}"], "text": ["{comment}"]}}}),
]

MULTI = [
    Family("calendar-date-note", "Multi-App", ("Calendar", "Notes"), 3,
           ("Open the calendar and look at today's date, then create a note in Notes that says \"{prefix} [today's date]\".",
            "Check today's date and note it down as \"{prefix} [date]\"."),
           lambda rng: {"prefix": rng.choice(["Today is", "Date:", "Journal for", "Checked on"]),
                        "day": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"},
           lambda p: ["Open App (Calendar)", "Exit || Home"] + NEW_NOTE + ["Type ({prefix} {today})", "Back",
                                                                          "Back || Click icon (check mark, top right)"],
           lambda p: {"name": "note_with_date", "params": {"words": ["{prefix}"]}}, changes=(NOTES,),
           setup=lambda p: [["cmd", "simphone", "clock", f"{p['day']}T09:41:00"]], derived=("today",)),
    Family("weather-forecast-note", "Multi-App", ("Weather", "Notes"), 3,
           ("Check the temperature in the next 5 days, then write a temperature analysis in a new note.",
            "Look at the 5-day forecast in Weather and save the highs and lows in Notes."),
           lambda rng: {"day": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"},
           lambda p: ["Open App (Weather)", "Exit || Home"] + NEW_NOTE + [
               "Type (Temperature analysis for the next 5 days, low-high in C: {forecast}.)", "Back",
               "Back || Click icon (check mark, top right)"],
           lambda p: {"name": "note_with_forecast", "params": {"any_of": ["temperature", "°", "degree"]}},
           changes=(NOTES,), setup=lambda p: [["cmd", "simphone", "clock", f"{p['day']}T09:41:00"]],
           derived=("forecast",)),
    Family("chrome-search-note", "Multi-App", ("Chrome", "Notes"), 3,
           ("Search the web for {query}, then create a note in Notes about it.",
            "Look up {query} in Chrome and keep a note mentioning {query}."),
           lambda rng: {"query": rng.choice(TOPICS)},
           lambda p: ["Open App (Chrome)", "Click text (Search or type web address)", "Type ({query})", "Enter",
                      "Exit || Home"] + NEW_NOTE + ["Type (Looked up {query} today.)", "Back",
                                                    "Back || Click icon (check mark, top right)"],
           lambda p: {"name": "searched_then_noted", "params": {"search_words": ["{query}"], "words": ["{query}"]}},
           changes=(NOTES,)),
]


def _then_note(name: str, app: str, first: list[str], check: dict[str, Any], pool: list[str],
               phrasings: tuple[str, ...]) -> Family:
    return Family(name, "Multi-App", (app, "Notes"), 3, phrasings, lambda rng: {"query": rng.choice(pool)},
                  lambda p: first + ["Exit || Home"] + NEW_NOTE + ["Type (Remember {query})", "Back",
                                                                  "Back || Click icon (check mark, top right)"],
                  lambda p: {"name": "all_of", "params": {"checks": [
                      check, {"name": "note_created", "params": {"words": ["{query}"]}}]}},
                  changes=(NOTES,))


MULTI += [
    _then_note("music-search-note", "Amazon Music",
               ["Open App (Amazon Music)", "Click text (Search)", "Type ({query})", "Enter"],
               {"name": "new_record", "params": {"root": "apps[com.amazon.mp3].searches", "describe": "search",
                                                 "where": {"query": ["{query}"]}}}, ARTISTS,
               ("Search {query} in Amazon Music, then note \"Remember {query}\" in Notes.",
                "Find {query}'s music and write a note to remember {query}.")),
    _then_note("youtube-search-note", "YouTube",
               ["Open App (YouTube)", "Click icon (search magnifier, top right)", "Type ({query})", "Enter"],
               {"name": "new_record", "params": {"root": "apps[com.google.android.youtube].searches",
                                                 "describe": "search", "where": {"query": ["{query}"]}}},
               [q for q, _, _ in VIDEO_QUERIES], ("Search {query} on YouTube and then note it down in Notes.",)),
    _then_note("maps-search-note", "Google Maps",
               ["Open App (Google Maps)", "Click text (Search here)", "Type ({query})", "Enter"],
               {"name": "new_record", "params": {"root": "apps[com.google.android.apps.maps].searches",
                                                 "describe": "search", "where": {"query": ["{query}"]}}},
               PLACES, ("Look up {query} in Google Maps, then write it in a note.",)),
    Family("maps-place-mail", "Multi-App", ("Google Maps", "Gmail"), 3,
           ("Find {place} in Google Maps, then email {address} that we meet at {place}.",),
           lambda rng: {"place": rng.choice(PLACES), "address": _address(rng)},
           lambda p: ["Open App (Google Maps)", "Click text (Search here)", "Type ({place})", "Enter", "Exit || Home"]
           + MAIL_SEND + ["Click text (Compose email)", "Type (Let us meet at {place}.)", "Click icon (paper plane, top right)"],
           lambda p: {"name": "all_of", "params": {"checks": [
               {"name": "new_record", "params": {"root": "apps[com.google.android.apps.maps].searches",
                                                 "describe": "search", "where": {"query": ["{place}"]}}},
               {"name": "new_record", "params": {"root": GM, "describe": "sent mail", "equals": {"to": "{address}"},
                                                 "where": {"body": ["{place}"]}}}]}},
           changes=(GM,)),
    Family("play-install-note", "Multi-App", ("Play Store", "Notes"), 3,
           ("I want {name} on my phone; install it and note \"Installed {name}\".",),
           lambda rng: dict(zip(("name", "package"), rng.choice(STORE_APPS), strict=True)),
           lambda p: ["Open App (Play Store)", "Click text (Search apps & games)", "Type ({name})", "Enter",
                      "Click text (Install)", "Home"] + NEW_NOTE + ["Type (Installed {name})", "Back",
                                                                   "Back || Click icon (check mark, top right)"],
           lambda p: {"name": "all_of", "params": {"checks": [
               {"name": "app_installed", "params": {"package": "{package}"}},
               {"name": "note_created", "params": {"words": ["Installed {name}"]}}]}},
           changes=("installed", NOTES)),
]

# starting from calendar events written through the content provider (eval/families/events.py)
MULTI += event_families(places=PLACES, address=_address, new_note=NEW_NOTE, mail_send=MAIL_SEND, notes_path=NOTES,
                        mail_path=GM)

FAMILIES: dict[str, Family] = {f.name: f for f in SETTINGS + SEARCHES + ONE_APP + MULTI}


def family_by_name(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"no task family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None


def sample_instances(*, families: Iterable[str] | None = None, apps: Iterable[str] | None = None,
                     levels: Iterable[int] | None = None, seeds: Iterable[int] = range(1)) -> list[EvalTask]:
    """Instances of the chosen families (all by default) for each seed."""
    chosen = [family_by_name(n) for n in families] if families else list(FAMILIES.values())
    if apps:
        wanted = {a.lower() for a in apps}
        chosen = [f for f in chosen if {a.lower() for a in f.apps} & wanted or f.app.lower() in wanted]
    if levels:
        chosen = [f for f in chosen if f.level in set(levels)]
    seeds = list(seeds)
    return [f.instance(seed) for f in chosen for seed in seeds]


def distinct_instances(family: Family, seeds: Iterable[int]) -> int:
    """How many different tasks the seeds give: instruction, params and initial state."""
    return len({(t.instruction, tuple(sorted(t.params.items())), repr(t.setup)) for t in family.instances(seeds)})


def instance_by_id(task_id: str) -> EvalTask | None:
    """The instance an id names (``<family>-s<seed>-<level>``), None for another id."""
    import re

    match = re.fullmatch(r"(?P<name>.+)-s(?P<seed>\d+)-[123]", task_id)
    if match is None or match["name"] not in FAMILIES:
        return None
    return FAMILIES[match["name"]].instance(int(match["seed"]))
