"""Phase 11 memory retention: lifecycle states, config, the retention run, reports, restore, retrieval.

See docs/retention.md for how each rule maps to the retention document.
"""

from reference_host.retention.branches import BranchState
from reference_host.retention.config import RetentionConfig, RetentionConfigError, load_config, parse_config
from reference_host.retention.diagnostics import compaction_report, retention_status
from reference_host.retention.engine import RestoreError, RetentionConflict, restore, run_retention
from reference_host.retention.gitstate import GitStateError, read_branch_state
from reference_host.retention.report import Link, RetentionReport, Skip, Transition, report_to_wire
from reference_host.retention.retrieval import RetrievalResult, retrieve
from reference_host.retention.states import IllegalTransition, Status, check_transition
from reference_host.retention.wire import memory_to_wire

__all__ = [
    "BranchState",
    "GitStateError",
    "IllegalTransition",
    "Link",
    "RestoreError",
    "RetentionConfig",
    "RetentionConfigError",
    "RetentionConflict",
    "RetentionReport",
    "RetrievalResult",
    "Skip",
    "Status",
    "Transition",
    "check_transition",
    "compaction_report",
    "load_config",
    "memory_to_wire",
    "parse_config",
    "read_branch_state",
    "report_to_wire",
    "restore",
    "retention_status",
    "retrieve",
    "run_retention",
]
