"""Lifecycle rows in the wire `Memory` shape of docs/retention-profile.md.

Why one module: the retrieval engine, the HTTP routes, the CLI and the MCP resources must all render a
memory identically, so the column → camelCase mapping lives in exactly one place.
"""

from __future__ import annotations

from typing import Any

# (column of lifecycle_memories, wire key), in the profile's field order. tenant_id and project are
# deliberately absent: the caller's tenant and the route's project already say which they are.
WIRE_FIELDS: tuple[tuple[str, str], ...] = (
    ("id", "id"),
    ("kind", "kind"),
    ("status", "status"),
    ("title", "title"),
    ("summary", "summary"),
    ("parent_id", "parentId"),
    ("branch", "branch"),
    ("branch_scope", "branchScope"),
    ("branch_promotion_eligible", "branchPromotionEligible"),
    ("under_review", "underReview"),
    ("created_at", "createdAt"),
    ("updated_at", "updatedAt"),
    ("archived_at", "archivedAt"),
    ("archived_reason", "archivedReason"),
    ("previous_status", "previousStatus"),
    ("compacted_into_id", "compactedIntoId"),
    ("last_retrieved_at", "lastRetrievedAt"),
    ("retrieval_count", "retrievalCount"),
    ("expires_at", "expiresAt"),
    ("expiry_reason", "expiryReason"),
)
# Stored as 0/1 integers (portable across SQLite and PostgreSQL), booleans on the wire.
BOOLEAN_COLUMNS = frozenset({"branch_promotion_eligible", "under_review"})


def memory_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    """A `lifecycle_memories` row (as a dict) → the wire `Memory` object."""
    wire: dict[str, Any] = {}
    for column, key in WIRE_FIELDS:
        value = row[column]
        if column in BOOLEAN_COLUMNS:
            value = bool(value)
        elif column == "retrieval_count":
            value = int(value or 0)
        wire[key] = value
    return wire
