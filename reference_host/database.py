"""Engine creation, write transactions, locks, and versioned schema upgrades (Alembic), for SQLite
files and PostgreSQL."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
LOCK_TIMEOUT_SECONDS = 30.0  # how long a writer waits for a lock before its request is refused
POOL_TIMEOUT_SECONDS = 5.0  # how long a request waits for a pooled connection (then 503)
CONNECT_TIMEOUT_SECONDS = 5  # how long opening a PostgreSQL connection may take (then 503)
MIGRATION_LOCK_TIMEOUT_SECONDS = 300  # a second host starting waits this long for the first's upgrade
_WRITE_LOCK = "openwop_write_lock"  # execution option: begin this SQLite transaction IMMEDIATE
_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock detected
_LOCK_TIMEOUT_SQLSTATES = frozenset({"55P03"})  # lock_not_available (lock_timeout expired)


def create_engine(
    database_url: str,
    *,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    pool_timeout: float = POOL_TIMEOUT_SECONDS,
) -> sa.Engine:
    """An engine for `database_url` on which no wait is unbounded (docs/availability.md).

    SQLite gets foreign keys on, WAL, real BEGINs and a busy timeout of `lock_timeout`. PostgreSQL
    gets `lock_timeout` for every lock of every session (row locks and advisory locks alike: a wait
    past it raises, see `is_lock_timeout`) and a connect timeout. Both wait at most `pool_timeout`
    for a pooled connection.
    """
    if database_url.startswith("postgresql://"):
        database_url = "postgresql+psycopg://" + database_url.removeprefix("postgresql://")
    if database_url.startswith("sqlite"):
        in_memory = sa.engine.make_url(database_url).database in (None, "", ":memory:")
        pooled = {} if in_memory else {"pool_timeout": pool_timeout}  # one connection, no pool to wait on
        engine = sa.create_engine(
            database_url, connect_args={"timeout": lock_timeout, "check_same_thread": False}, **pooled
        )
        sa.event.listen(engine, "connect", _sqlite_connect)
        sa.event.listen(engine, "begin", _sqlite_begin)
        return engine
    options = f"-c lock_timeout={max(1, round(lock_timeout * 1000))}"
    return sa.create_engine(
        database_url,
        pool_pre_ping=True,
        pool_timeout=pool_timeout,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS, "options": options},
    )


def _sqlite_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    """pysqlite's legacy mode BEGINs only before DML, so a read-then-write transaction read outside
    it; SQLAlchemy emits every BEGIN instead (`_sqlite_begin`), see its SQLite transactions notes.

    WAL with `synchronous=NORMAL`, the setting SQLite's WAL documentation recommends: a commit is
    atomic and survives the process being killed (the WAL is in the OS's hands); only a power loss
    can forget the last commits, never corrupt the file. FULL fsyncs the WAL on every commit, 3 ms
    each here, a fifth of a 1,000-entry compaction.
    """
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(conn: sa.Connection) -> None:
    """BEGIN IMMEDIATE for `write_transaction` (the write lock up front, so a transaction that reads
    and then writes never fails to upgrade its lock); a plain deferred BEGIN for everything else."""
    immediate = conn.get_execution_options().get(_WRITE_LOCK, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


@contextmanager
def write_transaction(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A transaction for work that reads what it is about to write (claims, id checks, runs).

    SQLite: BEGIN IMMEDIATE takes the database's single write lock first, so concurrent writers
    queue (up to the engine's lock timeout) instead of failing on a stale read. PostgreSQL: an ordinary
    transaction; callers serialise on what they claim with `advisory_lock` or row locks.
    """
    with engine.connect() as conn:
        conn.execution_options(**{_WRITE_LOCK: True})
        with conn.begin():
            yield conn


def advisory_lock(conn: sa.Connection, *scope: str) -> None:
    """Serialise transactions on `scope` (e.g. "claim", tenant, memoryRef) until this one ends.

    PostgreSQL: a transaction-scoped advisory lock on a 64-bit hash of the scope; waiting longer
    than the session's `lock_timeout` (create_engine) raises (see `is_lock_timeout`). SQLite: nothing
    to do, a `write_transaction` already holds the one write lock.
    """
    if conn.dialect.name != "postgresql":
        return
    digest = hashlib.sha256("\x00".join(scope).encode("utf-8")).digest()
    key = int.from_bytes(digest[:8], "big", signed=True)
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def is_retryable(exc: BaseException) -> bool:
    """The database aborted the transaction to break a deadlock or a serialization conflict: rerun it."""
    return isinstance(exc, sa.exc.DBAPIError) and _sqlstate(exc) in _RETRYABLE_SQLSTATES


def is_lock_timeout(exc: BaseException) -> bool:
    """A lock wait ran out: PostgreSQL's lock_timeout, or SQLite's busy timeout ("database is locked")."""
    if not isinstance(exc, sa.exc.OperationalError):
        return False
    return _sqlstate(exc) in _LOCK_TIMEOUT_SQLSTATES or "database is locked" in str(exc.orig)


def _alembic_config(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`; safe to call on every start (idempotent)."""
    with write_transaction(engine) as connection:
        if connection.dialect.name == "postgresql":  # an upgrade may take longer than a request's wait
            connection.exec_driver_sql(f"SET LOCAL lock_timeout = '{MIGRATION_LOCK_TIMEOUT_SECONDS}s'")
        advisory_lock(connection, "migrations")  # two hosts starting on one PostgreSQL database
        command.upgrade(_alembic_config(connection), revision)


def current_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    head = script.get_current_head()
    assert head is not None
    return head
