"""Which app the planner means: label → package resolution for real phones.

Public: ``AppResolver``, ``AppResolution``, ``resolver_for``, ``labels_from_apk``,
``alias_packages``, ``heuristic_matches``.

May import: the standard library, pyaxmlparser (lazily), ``mobile_agent.errors`` and
``mobile_agent.device``. Never the operations, the agent, the server.
"""

from __future__ import annotations

from mobile_agent.apps.apk_labels import ApkLabelCache, labels_from_apk
from mobile_agent.apps.names import alias_packages, heuristic_matches, normalize_name
from mobile_agent.apps.resolver import AppResolution, AppResolver, resolver_for

__all__ = [
    "AppResolution",
    "AppResolver",
    "ApkLabelCache",
    "alias_packages",
    "heuristic_matches",
    "labels_from_apk",
    "normalize_name",
    "resolver_for",
]
