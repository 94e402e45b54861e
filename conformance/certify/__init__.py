"""Certificates: what turns a run's result bundle into evidence a maintainer can put in the interop
matrix, and what a reader of one may call it.

    canonical   RFC 8785 bytes, I-JSON refusals, UTF-16 code-unit order, strict reading of files
    keys        Ed25519 keys and signatures in OpenWOP's encodings (the `certify` extra)
    identity    the signed identity row: what a certificate displays beyond v3's four attested members
    v3          OpenWOP's certification bundle v3: export, witness digest, attestation, signing
    rules       the rules a v3 bundle is verified by (OpenWOP's kinds, then the suite's)
    trust       whose key signed it, and the status a reader may give it (certified … self-declared)
    bundles     reading any bundle for display, assessed once
    view        a v3 bundle seen as a result bundle, with what no signature covers marked
    matrix      the interop matrix (Markdown, HTML)
    badges      shields.io endpoint files
    diff        requirement-by-requirement comparison of two bundles
    commands    the CLI of all of the above (keygen, export-v3, sign, verify, matrix, diff, badge)

The trust model is in trust.py; the profile-claim decisions, with the sentences they follow, in
docs/certification.md.
"""
