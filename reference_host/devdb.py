"""Throwaway PostgreSQL for the project's tests and benchmarks (never used by the host at run time).

`initdb` and `pg_ctl` refuse to run as root, so as root the cluster runs as the `postgres` user. The
data directory lives under a fresh temp folder and is removed on exit.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


def pg_bin() -> Path | None:
    """The newest PostgreSQL server binaries folder on this machine, if any."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
    found = [c for c in candidates if (c / "initdb").exists()]
    if found:
        return found[-1]
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


@contextmanager
def throwaway_cluster(prefix: str = "openwop-pg-") -> Iterator[str]:
    """Start a local cluster on a random loopback port; yields its server URL; removes it on exit."""
    binaries = pg_bin()
    if binaries is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb) found")
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    data = root / "pgdata"
    port = 20000 + secrets.randbelow(20000)
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def run(*args: str, check: bool = True) -> None:
        subprocess.run([*as_postgres, *args], check=check, capture_output=True)

    try:
        if as_postgres:
            subprocess.run(["install", "-d", "-o", "postgres", "-g", "postgres", str(data)], check=True)
        run(
            str(binaries / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-instructions",
        )
        options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(data / "log"), "-w", "-o", options, "start")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop", check=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def create_database(server_url: str, prefix: str = "openwop_test_") -> str:
    """CREATE DATABASE with a unique name on the server; returns its URL (query string kept)."""
    import psycopg

    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
