"""The run's headline, selection and baselines (issue 11 §2), on real runs against the reference host
and its mutants (the clean host's full run is CONFORMING: test_mutants.py): INCOMPLETE when something
advertised was not observed, PARTIAL with NOT-RUN rows for
a narrowed run, BASELINED known failures, and stale or expired baseline entries failing the run."""

from __future__ import annotations

import datetime as dt

from conformance.paths import scenarios_dir

EVENT = str(scenarios_dir() / "compaction" / "test_event.py")


def _baseline(tmp_path, *entries: dict) -> str:
    import yaml

    path = tmp_path / "known.yaml"
    path.write_text(yaml.safe_dump(list(entries)), encoding="utf-8")
    return str(path)


def _entry(rid: str, days: int = 30) -> dict:
    until = dt.date.today() + dt.timedelta(days=days)
    return {"id": rid, "reason": "tracked upstream", "link": "https://example.invalid/1", "expires": until}


def test_seams_off_is_incomplete_never_conforming(start_host, run_suite_here):
    run = run_suite_here(host=start_host("seams-missing"))
    verdict = run.bundle["verdict"]
    assert run.exit_code == 0 and verdict["headline"] == "INCOMPLETE" and not verdict["certifiable"]
    assert verdict["reasons"][0].startswith("advertised but not observed: ")
    assert "OpenWOP verdict: INCOMPLETE" in run.output
    assert {p["profile"]: p["verdict"] for p in verdict["profiles"]}["compaction"] == "partial"


def test_a_run_narrowed_by_requirement_is_partial_and_lists_what_it_did_not_run(start_host, run_suite_here):
    run = run_suite_here("--requirement=rfc0012.B.event-*", host=start_host())
    graded = {r["id"]: r["outcome"] for r in run.bundle["requirements"] if r["outcome"] != "NOT-RUN"}
    assert set(graded) == {"rfc0012.B.event-type", "rfc0012.B.event-schema", "rfc0012.B.event-logged"}
    selection = run.bundle["selection"]
    assert selection["partial"] and selection["narrowedBy"] == ["--requirement rfc0012.B.event-*"]
    assert len(selection["notRun"]) == run.bundle["totals"]["NOT-RUN"] > 100
    assert run.bundle["verdict"]["headline"] == "PARTIAL" and not run.bundle["verdict"]["certifiable"]


def test_k_and_x_are_partial_too(start_host, run_suite_here):
    run = run_suite_here(EVENT, "-x", "-k", "event_type", host=start_host())
    assert run.bundle["selection"]["narrowedBy"][:2] == ["-k event_type", "-x"]
    assert run.bundle["verdict"]["headline"] == "PARTIAL"


def test_profile_grades_one_profile_with_its_verdict(start_host, run_suite_here):
    run = run_suite_here("--profile=distillation", host=start_host())
    profiles = {r["profile"] for r in run.bundle["requirements"]}
    assert "compaction" not in profiles and "retention" not in profiles and "distillation" in profiles
    verdict = run.bundle["verdict"]
    assert [p["profile"] for p in verdict["profiles"]] == ["distillation"]
    assert verdict["profiles"][0]["verdict"] == "conformant" and verdict["headline"] == "CONFORMING"


def test_a_baselined_failure_does_not_fail_the_run_and_never_certifies(start_host, run_suite_here, tmp_path):
    known = _baseline(tmp_path, _entry("rfc0012.B.event-type"))
    run = run_suite_here(EVENT, f"--baseline={known}", host=start_host("event-wrong-type"))
    row = next(r for r in run.bundle["requirements"] if r["id"] == "rfc0012.B.event-type")
    assert row["outcome"] == "BASELINED" and "tracked upstream" in row["reason"]
    assert run.exit_code == 0, run.output[-3000:]
    assert not run.bundle["verdict"]["certifiable"]


def test_a_stale_baseline_entry_fails_the_run(start_host, run_suite_here, tmp_path):
    known = _baseline(tmp_path, _entry("rfc0012.B.event-type"))
    run = run_suite_here(EVENT, f"--baseline={known}", host=start_host())
    assert run.exit_code == 1
    assert run.bundle["verdict"]["headline"] == "NONCONFORMING"
    assert any("stale baseline entry" in p for p in run.bundle["baseline"]["problems"])


def test_an_expired_baseline_entry_fails_the_run_and_is_not_applied(start_host, run_suite_here, tmp_path):
    known = _baseline(tmp_path, _entry("rfc0012.B.event-type", days=-1))
    run = run_suite_here(EVENT, f"--baseline={known}", host=start_host("event-wrong-type"))
    row = next(r for r in run.bundle["requirements"] if r["id"] == "rfc0012.B.event-type")
    assert row["outcome"] == "FAIL" and run.exit_code == 1
    assert any("expired" in p for p in run.bundle["baseline"]["problems"])


def test_a_bad_baseline_or_an_unknown_id_is_a_usage_error(start_host, run_suite_here, tmp_path):
    host = start_host()
    unknown = _baseline(tmp_path, {**_entry("rfc0012.B.event-type"), "id": "no.such-id"})
    assert run_suite_here(EVENT, f"--baseline={unknown}", host=host).exit_code == 4
    no_reason = _baseline(tmp_path, {**_entry("rfc0012.B.event-type"), "reason": ""})
    assert run_suite_here(EVENT, f"--baseline={no_reason}", host=host).exit_code == 4
    assert run_suite_here(EVENT, "--disable=no.such-id=because", host=host).exit_code == 4
    assert run_suite_here(EVENT, "--requirement=no.such.*", host=host).exit_code == 4


def test_markers_select_by_level_and_profile(start_host, run_suite_here):
    run = run_suite_here("-m", "retention and may", host=start_host())
    graded = [r for r in run.bundle["requirements"] if r["outcome"] != "NOT-RUN"]
    assert graded and {(r["profile"], r["level"]) for r in graded} == {("retention", "MAY")}
    assert run.bundle["selection"]["narrowedBy"] == ["-m retention and may"]


def test_compaction_without_max_output_bytes_is_conforming_with_the_limits_rows_inapplicable(
    start_host, run_suite_here
):
    """RFC 0012 §A makes maxOutputBytes optional (OpenWOP's application backend omits it): the limits
    rows do not apply, nothing is BLOCKED, and the host can be CONFORMING (also under
    --require-behavior). Every other row reads as on the clean host: PASS."""
    run = run_suite_here(
        "--profile=compaction", "--require-behavior", host=start_host("compaction-no-max-output")
    )
    assert run.bundle is not None and "Traceback" not in run.output, run.output[-3000:]
    outcomes = {r["id"]: r["outcome"] for r in run.bundle["requirements"]}
    inapplicable = {
        "rfc0012.limits.output-within-max",
        "rfc0012.limits.output-valid-utf8",
        "rfc0012.limits.marker-not-cut",
        "rfc0012.A.output-within-entry-size",
    }
    assert {rid for rid, o in outcomes.items() if o != "PASS"} == inapplicable, outcomes
    assert {outcomes[rid] for rid in inapplicable} == {"UNSUPPORTED"}
    verdict = run.bundle["verdict"]
    assert run.exit_code == 0 and verdict["headline"] == "CONFORMING" and verdict["certifiable"], verdict
    assert [(p["profile"], p["verdict"]) for p in verdict["profiles"]] == [("compaction", "conformant")]
