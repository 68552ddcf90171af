"""A plan-cache file written before namespaces (SQLite, the CLI's default ``plan-cache.sqlite3``)
is upgraded in place when it is opened: the namespace column and the table's indexes it lacks
(every lookup filters by template and namespace; ``create_all`` makes indexes only with a new
table). The same on the farm's PostgreSQL: tests/farm/test_farm_tenancy.py."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from mobile_agent.replay import PlanStore


def _indexed_columns(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return {column for index in sa.inspect(engine).get_indexes("cached_plans")
                for column in index["column_names"] if column}  # fmt: skip
    finally:
        engine.dispose()


def test_an_older_cache_file_gains_the_namespace_and_its_index(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'plan-cache.sqlite3'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # the table as the version before namespaces wrote it, one plan in it
        conn.exec_driver_sql(
            "CREATE TABLE cached_plans (id INTEGER PRIMARY KEY AUTOINCREMENT, template TEXT NOT NULL, "
            "instruction TEXT NOT NULL, source_run TEXT NOT NULL, steps TEXT NOT NULL, final TEXT NOT NULL, "
            "uses INTEGER NOT NULL, successes INTEGER NOT NULL, failures INTEGER NOT NULL, created_at FLOAT NOT NULL)"
        )
        conn.exec_driver_sql(
            "INSERT INTO cached_plans (template, instruction, source_run, steps, final, uses, successes, failures, "
            "created_at) VALUES ('open settings', 'open settings', 'r0', '[]', '{\"texts\": []}', 0, 0, 0, 1.0)"
        )
    engine.dispose()
    assert _indexed_columns(url) == set()

    store = PlanStore(url)
    assert [plan.source_run for plan in store.find_all("open settings")] == ["r0"]  # kept, the local user's
    assert PlanStore(url, "token:alice").find_all("open settings") == []
    assert _indexed_columns(url) == {"template", "namespace"}
    PlanStore(url, "team:lab")  # opening it again adds nothing and fails nothing
    assert _indexed_columns(url) == {"template", "namespace"}
