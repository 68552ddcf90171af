"""Open App coverage: how many of a public name → package table resolve to the right
package without looking at the screen, on a phone that prints no labels.

The table is android_world's (``tests/fixtures/android/android_world_apps.tsv``, copied
verbatim with its source): 57 apps, each with the names agents use for it. The phone
has every one of them installed at once (so that ``Docs`` must beat ``Drive``'s
``com.google.android.apps.docs``), listed like ``cmd package query-activities`` on a
real phone: packages and activities, ``nonLocalizedLabel=null``. The APK label layer is
off (no APKs here), so this measures the alias table and the package-name heuristic.
Also printed: the same with the alias table off, to show what the heuristic alone does
for apps the table does not list.

    .venv/bin/python benchmarks/bench_app_resolution.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mobile_agent.apps import AppResolver  # noqa: E402
from mobile_agent.device.parsing import LauncherApp  # noqa: E402

TABLE = ROOT / "tests" / "fixtures" / "android" / "android_world_apps.tsv"
GOAL = 0.90


def load_table(path: Path = TABLE) -> list[tuple[list[str], str, str]]:
    rows = []
    for line in path.read_text("utf-8").splitlines():
        if not line or line.startswith("#") or line.startswith("names\t"):
            continue
        names, package, activity = line.split("\t")
        rows.append(([n.strip() for n in names.split("|") if n.strip()], package, activity))
    return rows


class LabelFreePhone:
    """What the resolver asks a phone, answered as a real phone does: launcher
    activities without labels (the input of the measurement, not a stand-in for it)."""

    serial = "bench"

    def __init__(self, apps: list[LauncherApp]) -> None:
        self.apps = apps

    def launcher_apps(self, *, max_age_s: float = 0.0) -> list[LauncherApp]:
        return list(self.apps)


def measure(rows: list[tuple[list[str], str, str]], *, use_aliases: bool) -> dict[str, object]:
    phone = LabelFreePhone([LauncherApp(pkg, act, None) for _, pkg, act in rows])
    resolver = AppResolver(phone, cache_file=None, apk_budget_s=0)
    results = {"primary": Counter(), "all": Counter(), "layers": Counter(), "misses": [], "wrong": []}
    for names, package, _ in rows:
        for i, name in enumerate(names):
            got = resolver.resolve(name, read_apks=False, use_aliases=use_aliases)
            verdict = "right" if got.package == package else ("none" if got.package is None else "wrong")
            results["all"][verdict] += 1
            if i == 0:
                results["primary"][verdict] += 1
            if verdict == "right":
                results["layers"][got.layer] += 1
            elif verdict == "wrong":
                results["wrong"].append(f"{name!r} -> {got.package} (want {package})")
            else:
                results["misses"].append(f"{name!r} (want {package})")
    return results


def _share(counter: Counter) -> str:
    total = sum(counter.values())
    return f"{counter['right']}/{total} = {100 * counter['right'] / total:.1f}% (wrong {counter['wrong']}, unresolved {counter['none']})"


def main() -> int:
    rows = load_table()
    full = measure(rows, use_aliases=True)
    bare = measure(rows, use_aliases=False)
    print(f"table: {TABLE.relative_to(ROOT)}: {len(rows)} apps, {sum(len(n) for n, _, _ in rows)} names")
    print(f"alias table + heuristic, first name of each app: {_share(full['primary'])}")
    print(f"alias table + heuristic, every name:             {_share(full['all'])}")
    print(f"  answered by: {dict(full['layers'])}")
    print(f"heuristic alone, first name of each app:         {_share(bare['primary'])}")
    print(f"heuristic alone, every name:                     {_share(bare['all'])}")
    for title, items in (("wrong", full["wrong"]), ("unresolved", full["misses"])):
        if items:
            print(f"{title} (alias + heuristic): " + "; ".join(items))
    ratio = full["primary"]["right"] / sum(full["primary"].values())
    print(f"goal >= {GOAL:.0%} of the apps by their first name: {'met' if ratio >= GOAL else 'NOT met'}")
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
