"""Plan files: what a dry run of `memory retention run` listed, applied exactly by `--no-dry-run --plan`.

Why: the dry run is the operator's safety boundary. An apply line that re-plans from different
options (another config, no `--repo`, a later `now`) applies something nobody saw (issue 24). So a dry
run records everything that shaped its plan, and the apply re-plans from exactly that:

- recorded, and used as recorded: the project, the tenant, the database (its URL without the
  password: a plan file never holds a secret), `now`, the effective config (its content, so an edit
  of config.yaml after the dry run changes nothing), the Git repository and its mainline;
- read afresh: the data, i.e. the memories and the repository's branches.

The apply runs the real run with `PlanDigest(expected=...)` as its run policy: inside the run's
transaction, under the project's lock, after the writes and before the commit, the fresh plan's
digest is compared with the recorded one, and on any difference the run raises `PlanChanged` and is
rolled back, so nothing is written. The digest covers the report (transitions, links, skips, `now`)
and the full rows of the compacted nodes the run creates (their SR-1 titles and summaries), so a
source edited since the dry run is a difference even when no status would change. Because the fresh
plan is made at the recorded `now`, the time-dependent rules decide exactly as in the dry run; every
stamp the apply writes (`archived_at`, `updated_at`, ...) is that `now`, the instant the operator saw.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rfc8785
import sqlalchemy as sa

from reference_host.clock import from_wire
from reference_host.retention.branches import BranchState
from reference_host.retention.config import RetentionConfig, RetentionConfigError, parse_config
from reference_host.retention.engine import RetentionConflict
from reference_host.retention.plan import Plan
from reference_host.retention.policies import RunPolicy
from reference_host.retention.report import RetentionReport, report_to_wire
from reference_host.tables import lifecycle_memories as memories

FORMAT = "openwop-memory-retention-plan/1"
_KEYS = {"format", "project", "tenant", "database", "now", "config", "repo", "digest", "report"}


class PlanFileError(ValueError):
    """A plan file that cannot be read, or is not one this program wrote."""


class PlanChanged(RetentionConflict):
    """The fresh plan differs from the recorded one: the run was rolled back, nothing was written."""


def listed(report: RetentionReport) -> dict[str, Any]:
    """What a dry run lists, as recorded: the wire report without `dryRun` (the one field that differs)."""
    wire = report_to_wire(report)
    wire.pop("dryRun")
    return wire


def plan_digest(report: RetentionReport, nodes: list[dict[str, Any]]) -> str:
    """SHA-256 over the RFC 8785 form of the listed report and the compacted nodes' rows."""
    canonical = rfc8785.dumps({"report": listed(report), "nodes": nodes})
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


class PlanDigest(RunPolicy):
    """A run policy that digests the plan it finishes with; with `expected`, it refuses any other.

    `finish` runs inside the run's transaction after the writes: raising there rolls them back.
    """

    def __init__(self, expected: RecordedPlan | None = None, again: str = "") -> None:
        self.expected = expected
        self.again = again  # the command of a new dry run, for the refusal
        self.digest: str | None = None

    def finish(self, conn: sa.Connection, plan: Plan, tenant_id: str, project: str, dry_run: bool) -> None:
        super().finish(conn, plan, tenant_id, project, dry_run)
        self.digest = plan_digest(plan.report, plan.inserts)
        expected = self.expected
        if expected is not None and self.digest != expected.digest:
            applied = not plan.report.transitions and _applied_already(conn, tenant_id, project, expected)
            raise PlanChanged(changed_message(expected, plan.report, self.again, applied=applied))

    def digest_of(self, report: RetentionReport) -> str:
        """The run's digest; a run that never planned (retention disabled) lists no nodes."""
        return self.digest or plan_digest(report, [])


def _applied_already(conn: sa.Connection, tenant_id: str, project: str, recorded: RecordedPlan) -> bool:
    """Whether every memory the recorded plan moves has its planned status (for the refusal's words)."""
    planned = {memory_id: to for memory_id, _, to, _ in _moves(recorded.report)}
    ids = sorted(planned)
    found: dict[str, str] = {}
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        rows = conn.execute(
            sa.select(memories.c.id, memories.c.status).where(
                memories.c.tenant_id == tenant_id, memories.c.project == project, memories.c.id.in_(chunk)
            )
        )
        found.update({memory_id: status for memory_id, status in rows})
    return bool(planned) and found == planned


def _moves(report: dict[str, Any]) -> list[tuple[str, str | None, str, str]]:
    return [(t["memoryId"], t["fromStatus"], t["toStatus"], t["rule"]) for t in report["transitions"]]


def _move(move: tuple[str, str | None, str, str]) -> str:
    memory_id, was, to, rule = move
    return f"memory {memory_id!r} ({was or 'new'} -> {to}, {rule})"


def changed_message(recorded: RecordedPlan, fresh: RetentionReport, again: str, *, applied: bool) -> str:
    """One line: what differs first between the recorded plan and the fresh one, and what to do."""
    before, after = _moves(recorded.report), _moves(listed(fresh))
    gone = [m for m in before if m not in after]
    new = [m for m in after if m not in before]
    if applied:
        detail = "the plan was applied already (every memory it lists has its planned status)"
    elif gone:
        detail = f"{_move(gone[0])} is no longer planned" + _more(gone)
        detail += "" if after else ", and nothing else is due"
    elif new:
        detail = f"{_move(new[0])} would move too" + _more(new)
    else:
        detail = (
            "the same memories move, but a reason, a skipped memory or a compacted node's content differs"
        )
    return (
        f"the project changed since the dry run: {detail}; nothing was applied. Make a new dry run: {again}"
    )


def _more(moves: list[Any]) -> str:
    return f" (and {len(moves) - 1} more)" if len(moves) > 1 else ""


@dataclass(frozen=True)
class RecordedPlan:
    """A plan file's content: the options that shaped the plan, and the plan (report and digest)."""

    project: str
    tenant: str
    database: str  # the URL as shown: a password is replaced by ***, never stored
    now: str  # RFC 3339, as the report says it
    config_source: str  # where the dry run's config came from (ConfigChoice.describe())
    config_path: str | None  # that file (None: the bundled defaults), for a new dry run
    config_document: dict[str, Any]  # the effective config, in config.yaml's shape
    repo: str | None  # absolute path of the Git repository; None: no branch cleanup
    mainline: str | None  # the mainline the dry run used (with `repo`)
    branches: dict[str, Any] | None  # the branch state the dry run saw (BranchState.to_wire)
    digest: str
    report: dict[str, Any]  # `listed(report)` of the dry run

    def config(self) -> RetentionConfig:
        return parse_config(self.config_document)

    def to_json(self) -> str:
        repo = None
        if self.repo is not None:
            repo = {"path": self.repo, "mainline": self.mainline, "branches": self.branches}
        document = {
            "format": FORMAT,
            "project": self.project,
            "tenant": self.tenant,
            "database": self.database,
            "now": self.now,
            "config": {
                "source": self.config_source,
                "path": self.config_path,
                "document": self.config_document,
            },
            "repo": repo,
            "digest": self.digest,
            "report": self.report,
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RecordedPlan:
        """Parse a plan file; `PlanFileError` says what is wrong with it."""
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise PlanFileError(f"not JSON ({exc})") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise PlanFileError(f'not a retention plan file (no "format": "{FORMAT}")')
        if set(document) != _KEYS:
            odd = sorted(set(document) ^ _KEYS)
            raise PlanFileError(f"not a retention plan file (field {odd[0]!r})")
        config, repo = document["config"], document["repo"]
        try:
            strings = [document[k] for k in ("project", "tenant", "database", "now", "digest")]
            if not all(isinstance(s, str) for s in strings) or not isinstance(document["report"], dict):
                raise TypeError
            plan = cls(
                project=document["project"],
                tenant=document["tenant"],
                database=document["database"],
                now=document["now"],
                config_source=str(config["source"]),
                config_path=None if config["path"] is None else str(config["path"]),
                config_document=dict(config["document"]),
                repo=None if repo is None else str(repo["path"]),
                mainline=None if repo is None else str(repo["mainline"]),
                branches=None if repo is None else dict(repo["branches"]),
                digest=document["digest"],
                report=document["report"],
            )
            _moves(plan.report)
            from_wire(plan.now)
            plan.config()
            if plan.branches is not None:
                BranchState.from_wire(plan.branches)
        except (KeyError, TypeError, ValueError) as exc:
            why = f": {exc}" if isinstance(exc, RetentionConfigError) else ""
            raise PlanFileError(f"not a retention plan file (a field has the wrong shape{why})") from None
        return plan


def read_plan(path: Path) -> RecordedPlan:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PlanFileError(f"cannot read {path}: {reason}") from None
    try:
        return RecordedPlan.from_json(text)
    except PlanFileError as exc:
        raise PlanFileError(f"{path}: {exc}") from None


def plan_directory() -> Path:
    """Where a dry run keeps its plan unless `--plan` says otherwise: the user's state directory
    (`$XDG_STATE_HOME`, default ~/.local/state), `openwop-memory/retention-plans`."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "openwop-memory" / "retention-plans"


def default_plan_path(plan: RecordedPlan) -> Path:
    """`<project>-<16 hex of the file's SHA-256>.json`: one file per distinct plan, never overwritten
    by a different one (a printed apply line keeps naming what its dry run showed)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", plan.project)[:40].strip("._") or "project"
    content = hashlib.sha256(plan.to_json().encode("utf-8")).hexdigest()[:16]
    return plan_directory() / f"{name}-{content}.json"


def write_plan(plan: RecordedPlan, path: Path) -> None:
    """Write beside `path` and rename into place (readable by the user only: it names a database)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(plan.to_json())
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
