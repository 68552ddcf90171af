"""The iPhone's app table (``mobile_agent.device.ios.apps``) and the simulated iPhone's bundle
ids (``simphone.ios.wda.BUNDLES``): every id has its source named, names are unique across
apps and languages, every app the simulated phone hosts answers to its iOS counterpart's id
(or says why it has none), and the two tables agree where both name an app."""

from __future__ import annotations

from collections import Counter

import pytest

from mobile_agent.device.ios.apps import (
    APPLE_APP_NAMES,
    IOS_APPS,
    SOURCES,
    THIRD_PARTY_APP_NAMES,
    _key,
    bundle_for_label,
)
from simphone.apps import APPS
from simphone.apps.builtin import load_builtin_apps
from simphone.ios.wda import BUNDLES, LAUNCHER, NO_IOS_ID, SPRINGBOARD, _bundle_of


def test_every_third_party_id_names_its_source() -> None:
    assert {source for _, _, source in THIRD_PARTY_APP_NAMES} <= set(SOURCES)
    bundles = [bundle for bundle, _, _ in THIRD_PARTY_APP_NAMES] + [bundle for bundle, _ in APPLE_APP_NAMES]
    assert len(bundles) == len(set(bundles)), "an app listed twice"


def test_names_are_unique_across_apps_and_languages() -> None:
    names = [n for _, ns in APPLE_APP_NAMES for n in ns] + [n for _, ns, _ in THIRD_PARTY_APP_NAMES for n in ns]
    shared = [k for k, count in Counter(_key(n) for n in names).items() if count > 1]
    assert not shared and len(IOS_APPS) == len(names)


@pytest.mark.parametrize(("names", "bundle"), [
    (("YouTube", "油管", "youtube"), "com.google.ios.youtube"),
    (("Google Maps", "谷歌地图", "Google マップ"), "com.google.Maps"),
    (("WeChat", "微信", "Weixin"), "com.tencent.xin"),
    (("X", "Twitter", "推特"), "com.atebits.Tweetie2"),
    (("Telegram", "电报"), "ph.telegra.Telegraph"),
    (("Chrome", "Google Chrome", "谷歌浏览器"), "com.google.chrome.ios"),
    (("Teams", "Microsoft Teams"), "com.microsoft.skype.teams"),
    (("Books", "Bücher", "Livres", "ブック"), "com.apple.iBooks"),
])
def test_everyday_apps_resolve_in_several_languages(names: tuple[str, ...], bundle: str) -> None:
    assert {bundle_for_label(n) for n in names} == {bundle}


def test_a_name_no_source_gave_is_not_guessed() -> None:
    assert bundle_for_label("Play Store") is None  # Android's store: no iOS app
    assert bundle_for_label("Threads") is None  # no published source for its iOS id was found


def test_every_hosted_app_answers_to_its_ios_counterparts_id() -> None:
    load_builtin_apps()
    hosted = set(APPS)
    assert set(BUNDLES.values()) <= hosted, "an id for an app the simulated phone does not host"
    assert len(set(BUNDLES.values())) == len(BUNDLES), "two ids for one hosted app"
    unnamed = hosted - set(BUNDLES.values()) - {LAUNCHER}
    assert unnamed == set(NO_IOS_ID), "a hosted app with neither an iOS id nor the reason it has none"
    assert _bundle_of(LAUNCHER) == SPRINGBOARD
    # no Android package is passed off as an iOS id (TikTok's iOS id is the same string: sourced)
    assert [b for b, package in BUNDLES.items() if b == package] == ["com.zhiliaoapp.musically"]


def test_the_simulator_and_the_agent_agree_on_each_hosted_apps_id() -> None:
    load_builtin_apps()
    for bundle, package in BUNDLES.items():
        label = APPS[package].label
        known = bundle_for_label(label)
        # the agent's table knows the hosted app by its label (the Play Store plays the App
        # Store's part under Android's name, and Bitwarden is not an everyday app: not listed)
        if label not in ("Play Store", "Bitwarden"):
            assert known == bundle, (label, known, bundle)
