"""Open App on phones that print no labels: the resolver's layers (alias table,
package-name heuristic, labels from the installed APKs) measured against android_world's
published name → package table, and the screen search of the home pages and the drawer
on the simulated phone over the real adb server with real OCR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import adbutils
import pytest

from benchmarks.bench_app_resolution import GOAL, LabelFreePhone, load_table, measure
from mobile_agent.apps import AppResolver, alias_packages, labels_from_apk
from mobile_agent.apps.apk_labels import ApkLabelCache
from mobile_agent.device import open_device
from mobile_agent.device.parsing import LauncherApp
from mobile_agent.locate import build_locator
from mobile_agent.operations import OperationContext, Outcome, execute, parse_action
from mobile_agent.operations.open_app import pick_tile
from mobile_agent.settings import AdbSettings, Settings
from perception.types import Box, Candidate, LocateStatus, Location
from tests.real_samples import FIXTURES

# AOSP apksig's test APK "Tiny App for CTS", as androguard/androguard@4573c8c keeps it in
# tests/data/APK/apksig/golden-aligned-in.apk (see fixtures/android/SOURCES.md)
TINY_APP_APK = FIXTURES / "apk" / "tinyapp-golden-aligned-in.apk"
TINY_APP = "Tiny App for CTS"


# --- coverage without the screen ------------------------------------------------------------


def test_android_world_apps_resolve_without_vision() -> None:
    rows = load_table()
    assert len(rows) == 57  # the table as published; see fixtures/android/SOURCES.md
    result = measure(rows, use_aliases=True)
    primary = result["primary"]
    assert primary["right"] / sum(primary.values()) >= GOAL, result["misses"]
    assert result["all"]["wrong"] == 0, result["wrong"]  # unresolved goes to the screen; wrong opens another app


def _phone(*packages: str) -> LabelFreePhone:
    return LabelFreePhone([LauncherApp(p, ".Main", None) for p in packages])


@pytest.mark.parametrize(
    "installed, name, package",
    [
        # the same app under each vendor's package, and its Chinese name
        (["com.sec.android.app.clockpackage", "com.sec.android.app.camera"], "Clock", "com.sec.android.app.clockpackage"),
        (["com.android.deskclock", "com.miui.gallery"], "时钟", "com.android.deskclock"),
        (["com.android.camera", "com.miui.gallery"], "相机", "com.android.camera"),
        (["com.sec.android.app.myfiles", "com.sec.android.gallery3d"], "My Files", "com.sec.android.app.myfiles"),
        (["com.tencent.mm", "com.eg.android.AlipayGphone"], "微信", "com.tencent.mm"),
        (["com.google.android.apps.docs", "com.google.android.apps.docs.editors.docs"], "Docs", "com.google.android.apps.docs.editors.docs"),
        # no alias: the package spells the name
        (["net.gsantner.markor", "org.tasks"], "Markor", "net.gsantner.markor"),
        (["com.simplemobiletools.calendar.pro", "com.google.android.calendar"], "Simple Calendar Pro", "com.simplemobiletools.calendar.pro"),
    ],
)
def test_names_to_packages(installed: list[str], name: str, package: str) -> None:
    got = AppResolver(_phone(*installed), apk_budget_s=0).resolve(name, read_apks=False)
    assert got.package == package, got


def test_two_equally_good_packages_are_not_guessed() -> None:
    got = AppResolver(_phone("org.alpha.tracker", "org.beta.tracker"), apk_budget_s=0).resolve("Tracker", read_apks=False)
    assert got.package is None and got.asked == ("listing", "alias", "heuristic")


def test_alias_table_lists_vendor_variants_in_order() -> None:
    clocks = alias_packages("clock")
    assert clocks[0] == "com.google.android.deskclock" and "com.sec.android.app.clockpackage" in clocks
    assert alias_packages("Google  Maps!") == alias_packages("google maps")
    assert alias_packages("google map")[0] == "com.google.android.apps.maps"  # a near spelling
    assert alias_packages("Teleporter") == ()


# --- labels from the APKs ----------------------------------------------------------------------


def test_label_from_a_real_apk() -> None:
    package, labels = labels_from_apk(TINY_APP_APK.read_bytes())
    assert package == "android.appsecurity.cts.tinyapp"
    assert labels[0] == TINY_APP  # the default configuration first
    assert "[Ţîñý Åþþ ƒöŕ ÇŢŠ one two three]" in labels  # every locale's label is kept (en-XA here)
    with pytest.raises(ValueError):
        labels_from_apk(b"PK\x03\x04 not really a zip")


@pytest.fixture
def device(sim_phone: Any, adb_server: Any) -> Any:
    return open_device(AdbSettings(server_port=adb_server.port), serial=sim_phone.serial)


def _push_apk_as(sim_phone: Any, adb_server: Any, package: str) -> str:
    """The real APK, put where `pm path PACKAGE` says the phone keeps PACKAGE's APK."""
    client = adbutils.AdbClient("127.0.0.1", adb_server.port)
    out = client.device(sim_phone.serial).shell(["pm", "path", package])
    path = out.strip().removeprefix("package:")
    client.device(sim_phone.serial).sync.push(TINY_APP_APK.read_bytes(), path)
    return path


def test_apk_labels_are_read_over_sync_and_cached_by_version(
    sim_phone: Any, adb_server: Any, device: Any, tmp_path: Path
) -> None:
    package = "com.google.android.keep"
    _push_apk_as(sim_phone, adb_server, package)
    cache_file = tmp_path / "apps" / "phone.json"
    cache = ApkLabelCache(device, cache_file)
    labels = cache.labels(package, "10")
    assert labels[0] == TINY_APP
    # a new run finds it on disk, for that version only
    reloaded = ApkLabelCache(device, cache_file)
    assert reloaded.cached(package, "10") == labels
    assert reloaded.cached(package, "11") is None  # the app was updated: read again


def test_resolver_falls_back_to_apk_labels(sim_phone: Any, adb_server: Any, device: Any, tmp_path: Path) -> None:
    package = "com.google.android.keep"
    _push_apk_as(sim_phone, adb_server, package)
    got = AppResolver(device, tmp_path / "phone.json").resolve(TINY_APP)
    assert (got.package, got.layer) == (package, "apk_label")
    assert got.asked == ("listing", "alias", "heuristic", "apk_label")


# --- the screen search ----------------------------------------------------------------------


def _cand(index: int, text: str, top: float) -> Candidate:
    return Candidate(index=index, box=Box(100, top, 300, top + 40), text=text, score=0.9)


def test_a_logo_above_the_label_taps_the_label() -> None:
    # the YouTube tile: the logo spells the name, the label under it too
    loc = Location(LocateStatus.CANDIDATES, "YouTube", candidates=(_cand(1, "YouTube", 600), _cand(2, "YouTube", 760)))
    assert pick_tile(loc, "YouTube") == (200, 780)


def test_several_tiles_tap_the_exact_label() -> None:
    loc = Location(
        LocateStatus.CANDIDATES,
        "Clock",
        candidates=(_cand(1, "Clock", 300), _cand(2, "Clock widget settings", 900), _cand(3, "clock", 1500)),
    )
    assert pick_tile(loc, "Clock") == (200, 1520)
    assert pick_tile(Location(LocateStatus.NOT_FOUND, "Clock"), "Clock") is None


class _ScreenOnly:
    """The phone with an empty package listing: no resolver layer can answer, only the
    screen (the phone itself, its screen and input, are the real simulated phone)."""

    def __init__(self, device: Any) -> None:
        self._device = device

    def launcher_apps(self, *, max_age_s: float = 0.0) -> list:
        return []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings().with_overrides(
        {"agent.settle_timeout_s": 2.0, "agent.settle_interval_s": 0.05, "adb.app_cache_dir": None}
    )


@pytest.fixture(scope="module")
def locator(settings: Settings) -> Any:
    return build_locator(settings)


def _open(name: str, device: Any, locator: Any, settings: Settings) -> Outcome:
    ctx = OperationContext(device, locator, device.screenshot(), settings)
    return execute(parse_action(f"Action: Open App ({name})"), ctx)


def test_screen_search_finds_an_app_only_in_the_drawer(sim_phone: Any, device: Any, locator: Any, settings: Settings) -> None:
    # the dock's icons carry no label: Chrome's name is written only in the app drawer
    outcome = _open("Chrome", _ScreenOnly(device), locator, settings)
    assert outcome.ok, outcome.feedback
    assert "app drawer" in outcome.feedback
    assert sim_phone.phone.state()["foreground"] == "com.android.chrome"


def test_screen_search_says_not_installed_only_after_every_page(
    sim_phone: Any, device: Any, locator: Any, settings: Settings
) -> None:
    outcome = _open("Teleporter", _ScreenOnly(device), locator, settings)
    assert not outcome.ok
    assert "not on any home screen page nor in the app drawer" in outcome.feedback
    assert sim_phone.phone.state()["foreground"] == "com.android.launcher3"


def test_every_app_of_the_simulated_phone_resolves_without_its_label(device: Any) -> None:
    # what the phone lists over adb, its labels taken away as a real phone prints them
    listed = device.launcher_apps()
    named = [(app.label, app.package) for app in listed if app.label]
    if not named:
        pytest.skip("this phone prints no labels: nothing to compare the resolution with")
    resolver = AppResolver(_phone(*[app.package for app in listed]), apk_budget_s=0)
    wrong = {label: (resolver.resolve(label, read_apks=False).package, package) for label, package in named}
    wrong = {label: got for label, got in wrong.items() if got[0] != got[1]}
    assert not wrong, wrong
