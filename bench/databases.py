"""Where the compaction bench stores entries: a fresh SQLite file or a fresh PostgreSQL database.

Each case gets an empty database so that one size's rows never slow down the next one's queries.
PostgreSQL is measured when `OPENWOP_TEST_POSTGRES_URL` names a server (the same variable the
project's tests use), or with `--pg-throwaway`, which starts a local cluster the way the tests'
`postgres_server` fixture does (`initdb`, trust auth, `fsync=off`, TCP on 127.0.0.1, a random
port) and removes it at the end. The bench creates a database per case and drops it afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from reference_host.devdb import throwaway_cluster as _cluster

POSTGRES_ENV = "OPENWOP_TEST_POSTGRES_URL"


@dataclass(frozen=True)
class Backend:
    name: str  # "sqlite" or "postgresql"
    server_url: str | None = None  # PostgreSQL only: where CREATE DATABASE runs


def available_backends(server_url: str | None = None) -> list[Backend]:
    """SQLite, plus PostgreSQL on `server_url` (default: $OPENWOP_TEST_POSTGRES_URL) if any."""
    backends = [Backend("sqlite")]
    server = server_url or os.environ.get(POSTGRES_ENV)
    if server:
        backends.append(Backend("postgresql", server))
    return backends


def _with_database(server_url: str, name: str) -> str:
    """The server URL with its database (the path) replaced; the query string is kept."""
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextmanager
def fresh_database(backend: Backend) -> Iterator[str]:
    """A database URL nobody else uses; removed (file or database) on exit."""
    if backend.name == "sqlite":
        root = Path(tempfile.mkdtemp(prefix="openwop-bench-"))
        try:
            yield f"sqlite:///{root / 'bench.db'}"
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    import psycopg

    assert backend.server_url is not None
    name = f"openwop_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(backend.server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(backend.server_url, name)
    finally:
        with psycopg.connect(backend.server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """A local PostgreSQL server URL, started like the tests' fixture and removed on exit."""
    with _cluster(prefix="openwop-bench-pg-") as url:
        yield url
