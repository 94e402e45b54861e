"""RFC 0062 §B(4): the archive's checksum (`ChecksumPolicy`) and where archives live (`ArchiveStore`)."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime

import sqlalchemy as sa

from mutants.distillation.parts import archives_as, replacing
from mutants.model import Mutant, mutant
from reference_host.archives import Archive, ArchiveStore
from reference_host.distillation_policies import ChecksumPolicy

# -- the checksum -------------------------------------------------------------------------------


class RandomChecksum(ChecksumPolicy):
    def checksum(self, document: dict[str, object], canonical: bytes) -> str:
        return hashlib.sha256(uuid.uuid4().bytes).hexdigest()


class ConstantChecksum(ChecksumPolicy):
    def checksum(self, document: dict[str, object], canonical: bytes) -> str:
        return hashlib.sha256(b"reference-host").hexdigest()


class UppercaseChecksum(ChecksumPolicy):
    def checksum(self, document: dict[str, object], canonical: bytes) -> str:
        return super().checksum(document, canonical).upper()


class JsonDumpsChecksum(ChecksumPolicy):
    """The hash of Python's `json.dumps`, not of the RFC 8785 bytes the archive stores."""

    def checksum(self, document: dict[str, object], canonical: bytes) -> str:
        return hashlib.sha256(json.dumps(document).encode("utf-8")).hexdigest()


# -- the store ----------------------------------------------------------------------------------


class UnstoredArchives(ArchiveStore):
    def put(
        self,
        conn: sa.Connection,
        tenant: str,
        checksum: str,
        memory_ref: str,
        document: str,
        now: datetime,
        retained_until: datetime,
    ) -> None:
        return None


class TenantBlindArchives(ArchiveStore):
    """A read by checksum finds any tenant's archive."""

    def get(self, tenant: str, checksum: str) -> Archive | None:
        return self.first(self.live(checksum))


MUTANTS: tuple[Mutant, ...] = (
    mutant(
        "checksum-random",
        "rfc0062.B4.stable",
        "FAIL",
        "a random checksum per run",
        replacing(distill_checksum=RandomChecksum),
    ).also({"rfc0062.B4.hashes-to-checksum": "FAIL"}),
    mutant(
        "checksum-constant",
        "rfc0062.B4.distinct",
        "FAIL",
        "the same checksum for every archive",
        replacing(distill_checksum=ConstantChecksum),
    ).also({"rfc0062.B4.hashes-to-checksum": "FAIL"}),
    mutant(
        "checksum-uppercase",
        "rfc0062.B4.checksum-format",
        "WARN",
        "uppercase hex checksum",
        replacing(distill_checksum=UppercaseChecksum),
    ),
    mutant(
        "archive-checksum-mismatch",
        "rfc0062.B4.hashes-to-checksum",
        "FAIL",
        "checksum over json.dumps, not RFC 8785",
        replacing(distill_checksum=JsonDumpsChecksum),
    ),
    mutant(
        "archive-not-stored",
        "rfc0062.B4.addressable",
        "FAIL",
        "archive never stored, route 404s",
        replacing(archive_store=archives_as(UnstoredArchives)),
    ).also({"rfc0062.B4.hashes-to-checksum": "BLOCKED"}),
    mutant(
        "distill-tenant-leak",
        "rfc0062.C.archive-tenant-isolated",
        "FAIL",
        "archive GET ignores the tenant",
        replacing(archive_store=archives_as(TenantBlindArchives)),
    ).also({"cti1.no-cross-tenant-data": "FAIL"}),  # A's archive, naming A's memoryRef, answered to B
)
