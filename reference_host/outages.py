"""Which database failures mean "unavailable, retry later" and what the host answers for each.

Why a module of its own: a lost database, a full disk, an exhausted pool and a lock wait past its
limit are conditions of the moment, not defects of the request or of the host, so they answer 503
(507 for storage full) in the flat envelope with `Retry-After`, never 500 (docs/availability.md).
One function decides it for every route (errors.py) and for the code that must tell them apart.
Only the failure's class and code are ever named: a driver's message can quote the statement's
parameters, that is the request's content.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import sqlalchemy as sa

from reference_host.database import is_lock_timeout

# SQLite primary result codes (the low byte of an extended code)
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_NOMEM, _SQLITE_IOERR = 5, 6, 7, 10
_SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_PROTOCOL = 13, 14, 15
_SQLITE_UNAVAILABLE = frozenset({_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_NOMEM, _SQLITE_IOERR})
_SQLITE_UNAVAILABLE |= {_SQLITE_CANTOPEN, _SQLITE_PROTOCOL}
# PostgreSQL SQLSTATE classes and codes: connection exception, insufficient resources, operator
# intervention (shutdown, crash, cannot connect now), lock not available, query canceled.
_PG_UNAVAILABLE_CLASSES = ("08", "53", "57")
_PG_DISK_FULL = "53100"


@dataclass(frozen=True)
class Unavailable:
    """How the host answers one unavailability: status, envelope code and message, Retry-After."""

    status: int
    code: str
    message: str
    retry_after: int
    cause: str  # for the log line: the failure's class and code, never its message

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


def unavailability(exc: BaseException) -> Unavailable | None:
    """What `exc` means to the caller when it is an unavailability of the database; None otherwise."""
    if isinstance(exc, sa.exc.TimeoutError):
        return _busy("pool", "All database connections are in use; retry shortly.")
    if not isinstance(exc, sa.exc.DBAPIError):
        return None
    orig = exc.orig
    if isinstance(orig, sqlite3.Error):
        return _sqlite(exc, orig)
    sqlstate = getattr(orig, "sqlstate", None)
    cause = f"{type(orig).__name__} {sqlstate or '-'}"
    if sqlstate == _PG_DISK_FULL:
        return _storage_full(cause)
    if is_lock_timeout(exc):
        return _busy(cause, "A lock this request needs is held too long; retry shortly.")
    if exc.connection_invalidated or isinstance(exc, sa.exc.InterfaceError):
        return _lost(cause)
    if isinstance(exc, sa.exc.OperationalError) and (
        sqlstate is None or sqlstate.startswith(_PG_UNAVAILABLE_CLASSES)
    ):
        return _lost(cause)
    return None


def _sqlite(exc: sa.exc.DBAPIError, orig: sqlite3.Error) -> Unavailable | None:
    code = getattr(orig, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    cause = f"sqlite {getattr(orig, 'sqlite_errorname', None) or type(orig).__name__}"
    if primary == _SQLITE_FULL or "database or disk is full" in str(orig):
        return _storage_full(cause)
    if is_lock_timeout(exc):
        return _busy(cause, "The database is busy with another writer; retry shortly.")
    if primary in _SQLITE_UNAVAILABLE:
        return _lost(cause)
    return None


def _busy(cause: str, message: str) -> Unavailable:
    return Unavailable(503, "service_unavailable", message, 1, cause)


def _lost(cause: str) -> Unavailable:
    return Unavailable(503, "service_unavailable", "The database is unavailable; retry shortly.", 2, cause)


def _storage_full(cause: str) -> Unavailable:
    return Unavailable(507, "insufficient_storage", "The host's storage is full; retry later.", 30, cause)
