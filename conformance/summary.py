"""The Markdown summary of a run: headline, counts, then the rows that did not pass, first.

Why Markdown: it is what a CI step summary (`$GITHUB_STEP_SUMMARY`) and a pull-request comment show.
Everything a host sent (reasons, observed values) is escaped so that it stays inside its table cell
and cannot become a link, an image or HTML, and the whole text stays within SUMMARY_BUDGET bytes
(GitHub refuses a step summary over 1 MiB; several steps may share that).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from conformance.messages import fold
from conformance.secrecy import scrub

SUMMARY_BUDGET = 256 * 1024  # bytes of UTF-8
CELL_LIMIT = 300  # characters of host text per table cell
RERUN_LIMIT = 20  # rerun commands listed
# Worst first, as in the verdict table; PASS last.
ORDER = ("FAIL", "ERROR", "BLOCKED", "WARN", "BASELINED", "NOT-RUN", "DISABLED", "UNSUPPORTED", "PASS")
ROW_COLUMNS = ("Outcome", "Requirement", "Profile", "Level", "Reason")
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()#+!|~&$])")
_NEWLINES = re.compile(r"\r\n|\r|\n")


def markdown(bundle: dict[str, Any]) -> str:
    """The summary as Markdown, never longer than SUMMARY_BUDGET bytes."""
    head = _headline(bundle) + _profiles(bundle) + _selection(bundle)
    rows = sorted(bundle.get("requirements") or [], key=_rank)
    lines = [*head, "", "| " + " | ".join(ROW_COLUMNS) + " |", "|" + "---|" * len(ROW_COLUMNS)]
    tail = _reruns(rows)
    used = _size(lines) + _size(tail) + 200  # room for the "omitted" line
    for shown, row in enumerate(rows):
        line = _row(row)
        if used + _size([line]) > SUMMARY_BUDGET:
            lines.append(f"\n… {len(rows) - shown} more rows left out to stay within the size limit;")
            lines.append("the JSON result bundle has every row.")
            break
        lines.append(line)
        used += _size([line])
    return "\n".join(lines + tail) + "\n"


def write_summary(bundle: dict[str, Any], path: str) -> None:
    """Write the summary at `path` (folders created as needed), replacing what was there."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(markdown(bundle), encoding="utf-8")


def append_summary(bundle: dict[str, Any], path: str) -> None:
    """Add the summary to a file other steps also write (a CI step summary): never truncate it."""
    with Path(path).open("a", encoding="utf-8") as out:
        out.write(markdown(bundle))


def escape(text: object, limit: int = CELL_LIMIT) -> str:
    """Host text as literal Markdown table-cell text: secrets masked, cut at `limit`, one line,
    every character that Markdown or HTML would interpret backslash-escaped."""
    value = fold(scrub(str(text)), limit)
    return _PUNCTUATION.sub(r"\\\1", _NEWLINES.sub(" ", value))


def _headline(bundle: dict[str, Any]) -> list[str]:
    verdict = bundle.get("verdict") or {}
    headline = verdict.get("headline") or ("NONCONFORMING" if bundle.get("exitCode") else "CONFORMING")
    host = bundle.get("host") or {}
    impl = host.get("implementation") or {}
    about = " ".join(str(impl[k]) for k in ("name", "version") if impl.get(k)) or "host"
    suite = bundle.get("suite") or {}
    lines = [f"## OpenWOP memory conformance: {escape(headline)}", ""]
    if verdict.get("line"):
        lines += [escape(verdict["line"], 1000), ""]
    lines.append(
        f"{escape(about)} at {escape(host.get('url') or '?')} · suite {escape(suite.get('version') or '?')}"
        f" · {escape(bundle.get('generatedAt') or '')} · exit code {escape(bundle.get('exitCode', '?'))}"
    )
    if verdict.get("certifiable") is not None:
        lines.append("")
        lines.append(f"Certifiable: **{'yes' if verdict['certifiable'] else 'no'}**")
    lines += [f"- {escape(reason, 1000)}" for reason in verdict.get("reasons") or []]
    counts = bundle.get("totals") or {}
    shown = [
        f"{n} {escape(o)}" for o, n in sorted(counts.items(), key=lambda kv: _rank({"outcome": kv[0]})) if n
    ]
    lines += ["", "**Counts:** " + (" · ".join(shown) or "no requirement graded")]
    return lines


def _profiles(bundle: dict[str, Any]) -> list[str]:
    profiles = (bundle.get("verdict") or {}).get("profiles") or []
    if not profiles:
        return []
    lines = ["", "| Profile | Advertised | Verdict | Gaps |", "|---|---|---|---|"]
    for p in profiles:
        gaps = ", ".join(f"`{_code(g)}`" for g in (p.get("gaps") or [])[:50]) or "none"
        advertised = "yes" if p.get("advertised") else "no"
        lines.append(f"| {escape(p.get('profile'))} | {advertised} | {escape(p.get('verdict'))} | {gaps} |")
    return lines


def _selection(bundle: dict[str, Any]) -> list[str]:
    selection = bundle.get("selection") or {}
    if not selection.get("partial"):
        return []
    chosen = [*(selection.get("requirements") or []), *(selection.get("profiles") or [])]
    detail = ", ".join(escape(c, 100) for c in chosen[:20]) or "a subset"
    return ["", f"Partial run ({detail}): {len(selection.get('notRun') or [])} requirements not run."]


def _row(row: dict[str, Any]) -> str:
    cells = [
        f"**{escape(row.get('outcome'))}**" if row.get("outcome") != "PASS" else "PASS",
        f"`{_code(row.get('id'))}`",
        escape(row.get("profile") or ""),
        escape(row.get("level") or ""),
        escape(row.get("reason") or "") if row.get("outcome") != "PASS" else "",
    ]
    return "| " + " | ".join(cells) + " |"


def _reruns(rows: list[dict[str, Any]]) -> list[str]:
    """A fenced block per failing row's rerun command (a fence is safe for any text inside it)."""
    commands = [
        (r["id"], r["rerun"]) for r in rows if r.get("rerun") and r.get("outcome") in ("FAIL", "ERROR")
    ]
    if not commands:
        return []
    lines = ["", "<details><summary>Rerun a failing requirement</summary>", ""]
    for rid, command in commands[:RERUN_LIMIT]:
        text = scrub(_NEWLINES.sub(" ", str(command)))[:1000]
        fence = "`" * max(3, _longest_backtick_run(text) + 1)
        lines += [f"`{_code(rid)}`:", "", fence + "sh", text, fence, ""]
    if len(commands) > RERUN_LIMIT:
        lines.append(f"… and {len(commands) - RERUN_LIMIT} more (see the JSON result bundle).")
    return [*lines, "</details>"]


def _code(text: object) -> str:
    """Text for an inline code span: a code span cannot escape backticks, so they are dropped; a pipe
    is still a cell separator there and is escaped."""
    return scrub(str(text))[:CELL_LIMIT].replace("`", "'").replace("|", "\\|").replace("\n", " ")


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall("`+", text)), default=0)


def _rank(row: dict[str, Any]) -> tuple[int, str]:
    outcome = row.get("outcome")
    return (ORDER.index(outcome) if outcome in ORDER else len(ORDER), str(row.get("id", "")))


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)
