"""The interop matrix: one row per result bundle, in the columns of OpenWOP's INTEROP-MATRIX.md, as
Markdown and as one self-contained HTML file; and the `matrix`, `diff` and `badge` commands.

Why a matrix from bundles and not from a run: the matrix is the published claim ("this host, this
suite, these profiles"), and a claim a reader can check must rest on the evidence file alone. Every
cell is read from the bundle; nothing is re-graded here.

The columns (OpenWOP's, with this suite's outcomes):

    Host                 implementation name@version, URL (or "embedded"), `host.build` when present
    Suite and flags      suite name@version (and commit), the options that change grading
    Advertised profiles  the graded profiles whose rows were not all UNSUPPORTED/NOT-RUN
    Discovery            SHA-256 of the discovery document (first 12 hex digits)
    pass / fail / blocked / inapplicable / skipped
                         the bundle's requirement rows, each counted once: pass = PASS and WARN (a
                         SHOULD missed; shown as "(n warn)"), fail = FAIL, ERROR and BASELINED (a
                         known failure is still a failure), blocked = BLOCKED, inapplicable =
                         UNSUPPORTED, skipped = DISABLED and NOT-RUN (nothing was observed)
    Bundle               file name, its digest (`bundleSha256`, checked against the bundle, else the
                         SHA-256 of the file) and the signing key id when signed
    Evidence tier        the bundle's own `evidenceTier` (self | steward | independent), else "self":
                         whoever ran the suite cut the bundle, and nothing in it attests otherwise
    Certified            see `certified`
    one cell per profile the profile's verdict (conformant, partial, not certifiable, inapplicable)
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rfc8785

from conformance import signed_view
from conformance.provenance import DIGEST_FIELD
from conformance.provenance import bundle_digest as recompute_digest
from conformance.requirements import GRADED_PROFILES
from conformance.secrecy import scrub

EXIT_OK = 0
EXIT_USAGE = 4
DIGEST_SHOWN = 12
HEADLINE_CERTIFIES = "CONFORMING"
CONFORMING_OUTCOMES = frozenset({"PASS", "WARN", "UNSUPPORTED"})  # what rows a CONFORMING run can have
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


class BundleError(Exception):
    """A file given as a bundle is unreadable or not a result bundle: a usage error (exit 4)."""


@dataclass
class Bundle:
    """A result bundle as read from disk, with what the matrix needs about the file itself."""

    path: Path
    data: dict[str, Any]
    file_sha256: str = field(default="")

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.data.get("requirements") or []

    @property
    def verdict(self) -> dict[str, Any]:
        return self.data.get("verdict") or {}


def load_bundle(path: str | Path, public_keys: Iterable[str] = ()) -> Bundle:
    """Read a bundle; the two fields every view needs (rows and verdict) must be there and typed. A
    signed certification bundle v3 is read through conformance/signed_view.py: verified against
    `public_keys` (PEM or raw base64 texts), and certified only when one of them checks it."""
    source = Path(path)
    try:
        raw = source.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise BundleError(f"{source}: not a readable JSON file ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise BundleError(f"{source}: not a result bundle (a JSON object is expected)")
    if signed_view.is_v3(data):
        data = signed_view.native_view(data, signed_view.verified_problems(data, public_keys))
    rows, verdict = data.get("requirements"), data.get("verdict")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise BundleError(f"{source}: not a result bundle (no `requirements` rows with ids)")
    if not isinstance(verdict, dict):
        raise BundleError(f"{source}: not a result bundle (no `verdict` object)")
    return Bundle(source, data, hashlib.sha256(raw).hexdigest())


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


def flags(bundle: Bundle) -> list[str]:
    """The options that change what was graded or how strictly, as command-line flags."""
    options = bundle.data.get("options") or {}
    selection = bundle.data.get("selection") or {}
    shown = ["--require-behavior"] if options.get("requireBehavior") else []
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


def digest_holds(bundle: Bundle) -> bool | None:
    """Whether `bundleSha256` is the digest of the rest of the bundle (None: the bundle has none).
    Why check it here: an edited verdict in a bundle that still carries its old digest must not be
    shown as a certificate."""
    own = bundle.data.get(DIGEST_FIELD)
    if not own:
        return None
    try:
        return own == recompute_digest(bundle.data)
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return False


def signature(bundle: Bundle) -> dict[str, Any] | None:
    """The signature block; None for an unsigned bundle (no `signature` key, or null). A block that is
    not an object reads as empty, so that it cannot certify."""
    block = bundle.data.get("signature")
    if block is None:
        return None
    return block if isinstance(block, dict) else {}


def signature_value(block: dict[str, Any]) -> str | None:
    """The signature bytes (base64) of a signature block: v3 calls the field `sig`."""
    for key in ("sig", "signature", "value"):
        if isinstance(block.get(key), str) and block[key]:
            return block[key]
    return None


def signing_key(bundle: Bundle) -> str | None:
    block = signature(bundle)
    return str(block.get("keyId")) if block and block.get("keyId") else None


def evidence_tier(bundle: Bundle) -> str:
    return str(bundle.data.get("evidenceTier") or DEFAULT_TIER)


def certification(bundle: Bundle) -> tuple[bool, str]:
    """(certified, why not): a bundle is certified exactly when all of these hold:

    - `verdict.certifiable` is true and `verdict.headline` is CONFORMING, so no PARTIAL, BASELINED,
      INCOMPLETE or NONCONFORMING run ever certifies, whatever `certifiable` says;
    - `selection.partial` is not true (a run that graded part of its scope proves nothing of the rest);
    - every row is PASS, WARN or UNSUPPORTED, as a CONFORMING headline implies (conformance/headline.py),
      so a bundle without a digest whose headline was edited does not certify either;
    - when the bundle carries `bundleSha256`, it is the digest of the rest of the bundle (`digest_holds`);
    - when the bundle has a `signature` key at all, it is an object carrying a non-empty signature
      value (`sig`, as OpenWOP's v3 names it; `signature` or `value` are read too). The signature is
      NOT verified here: that needs the host's public key and is the job of `verify`; the matrix
      only refuses a bundle that claims to be signed and is not.
    """
    verdict = bundle.verdict
    headline = verdict.get("headline")
    if headline != HEADLINE_CERTIFIES:
        return False, str(headline or "no headline")
    if verdict.get("certifiable") is not True:
        return False, "verdict not certifiable"
    if (bundle.data.get("selection") or {}).get("partial"):
        return False, "partial run"
    against = next((r for r in bundle.rows if r.get("outcome") not in CONFORMING_OUTCOMES), None)
    if against is not None:
        return False, f"rows disagree with the headline ({against['id']} is {against.get('outcome')})"
    if digest_holds(bundle) is False:
        return False, f"{DIGEST_FIELD} does not match the bundle"
    block = signature(bundle)
    if block is not None and not signature_value(block):
        return False, "signature block without a signature"
    return True, ""


def certified(bundle: Bundle) -> bool:
    """See `certification`."""
    return certification(bundle)[0]


def certified_profiles(bundle: Bundle) -> list[str]:
    """The advertised profiles that are conformant in a certified bundle (none otherwise)."""
    if not certified(bundle):
        return []
    verdicts = profile_verdicts(bundle)
    return [p for p in advertised_profiles(bundle) if verdicts[p].get("verdict") == "conformant"]


def profile_names(bundles: Iterable[Bundle]) -> list[str]:
    """The graded profiles in registry order, then any other a bundle names, in order of appearance."""
    seen = [name for b in bundles for name in profile_verdicts(b)]
    return [p for p in GRADED_PROFILES if p in seen] + list(
        dict.fromkeys(p for p in seen if p not in GRADED_PROFILES)
    )


def profile_cell(bundle: Bundle, profile: str) -> tuple[str, str]:
    """(text, verdict class) of one profile cell: the verdict, and the first ids it lists (the failing
    ones when not certifiable, else the unobserved ones); "certified" in a certified bundle."""
    entry = profile_verdicts(bundle).get(profile)
    if entry is None:
        return "not graded", "none"
    verdict = str(entry.get("verdict") or "unknown")
    listed = entry.get("gaps") or []
    if profile in certified_profiles(bundle):
        return "certified", "certified"
    return verdict + (f": {_first(listed)}" if listed else ""), verdict.replace(" ", "-")


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
    holds = digest_holds(bundle)
    parts += [] if holds is None else [("text", " (verified)" if holds else " (DOES NOT MATCH)")]
    parts += [("text", ", signed "), ("code", key)] if key else [("text", ", unsigned")]
    return Cell(parts, title=digest)


def _certified_cell(bundle: Bundle) -> Cell:
    ok, why = certification(bundle)
    if not ok:
        return Cell([("text", f"no: {why}")], css="not-certified")
    held = " · ".join(certified_profiles(bundle)) or "no profile advertised (discovery and common rows only)"
    return Cell([("strong", "yes"), ("text", f": {held}")], css="certified")


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
    "**Certified**: the verdict is CONFORMING and certifiable, the run was not partial, its "
    "`bundleSha256`, when present, matches it, and a signature block, when there is one, carries a "
    "signature (its key is not checked here). A partial, baselined or incomplete run is never certified.",
    "**pass / fail / blocked / inapplicable / skipped** count requirement rows: pass = PASS and WARN, "
    "fail = FAIL, ERROR and BASELINED, blocked = BLOCKED, inapplicable = UNSUPPORTED (the host does not "
    "advertise it; not a failure), skipped = DISABLED and NOT-RUN.",
    "**Evidence tier** is the bundle's own field; `self` when absent: whoever ran the suite cut the bundle.",
    "**Profile cells**: certified, conformant, partial (advertised but not all observed), not certifiable "
    "(a failure or a partial run), inapplicable (not advertised); the gap ids are in the bundle.",
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
.partial{background:#fff8c5}.not-certifiable,.not-certified{background:#ffebe9}
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


# -- the commands ----------------------------------------------------------------------------------


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Register `matrix combine`, `diff` and `badge` on the CLI's sub-commands; each sets `handler`,
    a function of the parsed arguments returning the exit code."""
    from conformance import badges, bundle_diff  # they import this module: registered here, not above

    matrix = subparsers.add_parser(
        "matrix",
        help="Combine result bundles into an interop matrix (Markdown, and HTML).",
        description="Combine result bundles into an interop matrix: one row per bundle, one cell per "
        "profile.",
    )
    matrix.set_defaults(handler=lambda args: _usage(matrix))
    actions = matrix.add_subparsers(dest="matrix_command", metavar="COMMAND")
    combine = actions.add_parser(
        "combine",
        help="Write the matrix of these bundles as Markdown (and as one HTML file).",
        description="Write the matrix of these bundles as Markdown (and, with --html, as one HTML file).",
    )
    combine.add_argument("bundles", nargs="+", type=Path, metavar="BUNDLE", help="Result bundle JSON files.")
    combine.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.md", help="Markdown file.")
    combine.add_argument("--html", type=Path, metavar="OUT.html", help="Also write a single-file HTML view.")
    combine.add_argument(
        "--title", default="Interop matrix", help="The page title. [default: Interop matrix]"
    )
    combine.add_argument(
        "--pubkey",
        action="append",
        default=[],
        type=Path,
        metavar="KEY.pub.pem",
        help="A public key signed v3 bundles are checked against (repeatable); a signed bundle no key "
        "checks is never certified.",
    )
    combine.set_defaults(handler=combine_command)
    bundle_diff.add_command(subparsers)
    badges.add_command(subparsers)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    return EXIT_USAGE


def combine_command(args: argparse.Namespace) -> int:
    """`matrix combine`: 0 when written, 4 when a file is not a bundle."""
    try:
        keys = [key.read_text(encoding="utf-8") for key in args.pubkey]
    except OSError as exc:
        print(f"matrix: error: cannot read a --pubkey file ({exc.strerror})", file=sys.stderr)
        return EXIT_USAGE
    bundles = [load_bundle(path, keys) for path in args.bundles]  # BundleError: said by the CLI
    write_text(args.output, render_markdown(bundles, args.title))
    print(f"matrix: {len(bundles)} bundles -> {args.output}")
    if args.html:
        write_text(args.html, render_html(bundles, args.title))
        print(f"matrix: HTML view -> {args.html}")
    return EXIT_OK


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
