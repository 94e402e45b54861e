"""The interop matrix: one row per bundle, in the columns of OpenWOP's INTEROP-MATRIX.md, as Markdown
and as one self-contained HTML file.

Why a matrix from bundles and not from a run: the matrix is the published claim ("this host, this
suite, these profiles"), and a claim a reader can check must rest on the evidence file alone. Every
cell is read from the bundle; nothing is re-graded here. What a row may be called (certified, not
certified, rejected, unprovable, self-declared) is decided once, in conformance/certify/trust.py, for
the keys the maintainer trusts; a field no signature covers is marked unauthenticated.

The columns (OpenWOP's, with this suite's outcomes):

    Host                 implementation name@version, URL (or "embedded"), `host.build` when present
    Suite and flags      suite name@version (and commit), the OpenWOP major graded, the options that
                         change grading
    Advertised profiles  the graded profiles whose rows were not all UNSUPPORTED/NOT-RUN
    Discovery            SHA-256 of the discovery document (first 12 hex digits)
    pass / fail / blocked / inapplicable / skipped
                         the bundle's requirement rows, each counted once: pass = PASS and WARN (a
                         SHOULD missed; shown as "(n warn)"), fail = FAIL, ERROR and BASELINED (a
                         known failure is still a failure), blocked = BLOCKED, inapplicable =
                         UNSUPPORTED, skipped = DISABLED and NOT-RUN (nothing was observed)
    Bundle               file name, its digest (`bundleSha256`, checked against the bundle, else the
                         SHA-256 of the file) and the signing key id when signed
    Evidence tier        the signed identity row's tier (self | steward), else "self": whoever ran the
                         suite cut the bundle, and nothing in it attests otherwise
    Certified            the bundle's status and why (conformance/certify/trust.py)
    one cell per profile "certified" only in a certified bundle; otherwise the verdict its rows give
                         (conformant, partial, not certifiable, inapplicable), said to be self-declared
                         or unproven when the bundle is not certified
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.certify.bundles import Bundle, digest_holds
from conformance.provenance import DIGEST_FIELD
from conformance.requirements import GRADED_PROFILES
from conformance.secrecy import scrub

EXIT_OK = 0
EXIT_USAGE = 4
DIGEST_SHOWN = 12
DEFAULT_TIER = "self"
# Rows -> the matrix's five counts; every outcome lands in exactly one.
COUNTED = {
    "pass": ("PASS", "WARN"),
    "fail": ("FAIL", "ERROR", "BASELINED"),
    "blocked": ("BLOCKED",),
    "inapplicable": ("UNSUPPORTED",),
    "skipped": ("DISABLED", "NOT-RUN"),
}
COLUMNS = (
    "Host",
    "Suite and flags",
    "Advertised profiles",
    "Discovery",
    "pass / fail / blocked / inapplicable / skipped",
    "Bundle",
    "Evidence tier",
    "Certified",
)


# -- what each cell says ---------------------------------------------------------------------------


def host_name(bundle: Bundle) -> str:
    """`name@version` of the implementation the host's discovery names, else its URL, else the file."""
    host = bundle.data.get("host") or {}
    implementation = host.get("implementation") or {}
    name = implementation.get("name")
    if name:
        version = implementation.get("version")
        return f"{name}@{version}" if version else str(name)
    return str(host.get("url") or bundle.path.stem)


def host_build(bundle: Bundle) -> str | None:
    """`host.build` (from --host-build) as text: a string, or v3's {kind, id} as `kind:id`."""
    build = (bundle.data.get("host") or {}).get("build")
    if isinstance(build, dict):
        return ":".join(str(build[k]) for k in ("kind", "id") if build.get(k)) or None
    return str(build) if build else None


def host_where(bundle: Bundle) -> str:
    host = bundle.data.get("host") or {}
    return "embedded" if host.get("embedded") else str(host.get("url") or "unknown URL")


def suite_text(bundle: Bundle) -> str:
    suite = bundle.data.get("suite") or {}
    text = f"{suite.get('name', 'unknown suite')}@{suite.get('version', '?')}"
    commit = suite.get("commit")
    modified = "modified" in str(suite.get("commitSource") or "")
    return text + (f" ({str(commit)[:DIGEST_SHOWN]}{', modified' if modified else ''})" if commit else "")


def graded_major(bundle: Bundle) -> int | None:
    """The OpenWOP major the bundle graded: a result bundle's `protocolMajor`, a v3 bundle's
    `suite.targetMajor` (None for a bundle from before the suite said)."""
    major = bundle.data.get("protocolMajor", (bundle.data.get("suite") or {}).get("targetMajor"))
    return major if isinstance(major, int) and not isinstance(major, bool) else None


def flags(bundle: Bundle) -> list[str]:
    """The options that change what was graded or how strictly, as command-line flags (the OpenWOP
    major graded first, whether it was asked for or was the host's default)."""
    options = bundle.data.get("options") or {}
    selection = bundle.data.get("selection") or {}
    major = graded_major(bundle)
    shown = [f"--protocol-major {major}"] if major is not None else []
    shown += ["--require-behavior"] if options.get("requireBehavior") else []
    shown += [f"--profile {p}" for p in options.get("profiles") or []]
    shown += [f"--requirement {r}" for r in options.get("requirements") or []]
    shown += [f"--disable {rid}" for rid in sorted(options.get("disabled") or {})]
    shown += ["--baseline"] if options.get("baseline") or bundle.data.get("baseline") else []
    shown += [f"narrowed by {n}" for n in selection.get("narrowedBy") or []]
    return shown


def advertised_profiles(bundle: Bundle) -> list[str]:
    return [name for name, entry in profile_verdicts(bundle).items() if entry.get("advertised")]


def profile_verdicts(bundle: Bundle) -> dict[str, dict[str, Any]]:
    """Profile name -> its entry of `verdict.profiles`, in the bundle's order."""
    entries = bundle.verdict.get("profiles")
    return (
        {str(p.get("profile")): p for p in entries if isinstance(p, dict)}
        if isinstance(entries, list)
        else {}
    )


def counts(bundle: Bundle) -> dict[str, int]:
    """The five counts of the matrix (COUNTED), plus `warn`, the WARN rows inside `pass`."""
    found = {name: 0 for name in COUNTED} | {"warn": 0}
    for row in bundle.rows:
        outcome = row.get("outcome")
        for name, outcomes in COUNTED.items():
            if outcome in outcomes:
                found[name] += 1
        found["warn"] += outcome == "WARN"
    return found


def counts_text(bundle: Bundle) -> str:
    found = counts(bundle)
    text = " / ".join(str(found[name]) for name in COUNTED)
    return text + (f" ({found['warn']} warn)" if found["warn"] else "")


def discovery_digest(bundle: Bundle) -> str | None:
    return (bundle.data.get("discovery") or {}).get("sha256")


def bundle_digest(bundle: Bundle) -> tuple[str, str]:
    """(digest, what it is): the bundle's own `bundleSha256` when present, else the file's SHA-256."""
    own = bundle.data.get(DIGEST_FIELD)
    return (str(own), DIGEST_FIELD) if own else (bundle.file_sha256, "file sha256")


def signature(bundle: Bundle) -> dict[str, Any] | None:
    """The signature block; None for an unsigned bundle. A block that is not an object reads as empty."""
    block = bundle.data.get("signature")
    if block is None:
        return None
    return block if isinstance(block, dict) else {}


def signing_key(bundle: Bundle) -> str | None:
    block = signature(bundle)
    return str(block.get("keyId")) if block and block.get("keyId") else None


def evidence_tier(bundle: Bundle) -> str:
    return str(bundle.data.get("evidenceTier") or DEFAULT_TIER)


def certified_profiles(bundle: Bundle) -> list[str]:
    """The profiles a certified bundle certifies (none for any other status)."""
    return bundle.assessment.certified_profiles if bundle.certified else []


def profile_names(bundles: Iterable[Bundle]) -> list[str]:
    """The graded profiles in registry order, then any other a bundle names, in order of appearance."""
    seen = [name for b in bundles for name in profile_verdicts(b)]
    return [p for p in GRADED_PROFILES if p in seen] + list(
        dict.fromkeys(p for p in seen if p not in GRADED_PROFILES)
    )


def profile_cell(bundle: Bundle, profile: str) -> tuple[str, str]:
    """(text, verdict class) of one profile cell: "certified" in a certified bundle that certifies the
    profile; otherwise the verdict its rows give and its first ids (the failing ones when not
    certifiable, else the unobserved ones), qualified by the bundle's status when that is not
    certified, so no self-declared or unproven cell reads as a certificate."""
    entry = profile_verdicts(bundle).get(profile)
    if entry is None:
        return "not graded", "none"
    if profile in certified_profiles(bundle):
        return "certified", "certified"
    verdict = str(entry.get("verdict") or "unknown")
    listed = entry.get("gaps") or []
    text = verdict + (f": {_first(listed)}" if listed else "")
    if verdict == "conformant":
        return f"{verdict} ({bundle.status})", bundle.status.replace(" ", "-")
    return text, verdict.replace(" ", "-")


def _first(ids: Sequence[Any], shown: int = 2) -> str:
    names = ", ".join(str(i) for i in ids[:shown])
    return names + (f" … ({len(ids)} in all)" if len(ids) > shown else "")


# -- one row, as plain cells -----------------------------------------------------------------------


@dataclass
class Cell:
    """A cell's parts: text from the bundle is escaped by the renderer; `code` parts render as code."""

    parts: list[tuple[str, str]]  # (style, text): style in "text", "code", "strong"
    css: str = ""
    title: str = ""


def row_cells(bundle: Bundle, profiles: Sequence[str]) -> list[Cell]:
    """The cells of one bundle's row, in COLUMNS order, then one per profile."""
    cells = [
        Cell(_host_parts(bundle)),
        Cell(_suite_parts(bundle)),
        Cell([("text", " · ".join(advertised_profiles(bundle)) or "none")]),
        _discovery_cell(bundle),
        Cell([("text", counts_text(bundle))]),
        _bundle_cell(bundle),
        Cell([("code", evidence_tier(bundle))]),
        _certified_cell(bundle),
    ]
    for profile in profiles:
        text, css = profile_cell(bundle, profile)
        cells.append(Cell([("text", text)], css=css))
    return cells


def _host_parts(bundle: Bundle) -> list[tuple[str, str]]:
    parts = [("strong", host_name(bundle)), ("text", f" {host_where(bundle)}")]
    if "host" in (bundle.data.get("unauthenticated") or []):
        parts.append(("text", " (unauthenticated: outside the signature)"))
    build = host_build(bundle)
    return parts + ([("text", ", build "), ("code", build)] if build else [])


def _suite_parts(bundle: Bundle) -> list[tuple[str, str]]:
    given = flags(bundle)
    return [("code", suite_text(bundle))] + ([("text", " "), ("code", " ".join(given))] if given else [])


def _discovery_cell(bundle: Bundle) -> Cell:
    digest = discovery_digest(bundle)
    return Cell([("code", digest[:DIGEST_SHOWN])], title=digest) if digest else Cell([("text", "none")])


def _bundle_cell(bundle: Bundle) -> Cell:
    digest, kind = bundle_digest(bundle)
    key = signing_key(bundle)
    parts = [("code", bundle.path.name), ("text", f" {kind} "), ("code", digest[:DIGEST_SHOWN])]
    holds = digest_holds(bundle.data) if not bundle.signed else None
    parts += [] if holds is None else [("text", " (verified)" if holds else " (DOES NOT MATCH)")]
    parts += [("text", ", signed "), ("code", key)] if key else [("text", ", unsigned")]
    return Cell(parts, title=digest)


def _certified_cell(bundle: Bundle) -> Cell:
    status = bundle.assessment
    if bundle.certified:
        held = " · ".join(certified_profiles(bundle))
        return Cell([("strong", "yes"), ("text", f": {held}; {status.reasons[0]}")], css="certified")
    why = status.reasons[0] if status.reasons else ""
    return Cell([("text", f"no: {status.status}" + (f": {why}" if why else ""))], css="not-certified")


def headers(profiles: Sequence[str]) -> list[str]:
    return [*COLUMNS, *profiles]


# -- Markdown --------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~])")


def md_text(text: str) -> str:
    """Bundle text made inert in a GFM table cell: whitespace folded (a newline ends a row), Markdown
    punctuation backslash-escaped (a pipe splits a cell; `<` opens HTML, `[` a link)."""
    return _MD_SPECIAL.sub(r"\\\1", _fold(text))


def md_code(text: str) -> str:
    """Bundle text as inline code; a backtick in it cannot close the span, a pipe cannot split the cell."""
    folded = _fold(text).strip().replace("`", "'").replace("|", "\\|")
    return f"`{folded}`" if folded else ""


def _fold(text: str) -> str:
    """Every run of whitespace, newlines included, as one space (a newline would end the table row)."""
    return re.sub(r"\s+", " ", str(text))


def md_cell(cell: Cell) -> str:
    rendered = []
    for style, text in cell.parts:
        if style == "code":
            rendered.append(md_code(text))
        elif style == "strong":
            rendered.append(f"**{md_text(text)}**")
        else:
            rendered.append(md_text(text))
    return "".join(rendered)


def render_markdown(bundles: Sequence[Bundle], title: str = "Interop matrix") -> str:
    """The matrix as a GFM table, with a legend saying how to read it."""
    profiles = profile_names(bundles)
    head = headers(profiles)
    lines = [
        f"# {md_text(title)}",
        "",
        f"{len(bundles)} result bundle{'s' if len(bundles) != 1 else ''}, one row each. "
        "A row is a claim plus evidence: the claim is what the host advertises, the evidence the bundle.",
        "",
        "| " + " | ".join(md_text(h) for h in head) + " |",
        "| " + " | ".join("---" for _ in head) + " |",
    ]
    lines += ["| " + " | ".join(md_cell(c) for c in row_cells(b, profiles)) + " |" for b in bundles]
    lines += ["", *(f"- {line}" for line in LEGEND)]
    return scrub("\n".join(lines) + "\n")


LEGEND = (
    "**Certified**: yes only for a signed certification bundle whose signature verifies under a key "
    "the maintainer trusts (`--pubkey`, `--keyring`, a `--host-discovery` document, or the key the "
    "host published in its captured discovery document) and whose rows are intact and certify a "
    "profile. Otherwise: not certified (intact, certifies nothing), rejected (something is broken), "
    "unprovable (signed by a key nobody trusted publishes: integrity only), or self-declared "
    "(unsigned, such as a result bundle).",
    "**pass / fail / blocked / inapplicable / skipped** count requirement rows: pass = PASS and WARN, "
    "fail = FAIL, ERROR and BASELINED, blocked = BLOCKED, inapplicable = UNSUPPORTED (the host does not "
    "advertise it; not a failure), skipped = DISABLED and NOT-RUN.",
    "**Evidence tier** is the tier the signed identity row records; `self` when absent: whoever ran the "
    "suite cut the bundle.",
    "**Profile cells**: certified (in a certified bundle only); otherwise the verdict the rows give: "
    "conformant, partial (advertised but not all observed), not certifiable (a failure or a partial "
    "run), inapplicable (not advertised), with the bundle's status beside a conformant verdict that "
    "is not certified. A field marked unauthenticated lies outside every signature.",
)


# -- HTML ------------------------------------------------------------------------------------------

# Nothing loads from anywhere: no script, image or font; only the inline style below.
POLICY = "default-src 'none'; style-src 'unsafe-inline'"
CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#1b1f23}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #d0d7de;padding:.4em .6em;vertical-align:top;text-align:left}
th{background:#f6f8fa}
code{font:12px ui-monospace,monospace;background:#f6f8fa;padding:0 .2em;overflow-wrap:anywhere}
.certified{background:#dafbe1}.conformant{background:#eefbe9}
.partial,.self-declared,.unprovable{background:#fff8c5}
.not-certifiable,.not-certified,.rejected{background:#ffebe9}
.inapplicable,.none{background:#f6f8fa;color:#57606a}
li{margin:.3em 0}
"""


def html_cell(cell: Cell, tag: str = "td") -> str:
    parts = []
    for style, text in cell.parts:
        escaped = html.escape(str(text))
        parts.append(
            f"<code>{escaped}</code>"
            if style == "code"
            else f"<strong>{escaped}</strong>"
            if style == "strong"
            else escaped
        )
    css = f' class="{html.escape(cell.css)}"' if cell.css else ""
    title = f' title="{html.escape(cell.title)}"' if cell.title else ""
    return f"<{tag}{css}{title}>{''.join(parts)}</{tag}>"


def render_html(bundles: Sequence[Bundle], title: str = "Interop matrix") -> str:
    """The matrix as one HTML file: inline CSS, no script, no external resource, every text escaped."""
    profiles = profile_names(bundles)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers(profiles))
    body = "\n".join(
        "<tr>" + "".join(html_cell(c) for c in row_cells(b, profiles)) + "</tr>" for b in bundles
    )
    legend = "".join(f"<li>{_md_bold_to_html(line)}</li>" for line in LEGEND)
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>"
        f"<h1>{html.escape(title)}</h1>\n<table><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"
        f"\n<ul>{legend}</ul>\n</body></html>\n"
    )
    return scrub(page)


def _md_bold_to_html(line: str) -> str:
    """The legend is ours, written once in Markdown; its **bold** and `code` become tags."""
    escaped = html.escape(line)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
