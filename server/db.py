"""The database behind the store: an SQLAlchemy engine for ``server.database_url``, and
``CREATE TABLE IF NOT EXISTS`` that survives several processes starting at once.

SQLite (WAL, busy timeout, foreign keys) is the embedded default; any SQLAlchemy URL works, so
several instances can share one Postgres. A URL the store cannot serve (malformed, an unknown or
missing driver, an in-memory SQLite database, a database that cannot be opened) is a
``ConfigError`` naming it, password hidden.

May import: sqlalchemy, the standard library, ``mobile_agent.errors``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from mobile_agent.errors import ConfigError

__all__ = ["add_missing_columns", "check_database_url", "create_tables", "inserted_id", "make_engine", "shown_url"]


def inserted_id(result: sa.CursorResult[Any]) -> int:
    """The id a one-row INSERT gave its row (SQLAlchemy types the key as optional: it is None
    only for statements that are no single-row insert)."""
    key = result.inserted_primary_key
    if key is None:
        raise TypeError("not the result of a single-row INSERT")
    return int(key[0])


def create_tables(tables: sa.MetaData, engine: Engine) -> None:
    """CREATE TABLE IF NOT EXISTS, safe when several processes start at once on one Postgres:
    the loser of a race to create a table sees a unique violation on the catalog, and finds
    the table there on the next try."""
    for attempt in range(3):
        try:
            tables.create_all(engine)
            add_missing_columns(tables, engine)
            return
        except (sa.exc.IntegrityError, sa.exc.ProgrammingError):
            if attempt == 2 or engine.dialect.name != "postgresql":
                raise
            time.sleep(0.2 * (attempt + 1))


def add_missing_columns(tables: sa.MetaData, engine: Engine) -> None:
    """``ALTER TABLE … ADD COLUMN`` for each nullable column a table of an older database lacks
    (the owner of a task came after its table), and ``CREATE INDEX`` for each index it lacks: the
    rows it had keep NULL there. A column or index another process added meanwhile is the same
    one, not an error."""
    inspector = sa.inspect(engine)
    for table in tables.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present or not column.nullable:
                continue
            kind = column.type.compile(dialect=engine.dialect)
            name = engine.dialect.identifier_preparer.quote(column.name)
            table_name = engine.dialect.identifier_preparer.quote(table.name)
            exists = "IF NOT EXISTS " if engine.dialect.name == "postgresql" else ""
            try:
                with engine.begin() as conn:
                    conn.exec_driver_sql(f"ALTER TABLE {table_name} ADD COLUMN {exists}{name} {kind}")
            except sa.exc.OperationalError:  # SQLite: a racing process added it first
                if column.name not in {c["name"] for c in sa.inspect(engine).get_columns(table.name)}:
                    raise
        # and their indexes (create_all makes a table's indexes only with the table): the owner
        # column is read by every user's task list and every quota count
        indexed = {index["name"] for index in sa.inspect(engine).get_indexes(table.name)}
        for index in table.indexes:
            if index.name in indexed:
                continue
            try:
                index.create(engine, checkfirst=True)
            except (sa.exc.OperationalError, sa.exc.ProgrammingError, sa.exc.IntegrityError):  # made by a racing process
                if index.name not in {i["name"] for i in sa.inspect(engine).get_indexes(table.name)}:
                    raise


def check_database_url(url: str) -> None:
    """Raise ``ConfigError`` now for a URL the store could not serve (no connection is made)."""
    make_engine(url).dispose()


def shown_url(url: str) -> str:
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return repr(url)


def make_engine(url: str) -> Engine:
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise ConfigError(
            f"server.database_url {url!r} is not a database URL (sqlite:///path or postgresql+psycopg://…)",
            setting="server.database_url",
        ) from exc
    if parsed.drivername in ("postgresql", "postgres"):
        # a plain postgresql:// (libpq's own form) means psycopg 3, the driver of the postgres
        # extra; SQLAlchemy's default for it would be psycopg2, which nothing installs
        parsed = parsed.set(drivername="postgresql+psycopg")
        url = parsed.render_as_string(hide_password=False)
    try:
        return _engine(url, parsed)
    except (sa.exc.ArgumentError, ImportError) as exc:  # NoSuchModuleError is an ArgumentError
        hint = " (pip install 'mobile-agent[postgres]')" if parsed.get_backend_name() == "postgresql" else ""
        raise ConfigError(
            f"server.database_url {shown_url(url)}: no driver for it{hint}: {exc}", setting="server.database_url"
        ) from exc


def _engine(url: str, parsed: sa.engine.URL) -> Engine:
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if not database or database == ":memory:" or parsed.query.get("mode") == "memory":
            # every pooled connection would open its own empty database
            raise ConfigError(
                "server.database_url: an in-memory SQLite database cannot be shared by the service's "
                "threads; name a file (sqlite:///path/to/tasks.sqlite3)",
                setting="server.database_url",
            )
        try:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"server.database_url: cannot create the folder of {database}: {exc}", setting="server.database_url"
            ) from exc
        engine = sa.create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=20,
            max_overflow=40,
        )

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=20, max_overflow=40)
