"""The interop matrix, the bundle diff and the badges (conformance/certify/matrix.py, diff.py,
badges.py) over result bundles: small bundles built here for the edge cases, and real bundles of three
hosts (the clean reference host, a mutant, a host with no memory family) graded in this process. A
result bundle is never more than a self-declaration; signed bundles are test_signed_matrix.py's."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conformance.certify import badges, matrix
from conformance.certify import diff as bundle_diff
from conformance.certify.bundles import Bundle, load_bundle
from conformance.cli import main
from conformance.outcomes import Outcome
from conformance.provenance import bundle_digest

PROFILES = ("compaction", "distillation", "retention")


def bundle_dict(
    outcomes: dict[str, str] | None = None,
    *,
    headline: str = "CONFORMING",
    certifiable: bool | None = None,
    partial: bool = False,
    profile_verdict: str = "conformant",
    **extra: Any,
) -> dict[str, Any]:
    """A bundle in the shape build_bundle writes, with only what the views read."""
    outcomes = outcomes if outcomes is not None else {"auth.a": "PASS", "rfc0012.x": "PASS"}
    rows = [
        {
            "id": rid,
            "outcome": outcome,
            "profile": "compaction",
            "reason": None if outcome == "PASS" else "why",
        }
        for rid, outcome in outcomes.items()
    ]
    profiles = [{"profile": p, "advertised": True, "verdict": profile_verdict, "gaps": []} for p in PROFILES]
    bundle = {
        "bundleVersion": "1",
        "suite": {"name": "openwop-memory-conformance", "version": "0.1.0"},
        "host": {
            "url": "http://127.0.0.1:1",
            "embedded": False,
            "implementation": {"name": "acme-host", "version": "2.0"},
        },
        "discovery": {"url": "http://127.0.0.1:1/.well-known/openwop", "sha256": "ab" * 32},
        "options": {"requireBehavior": False, "profiles": [], "requirements": [], "disabled": {}},
        "selection": {"partial": partial, "narrowedBy": ["-k x"] if partial else []},
        "verdict": {
            "headline": headline,
            "certifiable": headline == "CONFORMING" if certifiable is None else certifiable,
            "profiles": profiles,
        },
        "requirements": rows,
    }
    return bundle | extra


def written(tmp_path: Path, name: str, bundle: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return path


def loaded(tmp_path: Path, bundle: dict[str, Any], name: str = "b.json") -> Bundle:
    return load_bundle(written(tmp_path, name, bundle))


def cli(*argv: str) -> int:
    """The commands through the suite's CLI (exit 4 on usage and on a file that is not a bundle)."""
    return main(list(argv))


# -- a result bundle is a self-declaration ---------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"headline": "PARTIAL", "certifiable": False},
        {"headline": "BASELINED", "certifiable": True},
        {"headline": "NONCONFORMING"},
        {"partial": True},
        {"signature": {"alg": "ed25519", "keyId": "k1", "sig": "AAAA"}},  # a signature block proves nothing
    ],
)
def test_a_result_bundle_is_never_certified_whatever_it_says(tmp_path, changes):
    given = dict(changes)
    bundle = loaded(tmp_path, bundle_dict(given.pop("outcomes", None), **given))
    assert bundle.status == "self-declared" and not bundle.certified
    assert matrix.certified_profiles(bundle) == []
    cells = [matrix.md_cell(c) for c in matrix.row_cells(bundle, PROFILES)]
    assert cells[7].startswith("no: self-declared") and "certified |" not in " | ".join(cells)
    assert not any(cell == "certified" for cell in cells[-3:])


def test_a_bundle_digest_is_checked_when_present(tmp_path):
    """A bundle edited after it was written, still carrying its old digest, says so."""
    good = bundle_dict()
    good["bundleSha256"] = bundle_digest(good)
    assert "(verified)" in matrix.md_cell(matrix.row_cells(loaded(tmp_path, good, "g.json"), PROFILES)[5])
    tampered = json.loads(json.dumps(good))
    tampered["requirements"].append({"id": "rfc0012.extra", "outcome": "PASS", "profile": "compaction"})
    bundle = loaded(tmp_path, tampered, "tampered.json")
    assert "bundleSha256 does not match" in bundle.assessment.reasons[0]
    assert "DOES NOT MATCH" in matrix.md_cell(matrix.row_cells(bundle, PROFILES)[5])


def test_without_provenance_fields_the_file_digest_is_shown(tmp_path):
    path = written(tmp_path, "old.json", bundle_dict())
    bundle = load_bundle(path)
    assert matrix.bundle_digest(bundle)[1] == "file sha256"
    assert matrix.host_build(bundle) is None and matrix.signing_key(bundle) is None
    assert matrix.evidence_tier(bundle) == "self"


def test_build_signing_key_and_tier_are_read_when_present(tmp_path):
    bundle = loaded(
        tmp_path,
        bundle_dict(
            host={"implementation": {"name": "acme"}, "build": {"kind": "commit", "id": "abc123"}},
            signature={"alg": "ed25519", "keyId": "acme-2026", "sig": "AAAA"},
            evidenceTier="independent",
        ),
    )
    row = matrix.render_markdown([bundle])
    assert "`commit:abc123`" in row and "signed `acme-2026`" in row and "`independent`" in row


# -- counts ----------------------------------------------------------------------------------------


def test_every_outcome_is_counted_once(tmp_path):
    outcomes = {f"r.{o.value}": o.value for o in Outcome}
    bundle = loaded(tmp_path, bundle_dict(outcomes))
    found = matrix.counts(bundle)
    assert sum(found[name] for name in matrix.COUNTED) == len(Outcome)
    assert found == {"pass": 2, "fail": 3, "blocked": 1, "inapplicable": 1, "skipped": 2, "warn": 1}
    assert matrix.counts_text(bundle) == "2 / 3 / 1 / 1 / 2 (1 warn)"


# -- Markdown and HTML -----------------------------------------------------------------------------

HOSTILE = "evil|host\nname <script>alert(1)</script> `tick` [x](http://evil.example)"


def hostile_bundle() -> dict[str, Any]:
    return bundle_dict(
        host={"url": "http://h/|x", "implementation": {"name": HOSTILE, "version": "1|2"}},
        discovery={"sha256": "cd" * 32},
    )


def table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ")]


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_cells_cannot_be_split_or_broken_by_host_text(tmp_path):
    text = matrix.render_markdown([loaded(tmp_path, hostile_bundle())])
    header, rule, row = table_rows(text)
    assert unescaped_pipes(row) == unescaped_pipes(header) == unescaped_pipes(rule)
    assert "<script>" not in text and "\\<script\\>" in text
    assert not re.search(r"(?<!\\)\]\(", text)  # no live link either


def test_html_is_one_file_with_host_text_escaped(tmp_path):
    page = matrix.render_html([loaded(tmp_path, hostile_bundle())])
    assert "<script" not in page.lower()
    assert html.escape("<script>alert(1)</script>") in page
    assert not re.search(r"""(src|href)\s*=|@import|url\(""", page)  # nothing loaded from anywhere
    assert "<style>" in page and "Content-Security-Policy" in page


def test_profile_cells_follow_the_profile_verdicts(tmp_path):
    bundle = bundle_dict(headline="INCOMPLETE", profile_verdict="partial")
    bundle["verdict"]["profiles"][0]["gaps"] = ["rfc0012.a", "rfc0012.b", "rfc0012.c"]
    bundle["verdict"]["profiles"][1] |= {"verdict": "inapplicable", "advertised": False}
    cells = [matrix.md_cell(c) for c in matrix.row_cells(loaded(tmp_path, bundle), PROFILES)]
    assert cells[-3:] == ["partial: rfc0012.a, rfc0012.b … (3 in all)", "inapplicable", "partial"]
    assert cells[2] == "compaction · retention"  # advertised profiles
    assert cells[7].startswith("no: self-declared")


# -- diff ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("PASS", "FAIL", "regression"),
        ("PASS", "BLOCKED", "regression"),
        ("PASS", "BASELINED", "regression"),
        ("WARN", "BLOCKED", "regression"),
        ("PASS", "NOT-RUN", "regression"),
        ("PASS", bundle_diff.MISSING, "regression"),
        ("PASS", "DISABLED", "regression"),
        ("PASS", "UNSUPPORTED", "regression"),
        ("FAIL", "NOT-RUN", "regression"),
        ("UNSUPPORTED", "FAIL", "regression"),
        (bundle_diff.MISSING, "ERROR", "regression"),
        ("FAIL", "PASS", "improvement"),
        ("BLOCKED", "WARN", "improvement"),
        ("NOT-RUN", "PASS", "change"),
        ("UNSUPPORTED", "BLOCKED", "change"),
        ("NOT-RUN", "UNSUPPORTED", "change"),
    ],
)
def test_what_counts_as_a_regression(before, after, kind):
    assert bundle_diff.classify(before, after)[0] == kind


def test_diff_lists_regressions_first_worst_first(tmp_path):
    a = loaded(tmp_path, bundle_dict({"r.1": "PASS", "r.2": "PASS", "r.3": "FAIL", "r.4": "PASS"}), "a.json")
    b = loaded(tmp_path, bundle_dict({"r.1": "BLOCKED", "r.3": "PASS", "r.4": "FAIL"}), "b.json")
    changes = bundle_diff.compare(a, b)
    assert [(c.id, c.kind) for c in changes] == [
        ("r.4", "regression"),  # FAIL
        ("r.1", "regression"),  # BLOCKED
        ("r.2", "regression"),  # missing from B
        ("r.3", "improvement"),
    ]


def test_diff_command_exit_codes(tmp_path, capsys):
    a = written(tmp_path, "a.json", bundle_dict({"r.1": "PASS"}))
    b = written(tmp_path, "b.json", bundle_dict({"r.1": "FAIL"}, headline="NONCONFORMING"))
    assert cli("diff", str(a), str(b)) == 1
    assert "REGRESSION  r.1: PASS -> FAIL (worse)" in capsys.readouterr().out
    assert cli("diff", str(b), str(a)) == 0
    capsys.readouterr()
    assert cli("diff", str(a), str(b), "--json") == 1
    said = json.loads(capsys.readouterr().out)
    assert said["regressions"] == 1 and said["exitCode"] == 1
    assert said["changes"][0] | {"reason": None} == {
        "id": "r.1",
        "before": "PASS",
        "after": "FAIL",
        "kind": "regression",
        "why": "worse",
        "reason": None,
    }
    not_a_bundle = tmp_path / "x.json"
    not_a_bundle.write_text('{"requirements": "no"}')
    assert cli("diff", str(a), str(not_a_bundle)) == 4
    assert "not a result bundle" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        cli("diff", str(a))
    assert stopped.value.code == 4


# -- badges ----------------------------------------------------------------------------------------


def test_badges_are_shields_endpoints_and_never_certify_a_result_bundle(tmp_path):
    cases = (("PARTIAL", True), ("BASELINED", False), ("CONFORMING", True), ("CONFORMING", False))
    for headline, partial in cases:
        bundle = loaded(tmp_path, bundle_dict(headline=headline, partial=partial, certifiable=True))
        for document in badges.badges(bundle).values():
            assert set(document) == {"schemaVersion", "label", "message", "color"}
            assert document["schemaVersion"] == 1
            assert document["message"] != "certified" and document["color"] != "brightgreen"


def test_badge_files_are_named_safely(tmp_path):
    bundle = loaded(
        tmp_path, bundle_dict(host={"implementation": {"name": "../../etc/passwd", "version": "1"}})
    )
    out = tmp_path / "badges"
    assert cli("badge", str(bundle.path), "-o", str(out)) == 0
    assert {p.name for p in out.iterdir()} == {
        "etc-passwd-1.json",
        "etc-passwd-1-compaction.json",
        "etc-passwd-1-distillation.json",
        "etc-passwd-1-retention.json",
    }
    headline = json.loads((out / "etc-passwd-1.json").read_text())
    assert headline == {
        "schemaVersion": 1,
        "label": "openwop memory",
        "message": "self-declared conforming",
        "color": "lightgrey",
    }


# -- three real hosts ------------------------------------------------------------------------------


REAL_HOSTS = (("clean", ()), ("mutant", ("event-wrong-type",)), ("no-memory", ("no-memory-family",)))


@pytest.fixture
def real_bundles(start_host, run_suite_here, tmp_path) -> tuple[dict[str, Path], list[str]]:
    """Bundles of the clean host, the `event-wrong-type` mutant and the `no-memory-family` mutant,
    graded for the compaction profile (a whole scope, so a certificate is possible); and the hosts'
    tokens, which no output may contain."""
    found, tokens = {}, []
    for name, mutants in REAL_HOSTS:
        host = start_host(*mutants)
        tokens += [host.token_a, host.token_b]
        run = run_suite_here("--profile=compaction", host=host)
        assert run.bundle is not None, run.output[-2000:]
        found[name] = written(tmp_path, f"{name}.json", run.bundle)
    return found, tokens


@pytest.mark.slow  # grades three hosts
def test_three_real_hosts(real_bundles, tmp_path, capsys):
    real_bundles, tokens = real_bundles
    clean, mutant, no_memory = real_bundles["clean"], real_bundles["mutant"], real_bundles["no-memory"]
    out_md, out_html = tmp_path / "INTEROP-MATRIX.md", tmp_path / "matrix.html"
    assert (
        cli(
            "matrix",
            "combine",
            str(clean),
            str(mutant),
            str(no_memory),
            "-o",
            str(out_md),
            "--html",
            str(out_html),
        )
        == 0
    )
    rows = table_rows(out_md.read_text())
    assert len(rows) == 2 + 3
    assert "no: self-declared" in rows[2] and rows[2].endswith("| conformant (self-declared) |")
    assert "no: self-declared" in rows[3] and "not certifiable: rfc0012.B.event-type" in rows[3]
    assert "no: self-declared" in rows[4] and rows[4].endswith("| inapplicable |")
    page = out_html.read_text()
    assert page.count("<tr>") == 4 and "<script" not in page

    capsys.readouterr()
    assert cli("diff", str(clean), str(mutant)) == 1
    said = capsys.readouterr().out
    assert "REGRESSION  rfc0012.B.event-type: PASS -> FAIL (worse)" in said
    assert said.rstrip().endswith("1 regression: rfc0012.B.event-type; 0 other changes")
    assert cli("diff", str(mutant), str(clean)) == 0
    assert cli("diff", str(clean), str(no_memory)) == 1  # the memory family withdrawn: no longer graded

    folder = tmp_path / "badges"
    for name, path in real_bundles.items():
        assert cli("badge", str(path), "-o", str(folder / name)) == 0
    shown = {
        name: {p.name: json.loads(p.read_text())["message"] for p in (folder / name).iterdir()}
        for name in real_bundles
    }
    host = badges.slug(matrix.host_name(load_bundle(clean)))
    assert shown["clean"] == {
        f"{host}.json": "self-declared conforming",
        f"{host}-compaction.json": "conformant (self-declared)",
    }
    assert shown["mutant"] == {
        f"{host}.json": "self-declared nonconforming",
        f"{host}-compaction.json": "not certifiable",
    }
    assert shown["no-memory"][f"{host}-compaction.json"] == "inapplicable"
    assert shown["no-memory"][f"{host}.json"] == "self-declared inapplicable"  # never "conforming"
    outputs = [out_md.read_text(), page, said, *(p.read_text() for p in folder.rglob("*.json"))]
    assert not [t for t in tokens for text in outputs if t in text]


def test_suite_cell_names_the_flags_that_change_grading(tmp_path):
    bundle = bundle_dict(
        suite={"name": "s", "version": "1", "commit": "f" * 40, "commitSource": "git checkout (modified)"},
        options={"requireBehavior": True, "profiles": ["retention"], "disabled": {"r.x": "why"}},
        selection={"partial": True, "narrowedBy": ["-k expiry"]},
    )
    cell = matrix.md_cell(matrix.row_cells(loaded(tmp_path, bundle), PROFILES)[1])
    flags = "--require-behavior --profile retention --disable r.x narrowed by -k expiry"
    assert cell == f"`s@1 (ffffffffffff, modified)` `{flags}`"


def test_suite_cell_names_the_openwop_major_graded_first(tmp_path):
    """A result bundle says it in `protocolMajor`, a v3 bundle in `suite.targetMajor`; a bundle from
    before the suite recorded a major shows none."""
    graded = bundle_dict(protocolMajor=2, options={"requireBehavior": True})
    cell = matrix.md_cell(matrix.row_cells(loaded(tmp_path, graded), PROFILES)[1])
    assert cell.endswith("`--protocol-major 2 --require-behavior`")
    assert matrix.graded_major(loaded(tmp_path, bundle_dict(suite={"name": "s", "targetMajor": 1}))) == 1
    assert matrix.graded_major(loaded(tmp_path, bundle_dict())) is None


def test_matrix_command_usage_errors(tmp_path, capsys):
    good = written(tmp_path, "good.json", bundle_dict())
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    out = tmp_path / "m.md"
    assert cli("matrix", "combine", str(good), str(broken), "-o", str(out)) == 4
    assert not out.exists() and "broken.json: not a readable JSON file" in capsys.readouterr().err
    assert cli("matrix") == 4
    with pytest.raises(SystemExit) as stopped:
        cli("matrix", "combine", str(good))  # no -o
    assert stopped.value.code == 4


def test_diff_notes_bundles_graded_against_different_registries(tmp_path, capsys):
    from conformance.certify.diff import grading_notes

    a, b = bundle_dict(), bundle_dict()
    a["provenance"], b["provenance"] = {"registrySha256": "1" * 64}, {"registrySha256": "2" * 64}
    b["suite"] = {**a.get("suite", {}), "name": "openwop-memory-conformance", "version": "9.9.9"}
    loaded = [load_bundle(written(tmp_path, name, data)) for name, data in (("a.json", a), ("b.json", b))]
    notes = grading_notes(*loaded)
    assert any("different requirement registries" in n for n in notes)
    assert any("different suite versions" in n for n in notes)
