"""Where a bundle comes from, so a maintainer can certify from it: which suite (version and commit),
which requirement registry and schemas (their SHA-256), how long the run took, which host build, and
the bundle's own digest.

Why digests of the data and not only a version: a registry or schema edited in a checkout grades
differently under the same version number; the digests say exactly which sentences and shapes a
verdict was given against. The bundle digest is SHA-256 over the RFC 8785 bytes of the bundle as
written (secrets already scrubbed) without the `bundleSha256` field itself, so anyone can recompute it.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import rfc8785

from conformance import NAME, __version__
from conformance.paths import data_path

DIGEST_FIELD = "bundleSha256"
BUILD_RECORD = ("build.json",)  # written into conformance/_data/ by the wheel build (hatch_build.py)


def suite_record() -> dict[str, Any]:
    """The suite's name, version, commit (and how the commit is known) and Python."""
    commit, source = _commit()
    return {
        "name": NAME,
        "version": __version__,
        "commit": commit,
        "commitSource": source,
        "python": platform.python_version(),
    }


@cache
def _commit() -> tuple[str | None, str | None]:
    recorded = data_path(*BUILD_RECORD)
    if recorded.is_file():
        commit = json.loads(recorded.read_text(encoding="utf-8")).get("commit")
        return commit, "wheel build" if commit else None
    checkout = Path(__file__).resolve().parent.parent
    if not (checkout / ".git").exists():
        return None, None
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    if done.returncode != 0:
        return None, None
    return done.stdout.strip(), "git checkout" + (" (modified)" if dirty.stdout.strip() else "")


@cache
def data_digests() -> dict[str, Any]:
    """SHA-256 of the requirement registry and of every schema file the suite reads."""
    schemas = data_path("schemas")
    return {
        "registrySha256": _sha256(data_path("fixtures", "requirements.yaml")),
        "crosswalkSha256": _sha256(data_path("fixtures", "openwop-crosswalk.yaml")),
        "schemasSha256": {
            str(p.relative_to(schemas)): _sha256(p) for p in sorted(schemas.rglob("*.json")) if p.is_file()
        },
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bundle_digest(bundle: dict[str, Any]) -> str:
    """SHA-256 over the RFC 8785 bytes of the bundle without its own digest field."""
    body = {k: v for k, v in bundle.items() if k != DIGEST_FIELD}
    return hashlib.sha256(rfc8785.dumps(body)).hexdigest()
