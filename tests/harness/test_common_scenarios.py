"""A 401/403 is evidence for the auth requirements only (issue 8 §2, §5): the profile-neutral scenarios
do not count a refused key as a held bad-input, envelope or auth check."""

from typing import Any

import httpx

from conformance.client import Reply
from conformance.context import Scenario, Session
from conformance.discovery import Discovery
from conformance.outcomes import Outcome
from conformance.profiles import MemoryProfiles
from conformance.secrecy import Secret
from conformance.verdict import Verdict
from scenarios.common import test_auth, test_errors


class FakeClient:
    """Answers every request with `status_for(method, path, token)` and a flat error envelope."""

    def __init__(self, status_for) -> None:
        self.status_for = status_for
        self.token = Secret("fake-key-for-the-unit-test")
        self.sent: list[tuple[str, str]] = []

    def request(self, method: str, path: str, *, token: Any = "given", **_kwargs: Any) -> Reply:
        self.sent.append((method, path))
        status = self.status_for(method, path, self.token if token == "given" else token)
        body = {"error": "refused", "message": "refused"} if status >= 400 else {"ok": True}
        return Reply(method, path, status, httpx.Headers(), "{}", body)


def _ctx(client: FakeClient, *declared: str) -> Scenario:
    session = Session(client=client, tenant_b=None, discovery=Discovery("http://fake", {}))
    return Scenario(session, Verdict(declared), "unit")


class Distill:
    """Stands in for DistillationSeams: the scenarios only need to know it is there."""


def _profiles() -> MemoryProfiles:
    return MemoryProfiles(compaction=None, distillation=Distill(), retention=None)  # type: ignore[arg-type]


def _results(ctx: Scenario) -> dict[str, Any]:
    return {r.id: r for r in ctx.verdict.resolve(None, None)}


def _grade(ctx: Scenario, requirement: str, probes: list[test_errors.Probe]) -> None:
    """Send the probes as the module's driver does, then grade them as its two tests do."""
    seen = test_errors.Seen()
    test_errors.send_all(ctx, probes, seen)
    test_errors.grade_4xx(ctx, requirement, seen)
    test_errors.grade_envelope(ctx, seen)


def test_bad_input_probes_answered_401_are_blocked_not_held():
    ctx = _ctx(FakeClient(lambda *_: 401), test_errors.BAD_INPUT, test_errors.ENVELOPE)
    _grade(ctx, test_errors.BAD_INPUT, test_errors._required(ctx, _profiles()))
    results = _results(ctx)
    for rid in (test_errors.BAD_INPUT, test_errors.ENVELOPE):
        assert results[rid].outcome is Outcome.BLOCKED and results[rid].assertions == 0, results[rid]
        assert "refused for the key" in results[rid].reason


def test_a_401_among_4xx_answers_is_not_counted():
    answers = iter([401, 400])  # the first probe is refused for the key, the second is judged
    ctx = _ctx(FakeClient(lambda *_: next(answers)), test_errors.BAD_INPUT, test_errors.ENVELOPE)
    _grade(ctx, test_errors.BAD_INPUT, test_errors._required(ctx, _profiles()))
    results = _results(ctx)
    assert results[test_errors.BAD_INPUT].outcome is Outcome.PASS
    assert results[test_errors.BAD_INPUT].assertions == 1
    assert results[test_errors.ENVELOPE].assertions == 1


def test_success_answers_are_not_graded_as_error_envelopes():
    answers = iter([200, 200, 200])
    ctx = _ctx(FakeClient(lambda *_: next(answers)), test_errors.STRICT, test_errors.ENVELOPE)
    _grade(ctx, test_errors.STRICT, test_errors._loose(ctx, _profiles()))
    results = _results(ctx)
    assert results[test_errors.STRICT].outcome is Outcome.WARN
    assert results[test_errors.ENVELOPE].outcome is Outcome.UNSUPPORTED, results[test_errors.ENVELOPE]


def test_a_key_refused_on_every_call_leaves_auth_blocked(monkeypatch):
    ctx = _ctx(FakeClient(lambda *_: 401), test_auth.AUTH)
    monkeypatch.setattr(Scenario, "memory_profiles", lambda self: _profiles())
    test_auth.test_memory_seams_refuse_requests_without_a_valid_key(ctx)
    result = _results(ctx)[test_auth.AUTH]
    assert result.outcome is Outcome.BLOCKED and result.assertions == 0
    assert "key given was refused" in result.reason


def test_auth_counts_only_calls_whose_key_was_accepted(monkeypatch):
    def status(_method, _path, token):
        return 200 if token is not None and token.reveal() == "fake-key-for-the-unit-test" else 401

    ctx = _ctx(FakeClient(status), test_auth.AUTH)
    monkeypatch.setattr(Scenario, "memory_profiles", lambda self: _profiles())
    test_auth.test_memory_seams_refuse_requests_without_a_valid_key(ctx)
    result = _results(ctx)[test_auth.AUTH]
    assert result.outcome is Outcome.PASS and result.assertions == 2  # no key, unknown key
