"""`badge BUNDLE -o DIR`: shields.io endpoint JSON for a host's headline and for each of its profiles.

Why files and not a service: shields.io's endpoint badge reads any JSON at a public URL
(`{"schemaVersion": 1, "label", "message", "color"}`), so a host publishes its badges next to its
bundle (GitHub Pages, a release asset) and nothing runs on our side. A badge says what the matrix
cell says, from the same functions: "certified" only for a certified bundle (conformance/matrix.py:
`certification`), so a partial, baselined or incomplete run never shows one.

Files, in DIR: `<host>.json` (the headline) and `<host>-<profile>.json`, where `<host>` is the host's
name@version (or `--name`) made safe for a file name, so badges of several hosts can share a folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conformance.certify.bundles import Bundle
from conformance.certify.matrix import host_build, host_name, profile_cell, profile_names, write_text
from conformance.secrecy import scrub

SCHEMA_VERSION = 1
LABEL = "openwop memory"
MESSAGE_LIMIT = 40
STATUS_COLOURS = {
    "certified": "brightgreen",
    "not certified": "red",
    "rejected": "red",
    "unprovable": "yellow",
    "self-declared": "lightgrey",
}
PROFILE_COLOURS = {
    "certified": "brightgreen",
    "self-declared": "lightgrey",
    "unprovable": "yellow",
    "rejected": "red",
    "not-certified": "red",
    "partial": "yellow",
    "not-certifiable": "red",
    "inapplicable": "lightgrey",
    "none": "lightgrey",
}


def endpoint(label: str, message: str, color: str) -> dict[str, Any]:
    """One shields.io endpoint document; label and message folded to one short line."""
    fold = " ".join(message.split())
    shown = fold if len(fold) <= MESSAGE_LIMIT else fold[: MESSAGE_LIMIT - 1] + "…"
    return {
        "schemaVersion": SCHEMA_VERSION,
        "label": " ".join(label.split()),
        "message": shown,
        "color": color,
    }


def headline_badge(bundle: Bundle) -> dict[str, Any]:
    """The bundle's status ("certified" only when certified); a self-declared result bundle adds its
    own headline ("self-declared conforming")."""
    status = bundle.status
    message = status
    if status == "self-declared" and not bundle.signed:
        message = f"self-declared {str(bundle.verdict.get('headline') or 'unknown').lower()}"
    return endpoint(LABEL, message, STATUS_COLOURS.get(status, "lightgrey"))


def profile_badge(bundle: Bundle, profile: str) -> dict[str, Any]:
    """The profile's matrix cell without its gap list (a badge is one word or two)."""
    text, css = profile_cell(bundle, profile)
    message = text.split(":", 1)[0]
    return endpoint(f"{LABEL} {profile}", message, PROFILE_COLOURS.get(css, "lightgrey"))


def slug(text: str) -> str:
    """A file-name-safe form of host or profile text: letters, digits, inner dots and hyphens only, so
    no separator, no `..` and no hidden file whatever the bundle says."""
    cleaned = re.sub(r"[^a-z0-9.]+", "-", text.lower())
    cleaned = re.sub(r"\.{2,}", ".", cleaned).strip(".-")
    return cleaned[:80].strip(".-") or "host"


def badges(bundle: Bundle, name: str | None = None) -> dict[str, dict[str, Any]]:
    """File name -> endpoint JSON: the headline, then one per profile the bundle has a verdict for.
    The file names start with the host's name@version and, when the bundle records one, its build
    (`--host-build`, first 12 characters of its id), so two builds of one host can share a folder;
    `name` replaces all of that."""
    build = host_build(bundle)
    default = host_name(bundle) + (f"-{build.rsplit(':', 1)[-1][:12]}" if build else "")
    host = slug(name or default)
    found = {f"{host}.json": headline_badge(bundle)}
    for profile in profile_names([bundle]):
        found[f"{host}-{slug(profile)}.json"] = profile_badge(bundle, profile)
    return found


def write_badges(bundle: Bundle, folder: Path, name: str | None = None) -> list[Path]:
    written = []
    for file_name, document in badges(bundle, name).items():
        target = folder / file_name
        write_text(target, scrub(json.dumps(document, ensure_ascii=False)) + "\n")
        written.append(target)
    return written
