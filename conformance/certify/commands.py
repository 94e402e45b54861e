"""The maintainers' commands: `keygen`, `export-v3`, `sign`, `verify`, `matrix combine`, `diff` and
`badge`, registered on the suite's CLI (conformance/cli.py) from this one place.

Why one module: every command that shows a bundle takes the same trust options and decides
"certified" the same way (conformance/certify/trust.py), so they are declared together; the
renderers (matrix.py, badges.py, diff.py) know nothing of argparse and import no command.

Each handler returns the exit code: 0 ok, 1 a verification failed or a regression was found, 4 a
usage error (an unreadable file, a bad key). A file given as a bundle that is not one raises
BundleError, which the CLI says in one line (exit 4).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.certify import keys, rules, trust, v3
from conformance.certify.badges import write_badges
from conformance.certify.bundles import load_bundle
from conformance.certify.canonical import NotIJSON, read_json_file
from conformance.certify.diff import diff_command
from conformance.certify.matrix import render_html, render_markdown, write_text

EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 4


class CommandError(ValueError):
    """A usage error of a maintainer's command: said in one line, exit 4."""


def add_commands(subparsers: Any) -> None:
    """Register every maintainer's command; each sets `handler` to a function of the parsed arguments."""
    keygen = subparsers.add_parser(
        "keygen",
        help="Make an Ed25519 key pair for signing v3 certification bundles.",
        description="Write KEY_ID.key.pem (PKCS#8, mode 0600) and KEY_ID.pub.pem (SPKI) into DIR, and "
        "print the key id and the public key as discovery publishes it (signingKeys[].publicKey). "
        "Needs the `certify` extra.",
    )
    keygen.add_argument("--out-dir", type=Path, default=Path("."), metavar="DIR")
    keygen.add_argument("--key-id", metavar="ID", help="[default: derived from the public key]")
    keygen.set_defaults(handler=keygen_command)

    export = subparsers.add_parser(
        "export-v3",
        help="Export a result bundle as an unsigned OpenWOP certification bundle v3.",
        description="Write the v3 shape of a result bundle, without a signature (see `sign`).",
    )
    _export_options(export)
    export.set_defaults(handler=export_command)

    sign = subparsers.add_parser(
        "sign",
        help="Sign a v3 bundle (or export and sign a result bundle) with an Ed25519 key.",
        description="Add host.signingKeyId and the Ed25519 signature over witnessSha256, host.build, "
        "suite.version and discovery.sha256. A result bundle is exported to v3 first.",
    )
    _export_options(sign)
    sign.add_argument("--key", type=Path, required=True, metavar="KEY.pem", help="PKCS#8 PEM private key.")
    sign.add_argument(
        "--key-id", metavar="ID", help="[default: the file's KEY_ID.key.pem name, else derived]"
    )
    sign.set_defaults(handler=sign_command)

    verify = subparsers.add_parser(
        "verify",
        help="Verify a v3 certification bundle: its rules, and a signature under a key you trust.",
        description="Print every reason the bundle is not a certificate, one a line, then its status: "
        "CERTIFIED (exit 0), or NOT CERTIFIED, REJECTED, UNPROVABLE, SELF-DECLARED (exit 1). A "
        "signature certifies only under a key you trust: --pubkey, --keyring, a --host-discovery "
        "document, or the key the host published in the bundle's captured discovery document.",
    )
    verify.add_argument("bundle", type=Path, metavar="BUNDLE.json")
    _trust_options(verify)
    verify.add_argument("--verifier-pubkey", type=Path, metavar="PUB", help="For an independent-tier claim.")
    verify.add_argument(
        "--integrity-only",
        action="store_true",
        help="Check only that nothing was altered (exit 0 when nothing is broken), not who signed it: "
        "never a certificate.",
    )
    verify.set_defaults(handler=verify_command)

    matrix = subparsers.add_parser(
        "matrix",
        help="Combine bundles into an interop matrix (Markdown, and HTML).",
        description="Combine result and certification bundles into an interop matrix: one row per "
        "bundle, one cell per profile.",
    )
    matrix.set_defaults(handler=lambda args: _usage(matrix))
    actions = matrix.add_subparsers(dest="matrix_command", metavar="COMMAND")
    combine = actions.add_parser(
        "combine",
        help="Write the matrix of these bundles as Markdown (and as one HTML file).",
        description="Write the matrix of these bundles as Markdown (and, with --html, as one HTML file). "
        "A row is certified only for a signed bundle that verifies under a key you trust.",
    )
    combine.add_argument("bundles", nargs="+", type=Path, metavar="BUNDLE", help="Bundle JSON files.")
    combine.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.md", help="Markdown file.")
    combine.add_argument("--html", type=Path, metavar="OUT.html", help="Also write a single-file HTML view.")
    combine.add_argument(
        "--title", default="Interop matrix", help="The page title. [default: Interop matrix]"
    )
    _trust_options(combine)
    combine.set_defaults(handler=combine_command)

    diff = subparsers.add_parser(
        "diff",
        help="Compare two bundles requirement by requirement; exit 1 on a regression.",
        description="Compare two bundles requirement by requirement, regressions first. Exit 1 when B "
        "is worse than A on any requirement, or no longer grades one that A graded. Each side's "
        "status (certified, self-declared, …) is said for the keys you trust.",
    )
    diff.add_argument("a", type=Path, metavar="A.json", help="The earlier (reference) bundle.")
    diff.add_argument("b", type=Path, metavar="B.json", help="The later bundle.")
    diff.add_argument("--json", dest="as_json", action="store_true", help="Print the diff as JSON.")
    _trust_options(diff)
    diff.set_defaults(handler=lambda args: diff_command(args, _trust_of(args)))

    badge = subparsers.add_parser(
        "badge",
        help="Write shields.io endpoint JSON for a bundle: its status and one per profile.",
        description="Write shields.io endpoint JSON files for a bundle into DIR: <host>.json (its "
        'status) and <host>-<profile>.json for each profile. "certified" only for a signed bundle '
        "that verifies under a key you trust.",
    )
    badge.add_argument("bundle", type=Path, metavar="BUNDLE", help="A result or certification bundle.")
    badge.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="Folder to write to.")
    badge.add_argument("--name", help="The file-name stem instead of the host's name@version.")
    _trust_options(badge)
    badge.set_defaults(handler=badge_command)


def _export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", type=Path, metavar="BUNDLE.json")
    parser.add_argument("--out", type=Path, metavar="PATH", help="[default: standard output]")
    parser.add_argument("--host-build", metavar="KIND:ID", help="[default: the bundle's host.build]")
    parser.add_argument("--evidence-tier", choices=v3.EVIDENCE_TIERS, default="self")
    parser.add_argument(
        "--ids",
        choices=v3.ID_SCHEMES,
        default="ours",
        help="Row ids: the suite's own (openwop.requirement.<id>), or OpenWOP's own ids where the "
        "crosswalk grades every assertion of one (fixtures/openwop-crosswalk.yaml). [default: ours]",
    )


def _trust_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pubkey",
        action="append",
        default=[],
        type=Path,
        metavar="PUB",
        help="A public key you trust (PEM, or raw base64); repeatable.",
    )
    parser.add_argument(
        "--keyring",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="JSON list of signingKeys[] entries ({keyId, publicKey}) you trust, or a discovery "
        "document holding one; repeatable.",
    )
    parser.add_argument(
        "--host-discovery",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="A discovery document you fetched from the host: a bundle's key is looked up in its "
        "signingKeys[]; repeatable.",
    )


def _trust_of(args: argparse.Namespace) -> trust.Trust:
    try:
        return trust.load_trust(args.pubkey, args.keyring, args.host_discovery)
    except (trust.TrustFileError, keys.SigningUnavailable) as exc:
        raise CommandError(str(exc)) from None


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    return EXIT_USAGE


def _read_json(path: Path) -> Any:
    try:
        return read_json_file(path)
    except (OSError, NotIJSON) as exc:
        raise v3.ExportError(f"{path}: cannot read a JSON bundle ({exc})") from exc


def _write(document: Mapping[str, Any], out: Path | None) -> None:
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _v3_of(args: argparse.Namespace) -> dict[str, Any]:
    document = _read_json(args.bundle)
    if isinstance(document, Mapping) and document.get("bundleVersion") == v3.BUNDLE_VERSION:
        return dict(document)
    return v3.export_v3(document, build=args.host_build, evidence_tier=args.evidence_tier, ids=args.ids)


def _key_id_from(path: Path) -> str | None:
    """The key id `keygen` put in the file name (`ID.key.pem`), so that sign needs no --key-id."""
    name = path.name
    return name.removesuffix(".key.pem") if name.endswith(".key.pem") else None


def keygen_command(args: argparse.Namespace) -> int:
    """`keygen`: a key pair into --out-dir (the private key is never printed)."""
    try:
        pair = keys.generate(args.key_id)
        private_path, public_path = keys.write_key_pair(pair, args.out_dir)
    except (keys.SigningUnavailable, keys.KeyFormatError, OSError) as exc:
        return _error(str(exc))
    print(f"key id: {pair.key_id}")
    print(f"private key: {private_path}")
    print(f"public key: {public_path}")
    print(f"public key (discovery's signingKeys[].publicKey): {keys.published_form(pair.public_pem)}")
    return EXIT_OK


def export_command(args: argparse.Namespace) -> int:
    """`export-v3`: the unsigned v3 bundle of a result bundle."""
    try:
        document = _read_json(args.bundle)
        _write(
            v3.export_v3(document, build=args.host_build, evidence_tier=args.evidence_tier, ids=args.ids),
            args.out,
        )
    except v3.ExportError as exc:
        return _error(str(exc))
    return EXIT_OK


def sign_command(args: argparse.Namespace) -> int:
    """`sign`: export when needed, sign, and refuse to write a bundle that breaks a rule of its own
    (the emitter's self-check; not certifying is not a reason to refuse)."""
    try:
        private_pem = args.key.read_text(encoding="ascii")
        key_id = args.key_id or _key_id_from(args.key)
        signed = v3.sign_v3(_v3_of(args), private_pem, key_id)
        public_pem = keys.public_key_of(private_pem)
    except (v3.ExportError, keys.SigningUnavailable, keys.KeyFormatError, OSError, UnicodeError) as exc:
        return _error(str(exc))
    defects = [p for p in rules.check(signed) if p.kind not in rules.NOT_CERTIFYING]
    signer = trust.TrustedKey(public_pem, "the signing key", (signed["signature"]["keyId"],))
    own = trust.attribute(signed, trust.Trust((signer,)))
    if own.state != "attributed":
        defects.append(rules.Problem(own.kind or "signature-invalid", own.detail))
    if defects:
        print("error: the signed bundle fails its own verification (an export defect):", file=sys.stderr)
        for problem in defects:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_REJECTED
    _write(signed, args.out)
    where = f" -> {args.out}" if args.out else ""
    print(f"sign: signed with key {signed['signature']['keyId']}{where}", file=sys.stderr)
    return EXIT_OK


def verify_command(args: argparse.Namespace) -> int:
    """`verify`: every reason on its own line, then the status line; exit 0 only when certified (or,
    with --integrity-only, when nothing is broken)."""
    reader = _trust_of(args)
    try:
        verifier_key = args.verifier_pubkey.read_text(encoding="ascii") if args.verifier_pubkey else None
    except (OSError, UnicodeError) as exc:
        return _error(f"--verifier-pubkey: {exc}")
    try:
        bundle = read_json_file(args.bundle)
    except OSError as exc:
        return _error(f"{args.bundle}: cannot read it ({exc.strerror})")
    except NotIJSON as exc:
        print(f"[not-i-json] {exc}: a signer MUST refuse it and a verifier MUST fail it")
        print(f"REJECTED: {args.bundle}: not an I-JSON document")
        return EXIT_REJECTED
    if isinstance(bundle, Mapping) and "requirements" in bundle and "witnessSha256" not in bundle:
        print("an unsigned result bundle: export and sign it first (`sign BUNDLE --key KEY.pem`)")
        print(f"SELF-DECLARED: {args.bundle}")
        return EXIT_REJECTED
    if not isinstance(bundle, Mapping):
        print("[not-v3] the document is not a JSON object")
        print(f"REJECTED: {args.bundle}")
        return EXIT_REJECTED
    assessment = trust.assess_v3(bundle, reader, verifier_public_key=verifier_key)
    for line in assessment.reasons if assessment.status != trust.CERTIFIED else ():
        print(line)
    return _status_line(args, assessment)


def _status_line(args: argparse.Namespace, assessment: trust.Assessment) -> int:
    status = assessment.status
    if status == trust.CERTIFIED:
        profiles = ", ".join(assessment.certified_profiles)
        print(f"CERTIFIED: {args.bundle}: certifies {profiles}; {assessment.reasons[0]}")
        return EXIT_OK
    if args.integrity_only and status in (trust.NOT_CERTIFIED, trust.UNPROVABLE):
        attribution = assessment.attribution
        checked = (
            f"the signature verifies under {attribution.detail}"
            if attribution and attribution.state == "attributed"
            else "the signature was NOT checked: no key to check it under (pass --pubkey or --host-discovery)"
        )
        print(f"INTEGRITY ONLY: {args.bundle}: nothing in it is broken; {checked}; not a certificate")
        return EXIT_OK
    print(f"{status.upper()}: {args.bundle}: {len(assessment.reasons)} reason(s) above")
    return EXIT_REJECTED


def combine_command(args: argparse.Namespace) -> int:
    """`matrix combine`: 0 when written, 4 when a file is not a bundle or a key file is bad."""
    reader = _trust_of(args)
    bundles = [load_bundle(path, reader) for path in args.bundles]  # BundleError: said by the CLI
    write_text(args.output, render_markdown(bundles, args.title))
    print(f"matrix: {len(bundles)} bundles -> {args.output}")
    if args.html:
        write_text(args.html, render_html(bundles, args.title))
        print(f"matrix: HTML view -> {args.html}")
    return EXIT_OK


def badge_command(args: argparse.Namespace) -> int:
    """0 when written, 4 when the file is not a bundle (BundleError, said by the CLI) or DIR is not a
    folder."""
    reader = _trust_of(args)
    bundle = load_bundle(args.bundle, reader)
    if args.output.exists() and not args.output.is_dir():
        print(f"badge: error: {args.output} exists and is not a folder", file=sys.stderr)
        return EXIT_USAGE
    for path in write_badges(bundle, args.output, args.name):
        print(f"badge: {path}")
    return EXIT_OK
