"""Phase 11 memory retention: lifecycle states, config, the retention run, reports, restore.

See docs/retention.md for how each rule maps to the retention document.
"""

from reference_host.retention.config import RetentionConfig, RetentionConfigError, load_config, parse_config
from reference_host.retention.engine import RestoreError, RetentionConflict, restore, run_retention
from reference_host.retention.report import Link, RetentionReport, Skip, Transition
from reference_host.retention.states import IllegalTransition, Status, check_transition

__all__ = [
    "IllegalTransition",
    "Link",
    "RestoreError",
    "RetentionConfig",
    "RetentionConfigError",
    "RetentionConflict",
    "RetentionReport",
    "Skip",
    "Status",
    "Transition",
    "check_transition",
    "load_config",
    "parse_config",
    "restore",
    "run_retention",
]
