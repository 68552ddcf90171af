"""``AppResolver``: an app's visible name → its package, without looking at the screen.

Layers, cheapest and surest first; each says which one answered:

1. ``listing``: a label the phone itself printed (emulators and the simulator print
   ``nonLocalizedLabel=Gmail``; real phones mostly ``null``).
2. ``alias``: the maintained table of common apps (``aliases.toml``), several packages
   per app where vendors differ; the first one installed wins.
3. ``heuristic``: the package name spells every distinctive word of the label
   (``Retro Music`` → ``code.name.monkey.retromusic``), one package clearly best.
4. ``apk_label``: the label read from the installed APKs' resources (``ApkLabelCache``,
   cached per device by package and versionCode), within a time budget.
5. ``heuristic`` again with a partial match, when nothing better answered.

``None`` means every layer disagreed; the Open App operation then looks at the screen.

May import: the standard library, ``mobile_agent.device`` (types), the sibling modules.
"""

from __future__ import annotations

import logging
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobile_agent.apps.apk_labels import ApkLabelCache
from mobile_agent.apps.names import alias_packages, heuristic_matches, normalize_name, package_tokens
from mobile_agent.device.parsing import LauncherApp, match_label

__all__ = ["AppResolution", "AppResolver", "resolver_for"]

log = logging.getLogger(__name__)

_LISTING_MAX_AGE_S = 30.0


@dataclass(frozen=True)
class AppResolution:
    """The package for ``label`` (None: not resolved), the layer that found it, and
    the layers asked."""

    label: str
    package: str | None
    layer: str | None
    asked: tuple[str, ...] = field(default=())


class AppResolver:
    """Resolves labels on one device. ``cache_file``: where APK labels are kept
    (None: memory only). ``apk_budget_s``: time the APK layer may spend reading
    uncached APKs in one ``resolve`` (0: only what is cached)."""

    def __init__(self, device: Any, cache_file: Path | None = None, apk_budget_s: float = 20.0) -> None:
        self.device = device
        self.apk_budget_s = apk_budget_s
        self.apk_labels = ApkLabelCache(device, cache_file)

    def installed_launchables(self) -> list[LauncherApp]:
        return list(self.device.launcher_apps(max_age_s=_LISTING_MAX_AGE_S))

    def resolve(self, label: str, *, read_apks: bool = True, use_aliases: bool = True) -> AppResolution:
        if not isinstance(label, str) or not normalize_name(label):
            raise ValueError("app label must be a non-empty string")
        apps = self.installed_launchables()
        packages = [app.package for app in apps]
        installed = set(packages)
        asked: list[str] = []

        asked.append("listing")
        labelled = [app for app in apps if app.label]
        if labelled:
            found = match_label(label, labelled)
            if found:
                return AppResolution(label, found, "listing", tuple(asked))

        if use_aliases:
            asked.append("alias")
            for package in alias_packages(label):
                if package in installed:
                    return AppResolution(label, package, "alias", tuple(asked))

        asked.append("heuristic")
        scored = heuristic_matches(label, packages)
        best = [p for s, p in scored if s >= 1.0 and s == scored[0][0]]
        if len(best) == 1 or (best and _clearly_first(best)):
            return AppResolution(label, best[0], "heuristic", tuple(asked))

        if read_apks:
            asked.append("apk_label")
            found = self._from_apk_labels(label, packages)
            if found:
                return AppResolution(label, found, "apk_label", tuple(asked))

        partial = [(s, p) for s, p in scored if 0.5 < s < 1.0]  # more than half the distinctive words
        if partial and (len(partial) == 1 or partial[0][0] > partial[1][0]):
            return AppResolution(label, partial[0][1], "heuristic", tuple(asked))
        if best:
            log.info("%r matches several packages equally (%s); not guessing", label, ", ".join(best[:5]))
        return AppResolution(label, None, None, tuple(asked))

    def _from_apk_labels(self, label: str, packages: list[str]) -> str | None:
        versions = self.apk_labels.versions()
        candidates = [LauncherApp(p, None, None) for p in packages]
        deadline = time.monotonic() + self.apk_budget_s
        # what is cached first (free), then the APKs still unread, while time allows
        labelled: list[LauncherApp] = []
        unread: list[str] = []
        for app in candidates:
            cached = self.apk_labels.cached(app.package, versions.get(app.package, "?"))
            if cached is None:
                unread.append(app.package)
            else:
                labelled.extend(LauncherApp(app.package, None, text) for text in cached)
        found = match_label(label, labelled, cutoff=0.85) if labelled else None
        if found:
            return found
        for package in unread:
            if time.monotonic() >= deadline:
                log.info("APK label budget spent with %d APKs unread", len(unread))
                break
            texts = self.apk_labels.labels(package, versions.get(package, "?"))
            entries = [LauncherApp(package, None, text) for text in texts]
            if entries and match_label(label, entries, cutoff=0.85):
                labelled.extend(entries)
                # the best over everything read so far, not the first that is close
                return match_label(label, labelled, cutoff=0.85)
            labelled.extend(entries)
        return None


def _clearly_first(best: list[str]) -> bool:
    """Among full matches, the one with the fewest name parts is what the label names
    (``Maps`` is ``com.google.android.apps.maps``, not ``com.example.maps.offline``)."""
    sizes = sorted(len(package_tokens(p)) for p in best)
    return len(sizes) == 1 or sizes[0] < sizes[1]


_resolvers: weakref.WeakKeyDictionary[Any, AppResolver] = weakref.WeakKeyDictionary()


def resolver_for(device: Any, cache_dir: Path | None) -> AppResolver:
    """The resolver of ``device`` (one per Device object, so its caches live as long)."""
    resolver = _resolvers.get(device)
    if resolver is None:
        serial = str(device.serial)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in serial)
        resolver = AppResolver(device, cache_dir / f"{safe}.json" if cache_dir is not None else None)
        _resolvers[device] = resolver
    return resolver
