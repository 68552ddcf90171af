"""A real PostgreSQL server for the tests (Debian's ``postgresql`` package: initdb, pg_ctl).

``postgres_server`` (session): a throwaway cluster in a temporary folder (in /dev/shm where
there is room) on a free loopback port, trust authentication, fsync off (a test database need
not survive a power cut). Each pytest-xdist worker starts its own.
``.url(database)`` is the SQLAlchemy URL, ``.dsn(database)`` the libpq one,
``.create_database()`` a fresh empty database (one per test keeps tests independent),
``.restart()`` / ``.stop()`` / ``.start()`` for the reconnect tests.

``pg_database`` (function): a fresh database's SQLAlchemy URL.

PostgreSQL refuses to run as root (``initdb: cannot be run as root``); when the tests run as
root (CI, containers) the server runs as the ``postgres`` user that Debian's package creates
(or ``nobody``) through ``runuser``, and owns only its temporary folder.

Tests that need it carry ``pytest.mark.postgres`` (``-m "not postgres"`` leaves them out);
without the binaries they skip and say so (CI installs the package, so there they run).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ports import free_port

__all__ = ["PostgresServer", "pg_bin", "pg_database", "postgres_server", "start_postgres"]


def pg_bin(name: str) -> str | None:
    """``initdb`` / ``pg_ctl`` on PATH, else in Debian's versioned folder (not on PATH there)."""
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True):
        return candidate
    return None


# The cluster lives in memory where the machine has room there: fsync is off anyway, and on a
# disk busy with other runs removing a session's cluster (25 databases, ~8k files) took 13-17 s
# of tests/farm's teardown (0.4 s when the disk is idle).
_MEMORY_DIR = Path("/dev/shm")
_MEMORY_NEEDED = 2 * 1024**3


def _cluster_parent() -> str | None:
    """/dev/shm when it is writable with 2 GB free (a container's is often 64 MB),
    else None: the temporary directory."""
    try:
        if _MEMORY_DIR.is_dir() and os.access(_MEMORY_DIR, os.W_OK | os.X_OK) \
                and shutil.disk_usage(_MEMORY_DIR).free >= _MEMORY_NEEDED:
            return str(_MEMORY_DIR)
    except OSError:
        pass
    return None


def _run_as() -> list[str]:
    """The prefix that runs a command as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return []
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        runuser = shutil.which("runuser")  # util-linux, on every Debian
        if runuser:
            return [runuser, "-u", user, "--"]
    pytest.skip("running as root with no postgres/nobody user or no runuser to run PostgreSQL as")


@dataclass
class PostgresServer:
    root: Path
    port: int
    prefix: list[str]
    pg_ctl: str

    @property
    def data(self) -> Path:
        return self.root / "data"

    def dsn(self, database: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.prefix, self.pg_ctl, "-D", str(self.data), *args],
                              capture_output=True, text=True, timeout=120, check=check)

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300")
        done = self._ctl("-o", options, "-l", str(self.root / "server.log"), "-w", "-t", "60", "start", check=False)
        if done.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"pg_ctl start failed: {done.stderr}\n{log}")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        self.stop("fast")
        self.start()

    def shutdown(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def create_database(self) -> str:
        """A fresh database; its SQLAlchemy URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def start_postgres() -> PostgresServer:
    """A started throwaway cluster (the benchmarks use it too); ``shutdown()`` removes it."""
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        raise FileNotFoundError("PostgreSQL is not installed (apt-get install postgresql)")
    prefix = _run_as()
    root = Path(tempfile.mkdtemp(prefix="pg-test-", dir=_cluster_parent()))
    if prefix:
        entry = pwd.getpwnam(prefix[2])
        os.chown(root, entry.pw_uid, entry.pw_gid)
    os.chmod(root, 0o755)
    done = subprocess.run(
        [*prefix, initdb, "-D", str(root / "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"],
        capture_output=True, text=True, timeout=120,
    )
    if done.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stdout}\n{done.stderr}")
    server = PostgresServer(root=root, port=free_port(), prefix=prefix, pg_ctl=pg_ctl)
    try:
        server.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    if not pg_bin("initdb") or not pg_bin("pg_ctl"):
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql): the farm tests need a real server")
    pytest.importorskip("psycopg", reason="the postgres extra is not installed (pip install 'mobile-agent[postgres]')")
    server = start_postgres()
    try:
        yield server
    finally:
        server.shutdown()


@pytest.fixture
def pg_database(postgres_server: PostgresServer) -> str:
    return postgres_server.create_database()
