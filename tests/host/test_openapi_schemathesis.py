"""The host holds to its own `/openapi.json`: schemathesis against a live host, on SQLite and PostgreSQL.

Every built-in check is on, positive and negative data, the examples, coverage and fuzzing phases,
a fixed seed (derandomized) and a bounded budget: a 5xx, an answer the document does not describe
(status, content type, body schema), a 4xx that is not the flat envelope, negative data accepted, or
schema-valid data refused all fail. A schema-valid request may be refused only for a rule the schema
cannot state, and only for one `reference_host.openapi.SCHEMA_VALID_REFUSALS` lists (the document
names them too). Real HTTP on loopback, tenant key in the `Authorization` header, test seams on.

The budget is `OPENWOP_SCHEMATHESIS_EXAMPLES` examples per operation and phase (CI: a few hundred
requests per backend); `bench/schemathesis_soak.py` runs this same file with a large budget and
reads the figures it writes to `OPENWOP_SCHEMATHESIS_RESULTS`.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from conftest import fresh_postgres_database
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from reference_host.config import HostConfig
from reference_host.openapi import schema_valid_refusal
from reference_host.server import start_in_thread

pytestmark = pytest.mark.slow  # the second tier: `make test-slow`, run by .ci/run

EXAMPLES = int(os.environ.get("OPENWOP_SCHEMATHESIS_EXAMPLES", "6"))
RESULTS = os.environ.get("OPENWOP_SCHEMATHESIS_RESULTS")
SEED = 20260009
ENVELOPE_KEYS = {"error", "message", "details"}
# 413 is a rejection too: a content over maxLength is refused as too large, not as malformed.
NEGATIVE_EXPECTED = ["400", "401", "404", "405", "409", "413", "415", "422"]

_lock = threading.Lock()
_figures: dict[str, Counter[str]] = {}


class LiveHost:
    def __init__(self, backend: str, url: str, key: str) -> None:
        self.backend, self.url, self.key = backend, url, key


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def live_host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveHost]:
    """One host per backend for the whole module (schemathesis writes freely into it)."""
    if request.param == "sqlite":
        database = f"sqlite:///{tmp_path_factory.mktemp('schemathesis') / 'host.db'}"
    else:
        database = fresh_postgres_database(request.getfixturevalue("postgres_server"))
    key = secrets.token_urlsafe(18)
    config = HostConfig(
        api_keys={key: "tenant-a", secrets.token_urlsafe(18): "tenant-b"},
        database_url=database,
        test_seams=True,
    )
    running = start_in_thread(config)
    try:
        yield LiveHost(request.param, running.url, key)
    finally:
        running.stop()
        _write_results()


@pytest.fixture(scope="module")
def api_schema(live_host: LiveHost) -> Any:
    config = schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"mode": "all", "max-examples": EXAMPLES, "deterministic": True},
            "auth": {"openapi": {"bearer": {"bearer": live_host.key}}},
            "checks": {
                "enabled": True,
                "negative_data_rejection": {"expected-statuses": NEGATIVE_EXPECTED},
            },
            "output": {"sanitization": {"enabled": False}},
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
            },
        }
    )
    return schemathesis.openapi.from_url(f"{live_host.url}/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("api_schema")


def flat_envelope(ctx: Any, response: Any, case: Any) -> None:
    """Every 4xx and 5xx is `{error, message, details?}` with a non-empty code and message."""
    if response.status_code < 400:
        return
    body = response.json()
    assert isinstance(body, dict) and set(body) <= ENVELOPE_KEYS, f"not the flat envelope: {body!r}"
    assert isinstance(body.get("error"), str) and body["error"], f"no error code: {body!r}"
    assert isinstance(body.get("message"), str) and body["message"], f"no message: {body!r}"


def accepted_or_documented_refusal(ctx: Any, response: Any, case: Any) -> None:
    """schemathesis's positive_data_acceptance, except the refusals the document lists."""
    try:
        positive_data_acceptance(ctx, response, case)
    except Exception:
        body = response.json() if response.status_code >= 400 else None
        if not schema_valid_refusal(case.method.lower(), case.path, response.status_code, body):
            raise


def _record(backend: str, case: Any, status: int) -> None:
    mode = case.meta.generation.mode.value if case.meta is not None else "explicit"
    with _lock:
        figures = _figures.setdefault(backend, Counter())
        figures["requests"] += 1
        figures[f"status_{status}"] += 1
        figures[f"mode_{mode}"] += 1
        if status >= 500:
            figures["server_errors"] += 1


def _record_failure(backend: str) -> None:
    with _lock:
        _figures.setdefault(backend, Counter())["violations"] += 1


def _write_results() -> None:
    if not RESULTS:
        return
    with _lock:
        Path(RESULTS).write_text(json.dumps({k: dict(v) for k, v in _figures.items()}, indent=2))


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_host_holds_to_its_openapi_document(case: Any, live_host: LiveHost) -> None:
    response = case.call()
    _record(live_host.backend, case, response.status_code)
    try:
        case.validate_response(
            response,
            excluded_checks=[positive_data_acceptance],
            additional_checks=[flat_envelope, accepted_or_documented_refusal],
        )
    except Exception:
        _record_failure(live_host.backend)
        raise
