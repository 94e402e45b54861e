"""Scheduled distillation (APScheduler) on both backends, without waiting for 03:00: the job's next fire
time is checked, then the job is moved to now and the event log polled for the scheduled run."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from typer.testing import CliRunner

from conformance.schemas import validate
from reference_host import cli
from reference_host.tokens import count_tokens

PROSE = [
    "The platform team moved the weekly sync to Thursday afternoons.",
    "Customers on the starter plan asked for CSV export.",
    "Invoices for the Lisbon office are issued in euros.",
    "The design review approved the new onboarding checklist.",
]


class MutableClock:
    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def client(host, token):
    return httpx.Client(base_url=host.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def seed(c, ref, texts, prefix="e"):
    entries = [{"id": f"{prefix}{i}", "content": t} for i, t in enumerate(texts)]
    reply = c.post("/v1/test/memory/seed", json={"memoryRef": ref, "entries": entries})
    assert reply.status_code == 201, reply.text


def compacted(c):
    return [
        e["payload"] for e in c.get("/v1/host/events", params={"type": "memory.compacted"}).json()["events"]
    ]


def next_three_am(now: datetime) -> datetime:
    candidate = now.replace(hour=3, minute=0, second=0, microsecond=0)
    return candidate if candidate > now else candidate + timedelta(days=1)


def test_nightly_job_fires_and_distills_every_scope(start_host, database_url):
    host = start_host(database_url=database_url, distill_cron="0 3 * * *", distill_budget=4000)
    scheduler = host.running.app.state.scheduler
    assert scheduler.scheduler.running
    assert scheduler.job.next_run_time == next_three_am(datetime.now(UTC))
    with client(host, host.token_a) as a, client(host, host.token_b) as b:
        seed(a, "nightly", PROSE)
        seed(b, "nightly", PROSE[:2])
        done = a.post(
            "/v1/host/sample/memory/distill", json={"memoryRef": "already", "sources": ["distilled before"]}
        )
        assert done.status_code == 200
        scheduler.job.modify(next_run_time=datetime.now(UTC))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            mine = [p for p in compacted(a) if p["memoryRef"] == "nightly"]
            theirs = compacted(b)
            if mine and theirs:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the scheduled run never logged memory.compacted")
        (event,) = mine
        assert event["trigger"] == "host-managed"
        assert event["sourceCount"] == 4 and event["sourceIds"] == ["e0", "e1", "e2", "e3"]
        assert event["distillation"]["tokenBudget"] == 4000
        assert 0 < event["distillation"]["tokensUsed"] <= 4000
        assert event["distillation"]["indexUpdated"] is True
        assert validate("run-event-payloads#/$defs/memoryCompacted", event) == []
        assert [p["sourceCount"] for p in theirs] == [2]
        assert [p["memoryRef"] for p in compacted(a)].count("already") == 1  # only the seam's own run
        index = a.get("/v1/host/workspace/files/MEMORY-INDEX.json").json()
        assert "nightly" in index["content"] and "already" in index["content"]
    # after firing, the job waits for the next 03:00 again
    deadline = time.monotonic() + 5
    while scheduler.job.next_run_time != next_three_am(datetime.now(UTC)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert scheduler.job.next_run_time == next_three_am(datetime.now(UTC))
    assert scheduler.tick().distilled == []  # nothing new: outputs are not re-distilled
    host.running.stop()
    assert not scheduler.scheduler.running


def test_tick_halves_an_over_budget_snapshot_and_collects_archives(start_host, database_url):
    clock = MutableClock()
    texts = [" ".join([t] * 3) for t in PROSE]
    budget = 2 * count_tokens("\n".join(texts[:2]))  # input + output of the two oldest entries
    assert 2 * count_tokens("\n".join(texts)) > budget
    host = start_host(database_url=database_url, distill_cron="0 3 * * *", distill_budget=budget, clock=clock)
    scheduler = host.running.app.state.scheduler
    with client(host, host.token_a) as a:
        seed(a, "big", texts)
        first = scheduler.tick()
        assert [(t, r) for t, r, _ in first.distilled] == [("tenant-a", "big")]
        (event,) = compacted(a)
        assert event["sourceIds"] == ["e0", "e1"] and event["distillation"]["tokensUsed"] == budget
        second = scheduler.tick()  # e2, e3 and the first output (3) do not fit: 1 does
        assert [r for _, r, _ in second.distilled] == ["big"]
        assert compacted(a)[-1]["sourceIds"] == ["e2"]
        third = scheduler.tick()  # e3 and the outputs, as far as they fit
        assert third.collected == 0 and [r for _, r, _ in third.distilled] == ["big"]
        runs = len(compacted(a))
        assert runs == 3
        clock.offset = timedelta(days=30, minutes=1)
        fourth = scheduler.tick()
        assert fourth.collected == runs  # every earlier archive is past retention; new ones are not
        checksum = first.distilled[0][2]
        assert a.get(f"/v1/host/sample/memory/archives/{checksum}").status_code == 404


def test_no_scheduler_without_cron(start_host):
    host = start_host()
    assert host.running.app.state.scheduler is None


def test_cli_passes_cron_and_budget(monkeypatch, tmp_path):
    captured = {}
    monkeypatch.setattr("reference_host.server.serve_forever", lambda config, *_: captured.update(c=config))
    runner = CliRunner()
    base = ["serve", "--api-key", "k=t", "--database-url", f"sqlite:///{tmp_path / 'h.db'}"]
    ok = runner.invoke(cli.app, [*base, "--distill-cron", "0 3 * * *", "--distill-budget", "500"])
    assert ok.exit_code == 0, ok.output
    assert (captured["c"].distill_cron, captured["c"].distill_budget) == ("0 3 * * *", 500)
    bad = runner.invoke(cli.app, [*base, "--distill-cron", "61 3 * * *"])
    assert bad.exit_code != 0 and "crontab" in bad.output
    lone = runner.invoke(cli.app, [*base, "--distill-budget", "500"])
    assert lone.exit_code != 0 and "--distill-cron" in lone.output
    zero = runner.invoke(cli.app, [*base, "--distill-cron", "0 3 * * *", "--distill-budget", "0"])
    assert zero.exit_code != 0
