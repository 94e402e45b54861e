"""The human-readable tables and the JSON file; both carry the same figures."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

MIN_WIDTH = 150  # the tables stay readable when stdout is a pipe (rich would assume 80)


def _table(title: str, columns: Iterable[str], left: Collection[str]) -> Table:
    """A table of figures: the `left` columns are labels, every other one right-aligned numbers."""
    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="left" if col in left else "right")
    return table


def console() -> Console:
    probe = Console()
    return Console(width=max(probe.width, MIN_WIDTH), highlight=False)


def _mib(n: int | None) -> str:
    return "—" if n is None else f"{n / 2**20:,.0f}"


def _outcomes(totals: dict[str, int] | None) -> str:
    return ", ".join(f"{v} {k}" for k, v in (totals or {}).items() if v) or "—"


def suite_table(suite: dict[str, Any]) -> Table:
    columns = ("mode", "runs", "min", "median", "max", "in tests", "requirements", "outcomes", "exit")
    table = _table("Suite wall time — embedded reference host (seconds)", columns, left=("mode", "outcomes"))
    for key, figures in suite.items():
        table.add_row(
            key,
            str(figures["runs"]),
            f"{figures['min']:.2f}",
            f"{figures['median']:.2f}",
            f"{figures['max']:.2f}",
            "—" if figures["testSecondsMedian"] is None else f"{figures['testSecondsMedian']:.2f}",
            str(figures["requirements"]),
            _outcomes(figures["totals"]) + ("" if figures["totalsConsistent"] else " (varied!)"),
            ",".join(str(c) for c in figures["exitCodes"]),
        )
    return table


def compaction_table(compaction: dict[str, Any]) -> Table:
    columns = (
        "backend",
        "entries",
        "seed /s",
        "compact s",
        "compact /s",
        "read s",
        "derive s",
        "write s",
        "output B",
        "peak RSS MiB",
        "(growth)",
    )
    table = _table(
        "Compaction — one memoryRef, all live entries in one run (engine API)", columns, left=("backend",)
    )
    cases = compaction["cases"]
    for case in cases:
        c = case["compaction"]
        phases = c["phases"]
        stats = case.get("plannerStatistics")
        table.add_row(
            case["backend"] + ("" if stats is None or stats["analysed"] else " †"),
            f"{case['entries']:,}",
            f"{case['seeding']['entriesPerSecond']:,.0f}",
            f"{c['seconds']:.2f}",
            f"{c['entriesPerSecond']:,.0f}",
            f"{phases.get('read', 0):.2f}",
            f"{phases.get('derive', 0):.2f}",
            f"{phases.get('write', 0):.2f}",
            f"{c['outputBytes']:,}",
            _mib(c["peakRssBytes"]),
            "+" + _mib(c["peakRssGrowthBytes"]),
        )
    if any(not (c.get("plannerStatistics") or {"analysed": True})["analysed"] for c in cases):
        table.caption = "† PostgreSQL had no statistics on memory_entries yet (bench/README.md)"
    return table


def redaction_table(compaction: dict[str, Any]) -> Table:
    columns = (
        "backend",
        "entries",
        "input MB",
        "seconds",
        "entries /s",
        "MB /s",
        "markers / secrets",
        "÷ compact s",
        "peak RSS MiB",
        "(growth)",
    )
    table = _table(
        "Redaction harness alone — redact_joined(contents, Redactor({}), '\\n')", columns, left=("backend",)
    )
    for case in compaction["cases"]:
        r = case["redaction"]
        ratio = r["seconds"] / case["compaction"]["seconds"]
        table.add_row(
            case["backend"],
            f"{case['entries']:,}",
            f"{case['corpus']['bytes'] / 1e6:.1f}",
            f"{r['seconds']:.2f}",
            f"{r['entriesPerSecond']:,.0f}",
            f"{r['megabytesPerSecond']:.2f}",
            f"{r['markers']:,} / {case['corpus']['secrets']:,}" + ("" if r["markersMatchSecrets"] else " !"),
            f"{ratio:.2f}",
            _mib(r["peakRssBytes"]),
            "+" + _mib(r["peakRssGrowthBytes"]),
        )
    return table


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def distillation_table(distillation: dict[str, Any]) -> Table:
    columns = (
        "backend",
        "sources",
        "path",
        "runs",
        "median ms",
        "runs /s",
        "sources /s",
        "tokens /run",
        "tokens /s",
        "archive KB",
        "markers / secrets",
        "peak RSS MiB",
        "(growth)",
    )
    table = _table(
        "Distillation — explicit sources, one Distiller.distill per run (engine API)",
        columns,
        left=("backend", "path"),
    )
    for case in distillation["cases"]:
        for path, f in (("ok", case["success"]), ("budget ✗", case["budgetFailure"])):
            ok = path == "ok"
            table.add_row(
                case["backend"],
                f"{case['sources']:,}",
                path,
                str(f["runs"]),
                _ms(f["medianSeconds"]),
                f"{f['runsPerSecond']:,.1f}",
                f"{f['sourcesPerSecond']:,.0f}",
                f"{f['tokensCountedPerRun']:,.0f}",
                f"{f['tokensCountedPerSecond']:,.0f}",
                f"{f['archiveBytes'] / 1e3:,.1f}" if ok else "—",
                (f"{f['markers']:,} / {f['secrets']:,}" + ("" if f["markersMatchSecrets"] else " !"))
                if ok
                else "—",
                _mib(f["peakRssBytes"]) if ok else "—",
                "+" + _mib(f["peakRssGrowthBytes"]) if ok else "—",
            )
    table.caption = "budget ✗: token_budget=1, token_budget_exceeded, nothing written"
    return table


def distillation_phase_table(distillation: dict[str, Any]) -> Table:
    phases = ("redact", "tokens", "jcs", "sha256", "commit", "other")
    columns = ("backend", "sources", "path", *phases, "tokenizer tok/s")
    table = _table(
        "Distillation — mean ms per run by phase (share of the run)", columns, left=("backend", "path")
    )
    for case in distillation["cases"]:
        for path, f in (("ok", case["success"]), ("budget ✗", case["budgetFailure"])):
            per_run, share = f["phaseSecondsPerRun"], f["phaseShare"]

            def cell(name: str, per_run: dict[str, float] = per_run, share: dict[str, float] = share) -> str:
                return f"{_ms(per_run[name])} ({share[name] * 100:.0f}%)"

            rate = f["tokenizerTokensPerSecond"]
            table.add_row(
                case["backend"],
                f"{case['sources']:,}",
                path,
                *(cell(name) for name in phases),
                "—" if rate is None else f"{rate:,.0f}",
            )
    return table


def checksum_table(checksum: dict[str, Any]) -> Table:
    columns = (
        "document",
        "bytes",
        "sources",
        "floor ms",
        "floor MB/s",
        "jcs ms",
        "jcs MB/s",
        "jcs ÷ floor",
        "json ms",
        "json MB/s",
        "json ÷ floor",
        "json = jcs bytes",
    )
    table = _table(
        "Archive checksum — median per call; floor = sha256 of the canonical bytes alone",
        columns,
        left=("document",),
    )
    for case in checksum["cases"]:
        m = case["methods"]
        table.add_row(
            case["size"],
            f"{case['canonicalBytes']:,}",
            f"{case['sources']:,}",
            f"{m['floor']['medianSeconds'] * 1e3:,.3f}",
            f"{m['floor']['megabytesPerSecond']:,.0f}",
            f"{m['jcs']['medianSeconds'] * 1e3:,.3f}",
            f"{m['jcs']['megabytesPerSecond']:,.0f}",
            f"{m['jcs']['ratioToFloor']:,.1f}",
            f"{m['json']['medianSeconds'] * 1e3:,.3f}",
            f"{m['json']['megabytesPerSecond']:,.0f}",
            f"{m['json']['ratioToFloor']:,.1f}",
            "yes" if case["sameBytes"] else "no",
        )
    return table


_RETENTION_RUNS = (("dry", "dry"), ("real", "real"), ("2nd real", "second"))
_RETENTION_RULES = {
    "candidate_expiry": "expired",
    "stale_archive": "stale → arch.",
    "superseded_archive": "superseded → arch.",
    "compaction": "compacted nodes",
    "compaction_source_archive": "sources → arch.",
    "branch_cleanup": "branch → arch.",
}


def retention_table(retention: dict[str, Any]) -> Table:
    columns = (
        "backend",
        "memories",
        "run",
        "plant s",
        "wall s",
        "memories /s",
        "load s",
        "plan s",
        "(SR-1 s)",
        "apply s",
        "other s",
        "transitions",
        "peak RSS MiB (growth)",
    )
    table = _table(
        "Retention run — one project, default config, at a fixed now (engine API)",
        columns,
        left=("backend", "run"),
    )
    for case in retention["cases"]:
        for run, key in _RETENTION_RUNS:
            f, plant = case[key], (None if key == "second" else key)
            phases = f["phases"]
            table.add_row(
                case["backend"] + (" ‡" if case.get("engineChanged") else ""),
                f"{case['memories']:,}",
                run,
                "—" if plant is None else f"{case['planting'][plant]['seconds']:.2f}",
                f"{f['seconds']:.2f}",
                f"{f['memoriesPerSecond']:,.0f}",
                f"{phases['load']:.2f}",
                f"{phases['plan']:.2f}",
                f"{f['planPhases'].get('sr1', 0.0):.2f}",
                f"{phases['apply']:.2f}",
                f"{phases['other']:.2f}",
                f"{f['transitions']:,}",
                f"{_mib(f['peakRssBytes'])} (+{_mib(f['peakRssGrowthBytes'])})",
            )
    notes = ["SR-1: redaction of the compacted nodes' titles and summaries, part of plan"]
    if retention.get("analyzeAfterPlanting"):
        notes.append("PostgreSQL: ANALYZE after planting, not timed (bench/README.md)")
    if any(case.get("engineChanged") for case in retention["cases"]):
        notes.append("‡ reference_host/ changed between the dry and the real case")
    table.caption = "; ".join(notes)
    return table


def retention_rules_table(retention: dict[str, Any]) -> Table:
    columns = ("backend", "memories", "run", *_RETENTION_RULES.values(), "links", "skipped")
    table = _table(
        "Retention run — transitions per rule (the work each run did)", columns, left=("backend", "run")
    )
    for case in retention["cases"]:
        for run, key in _RETENTION_RUNS:
            f = case[key]
            table.add_row(
                case["backend"],
                f"{case['memories']:,}",
                run,
                *(f"{f['counts'][rule]:,}" for rule in _RETENTION_RULES),
                f"{f['links']:,}",
                f"{sum(f['skipped'].values()):,}",
            )
    table.caption = "skipped: memories a rule passed over (protected type, promoted, checked out)"
    return table


def machine_line(machine: dict[str, Any]) -> str:
    return (
        f"{machine['date']} · {machine['nproc']} cores ({machine.get('cpuModel') or '?'}) · "
        f"{machine.get('memoryMiB') or '?'} MiB · Python {machine['python']} · "
        f"SQLite {machine['sqlite']} · SQLAlchemy {machine.get('sqlalchemy')} · "
        f"commit {machine.get('gitCommit') or '?'}{_dirty(machine)} · "
        f"load {machine.get('loadAverage')}"
    )


def _dirty(machine: dict[str, Any]) -> str:
    modified = [p for p in machine.get("gitModified") or [] if not p.startswith("bench/")]
    return f" + {len(modified)} modified file(s) outside bench/" if modified else ""


def write_json(path: Path, figures: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def engine_throughput_table(redaction: dict[str, Any]) -> Table:
    """The SR-1 engine over the corpus, each way it is called, next to its floors and the previous engine."""
    t = redaction["throughput"]
    floors = t["floors"]
    title = (
        f"SR-1 engine throughput — {t['notes']:,} corpus notes, {t['bytes']:,} bytes, "
        f"{t['secrets']:,} secrets; "
        f"floors: sha256 {floors['sha256']['megabytesPerSecond']:,.0f} MB/s, "
        f"len(text.encode()) {floors['utf-8 length']['megabytesPerSecond']:,.0f} MB/s"
    )
    columns = ("engine", "way", "s (median)", "MB/s", "÷ sha256", "÷ encode", "new ÷ old MB/s", "markers")
    table = _table(title, columns, left=("engine", "way"))
    previous = f"previous ({redaction['previousCommit']})"
    for name, engine in t["engines"].items():
        for way, f in engine["ways"].items():
            ratio = f.get("previousOverCurrent")
            marks = f"{f['markers']:,}"
            if f.get("markersAgree") is False or f["markers"] != t["secrets"]:
                marks += " !"
            table.add_row(
                "current" if name == "current" else previous,
                way,
                f"{f['seconds']:.4f}",
                f"{f['megabytesPerSecond']:,.2f}",
                f"{f['timesSha256']:,.0f}×",
                f"{f['timesUtf8Length']:,.0f}×",
                "" if ratio is None else f"{ratio:,.1f}",
                marks,
            )
    if not redaction["previousAvailable"]:
        table.add_row(previous, "unavailable", "", "", "", "", "", "")
    return table


def engine_adversarial_table(redaction: dict[str, Any]) -> Table:
    """Seconds each engine takes over the adversarial MiB (bench/adversarial.py), one text and in parts."""
    adv = redaction["adversarial"]
    ways = ("one text", f"{adv['parts']:,} parts")
    columns = ("engine", *(f"{w} s" for w in ways), *(f"{w} markers" for w in ways))
    title = (
        f"SR-1 engine over {adv['bytes']:,} characters of adversarial text (deadline {adv['deadline']:.0f} s)"
    )
    table = _table(title, columns, left=("engine",))

    def seconds(f: dict[str, Any]) -> str:
        if f.get("timedOut"):
            return f"> {f['deadline']:.0f}"
        return f.get("error") or f"{f['seconds']:.3f}"

    for name, engine in adv["engines"].items():
        label = "current" if name == "current" else f"previous ({redaction['previousCommit']})"
        table.add_row(
            label,
            *(seconds(engine[w]) for w in ways),
            *(f"{engine[w]['markers']:,}" if "markers" in engine[w] else "—" for w in ways),
        )
    return table


def engine_share_table(redaction: dict[str, Any]) -> Table:
    """Redaction's share of a compaction, a distillation run and a retention run."""
    columns = ("engine", "backend", "size", "run s", "redaction s", "share", "calls")
    columns += ("bench phase", "phase s")
    left = ("engine", "backend", "bench phase")
    table = _table("SR-1 redaction's share of an engine run", columns, left=left)
    for row in redaction["share"]:
        r = row["run"]
        engine = row["engine"] + (f" (mean of {row['runs']} runs)" if "runs" in row else "")
        table.add_row(
            engine,
            row["backend"],
            f"{row['size']:,} {row['unit']}",
            f"{r['seconds']:.3f}",
            f"{r['redactSeconds']:.3f}",
            f"{100 * row['share']:.1f}%",
            f"{r['redactCalls']:,.0f}",
            row["existingPhase"]["name"],
            f"{row['existingPhase']['seconds']:.3f}",
        )
        second = row.get("second")
        if second:
            share = second["redactSeconds"] / second["seconds"] if second["seconds"] else 0.0
            table.add_row(
                "retention, second real run",
                row["backend"],
                f"{row['size']:,} {row['unit']}",
                f"{second['seconds']:.3f}",
                f"{second['redactSeconds']:.3f}",
                f"{100 * share:.1f}%",
                f"{second['redactCalls']:,.0f}",
                "",
                "",
            )
    return table


def _number(value: float | None, unit: str = "") -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


def goals_table(figures: list[dict[str, Any]], baseline: dict[str, Any] | None) -> Table:
    """Issue 14's figures: each next to its floor and the ratio, the goal, and the previous commit's."""
    previous = (baseline or {}).get("figures", {})
    title = "Goals — every figure next to its floor, measured in this run"
    if baseline:
        title += f"; previous: commit {str(baseline.get('commit', '?'))[:12]}"
    table = _table(
        title,
        (
            "figure",
            "value",
            "unit",
            "floor",
            "floor value",
            "ratio",
            "goal",
            "met",
            "previous",
            "new ÷ previous",
        ),
        {"figure", "unit", "floor", "goal"},
    )
    for f in figures:
        before = previous.get(f["name"])
        change = f["value"] / before if before else None
        met = {True: "[green]yes[/]", False: "[red]no[/]", None: ""}[f.get("met")]
        table.add_row(
            f["name"],
            _number(f["value"]),
            f["unit"],
            f.get("floorName") or "",
            _number(f.get("floor")),
            f"{f['ratio']:.2f}×" if f.get("ratio") is not None else "—",
            f.get("goal") or "",
            met,
            _number(before),
            f"{change:.2f}" if change else "—",
        )
    return table
