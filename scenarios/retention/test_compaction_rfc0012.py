"""A retention run's compaction is the host's RFC 0012 compaction: the event (§B) and SR-1 (§D) hold too.

Event: a fresh project holds two eligible groups (min_related_memories memories each, under two parent
scopes) and one group a memory short; a second project holds one eligible group. A dry run must log
nothing; a real run of each project must log exactly one `memory.compacted` event per compacted node
(found by its outputId in `GET /v1/host/events`), naming exactly the node's sources as read back.

SR-1: one eligible group whose summaries and titles carry the suite's secret corpus (secret-shaped
values in framing sentences, secrets split across two consecutive sources, form leaks, a registered
BYOK secret when the host has a registration seam) next to plain prose. The node read back must carry
none of the secrets the host is bound to redact (the registered value, and each corpus secret its own
put redacts: RFC 0012 §D), no form leak, a marker wherever it kept such a secret's surrounding text,
and some text beside the markers (a node that summarises in its own words need not keep the prose
verbatim: "Combined summary of all source memories"); the sources stay verbatim. No fragment of a
secret stands beside its marker (a SHOULD of its own). The corpus sentences, what binds and the checks
are the shared SR-1 oracle's (conformance/oracles/sr1.py).
"""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.context import Driver, Scenario
from conformance.observed import drive_once
from conformance.oracles import sr1
from conformance.oracles.secrets import find_leaks, markers
from conformance.outcomes import Blocked
from conformance.profiles.retention.checks import Gated, apart, applies, compaction_on, ids_of
from conformance.profiles.retention.seams import (
    DAY,
    NOW,
    Listing,
    RetentionSeams,
    Settings,
    memory,
    plain_kind,
    transitions,
)
from conformance.surfaces import MemorySurfaces, read_events

EVENT, SR1 = "p11.compaction.rfc0012-event", "p11.compaction.sr1-carry-forward"
PARTIAL = "p11.compaction.no-partial-disclosure"
TITLE_MAX = 512  # docs/retention-profile.md: a title is at most 512 characters
Memories = list[dict[str, Any]]


def _limits(seams: RetentionSeams) -> tuple[int, Any]:
    """(group size, age of an eligible memory: a day past min_age_days), as advertised."""
    size, min_age = seams.settings.group_limits()
    return size, min_age + DAY


def _group(host: Driver, settings: Settings, label: str, count: int, age: Any, kind: str) -> Memories:
    """`count` memories of a group of their own (conformance/profiles/retention/checks.py `apart`),
    oldest first by creation."""
    own = apart(host, settings, kind)
    return [memory(host.unique_id(f"{label}{n}"), age=age + (count - n) * DAY, **own) for n in range(count)]


def _new_nodes(seams: RetentionSeams, project: str, before: Listing) -> tuple[Listing, Memories]:
    after = seams.listing(project)
    return after, [row for row in after.added(before) if row.get("status") == "compacted"]


def _compaction_ids(report: dict[str, Any]) -> set[Any]:
    return {t.get("memoryId") for t in transitions(report) if t.get("rule") == "compaction"}


def _payload(event: dict[str, Any]) -> dict[str, Any]:
    """An event's payload object ({} when it is not one, e.g. a JSON string)."""
    payload = event.get("payload")
    return payload if isinstance(payload, dict) else {}


def _naming(logged: list[dict[str, Any]], ids: set[Any]) -> list[dict[str, Any]]:
    """Logged events whose outputId or sourceIds name any of `ids`."""
    found = []
    for event in logged:
        payload = _payload(event)
        sources = payload.get("sourceIds") if isinstance(payload.get("sourceIds"), list) else []
        if str(payload.get("outputId")) in ids or set(map(str, sources)) & ids:
            found.append(event)
    return found


# -- the memory.compacted event ------------------------------------------------------------------------


@dataclass
class Events(Gated):
    """A dry run, then real runs of two projects (two eligible groups and a short one here, one group
    there) and a second real run, with the event log read after the dry run and after the real ones."""

    no_log: bool = False
    size: int = 0
    seeded: set[str] = field(default_factory=set)
    short: Memories = field(default_factory=list)
    other: Memories = field(default_factory=list)
    dry_nodes: set[Any] = field(default_factory=set)
    after_dry: list[dict[str, Any]] | None = None  # the event log after the dry run
    after: Listing | None = None
    nodes: Memories = field(default_factory=list)
    other_after: Listing | None = None
    other_nodes: Memories = field(default_factory=list)
    logged: list[dict[str, Any]] | None = None  # the event log after the real runs


def _seed_event_groups(
    host: Driver, seams: RetentionSeams, seen: Events, age: Any
) -> tuple[str, str, Listing, Listing]:
    settings, size = seams.settings, seen.size
    kind = plain_kind(settings)
    first, second = (
        _group(host, settings, "first", size, age, kind),
        _group(host, settings, "second", size, age, kind),
    )
    seen.short = _group(host, settings, "short", size - 1, age, kind)
    seen.other = _group(host, settings, "other", size, age, kind)
    project, other_project = host.unique_ref("event"), host.unique_ref("event-other")
    in_project = [*first, *second, *seen.short]
    seams.seed(project, in_project)
    seams.seed(other_project, seen.other)
    seen.seeded = ids_of(in_project)
    return project, other_project, seams.read_back(project, in_project), seams.listing(other_project)


def _drive_events(host: Driver, seen: Events) -> None:
    if (seams := compaction_on(host, seen)) is None:
        return
    seen.size, age = _limits(seams)
    if read_events(host.client, "memory.compacted") is None:
        seen.no_log = True
        return
    project, other_project, before, other_before = _seed_event_groups(host, seams, seen, age)
    seen.dry_nodes = _compaction_ids(seams.run(project, NOW, dry_run=True))
    if not seen.dry_nodes:
        raise Blocked(
            "the dry run reports no compaction of the eligible groups (see compacts-eligible-group)"
        )
    seen.after_dry = read_events(host.client, "memory.compacted") or []
    seams.run(project, NOW, dry_run=False)
    seams.run(other_project, NOW, dry_run=False)
    seen.after, seen.nodes = _new_nodes(seams, project, before)
    seen.other_after, seen.other_nodes = _new_nodes(seams, other_project, other_before)
    if len(seen.nodes) != 2 or len(seen.other_nodes) != 1:
        raise Blocked(
            f"the real runs did not make one node per eligible group ({len(seen.nodes)} of 2 in the project, "
            f"{len(seen.other_nodes)} of 1 in the other): nothing to match events to "
            "(see compacts-eligible-group)"
        )
    seams.run(project, NOW, dry_run=False)  # nothing left to compact: must not log the nodes again
    seen.logged = read_events(host.client, "memory.compacted") or []


events = drive_once(_drive_events, Events, name="events")


def _check_dry(ctx: Scenario, seen: Events) -> None:
    named = _naming(seen.after_dry, seen.dry_nodes | seen.seeded)
    ctx.check(
        EVENT,
        not named,
        {"dryRunNodes": sorted(seen.dry_nodes), "eventsNamingThem": named[:3]},
        surface="event-log",
        note="negative: after a dry run no logged event names its predicted nodes or the seeded memories",
    )


def _check_node_event(
    ctx: Scenario, node: dict[str, Any], listing: Listing, logged: list[dict[str, Any]]
) -> Any:
    """The one logged event of a node, valid and naming exactly its sources; its memoryRef (or None)."""
    node_id, summary = node.get("id"), node.get("summary")
    sources = listing.sources(node_id)
    mine = [e for e in logged if _payload(e).get("outputId") == node_id]
    ctx.check(
        EVENT,
        len(mine) == 1 and mine[0].get("type") == "memory.compacted",
        {"node": node_id, "events": len(mine), "types": [e.get("type") for e in mine]},
        surface="event-log",
        note="exactly one logged memory.compacted event names the node as its outputId (after two runs)",
    )
    if not mine:
        return None
    payload = _payload(mine[0])
    schema = ctx.discovery.major.event_schema
    ctx.check_schema(
        EVENT, schema, payload, surface="event-log", note=f"the event of {node_id} is valid against {schema}"
    )
    listed = payload.get("sourceIds")
    ctx.check(
        EVENT,
        isinstance(listed, list)
        and all(isinstance(s, str) for s in listed)
        and len(listed) == len(set(listed))
        and set(listed) == sources,
        {"node": node_id, "sourceIds": listed, "readBackSources": sorted(sources)},
        surface="event-log",
        note="sourceIds are exactly the node's compaction_source memories, each once",
    )
    ctx.check(
        EVENT,
        payload.get("sourceCount") == len(sources) > 0,
        {"node": node_id, "sourceCount": payload.get("sourceCount"), "readBack": len(sources)},
        surface="event-log",
        note="sourceCount is the number of the node's sources",
    )
    ctx.check(
        EVENT,
        isinstance(summary, str) and payload.get("byteSize") == len(summary.encode("utf-8")),
        {
            "node": node_id,
            "byteSize": payload.get("byteSize"),
            "summaryUtf8": len(summary.encode("utf-8")) if isinstance(summary, str) else None,
        },
        surface="event-log",
        note="byteSize is the UTF-8 length of the node's summary as read back",
    )
    return payload.get("memoryRef")


def _check_negatives(ctx: Scenario, seen: Events) -> None:
    """No event for what was not compacted, none crossing projects."""
    short_ids, logged = ids_of(seen.short), seen.logged
    ctx.check(
        EVENT,
        not _naming(logged, short_ids)
        and not any((seen.after.memories.get(i) or {}).get("compactedIntoId") for i in short_ids),
        {"shortGroup": sorted(short_ids), "eventsNamingThem": _naming(logged, short_ids)[:3]},
        surface="event-log",
        note=f"negative: no event names the group of {seen.size - 1} (below min_related_memories)",
    )
    theirs = ids_of(seen.other) | {seen.other_nodes[0].get("id")}
    ours = _naming(logged, seen.seeded | {n.get("id") for n in seen.nodes})
    crossing = [_payload(e).get("outputId") for e in ours if _naming([e], theirs)]
    ctx.check(
        EVENT,
        not crossing,
        {"otherProjectNode": seen.other_nodes[0].get("id"), "eventsMixingProjects": crossing},
        surface="event-log",
        note="negative: the other project's compaction is not this project's event, and no event mixes them",
    )


@pytest.mark.requirement(EVENT)
def test_real_compaction_logs_one_memory_compacted_event_per_node(ctx, events):
    with events as seen:
        if not applies(ctx, seen, EVENT):
            return
        if seen.no_log:
            ctx.block(EVENT, "the host offers no event log (GET /v1/host/events → 404)")
            return
        if seen.logged is None:  # gate first: the dry-run negative alone grades nothing
            return
        _check_dry(ctx, seen)
        placed = [*((n, seen.after) for n in seen.nodes), (seen.other_nodes[0], seen.other_after)]
        first_ref, second_ref, other_ref = (
            _check_node_event(ctx, n, listing, seen.logged) for n, listing in placed
        )
        ctx.check(
            EVENT,
            isinstance(first_ref, str) and first_ref == second_ref and other_ref != first_ref,
            {"project": [first_ref, second_ref], "otherProject": other_ref},
            surface="event-log",
            note="memoryRef is the same for both nodes of the project and differs for the other project's "
            "node",
        )
        _check_negatives(ctx, seen)


# -- SR-1 carried forward into the node ------------------------------------------------------------------


def _sr1_group(host: Driver, settings: Settings, plan: sr1.Plan, size: int, age: Any, kind: str) -> Memories:
    """The group's memories, the corpus sentences spread over their summaries and titles; the registered
    value split across the second and third sources when the group has three (`_splits`)."""
    corpus = plan.corpus
    summaries: list[list[str]] = [[] for _ in range(size)]
    titles = [f"Runbook {n}" for n in range(size)]
    for n, prose in enumerate(plan.prose):
        summaries[n % size].append(prose)
    for n, (_, sentence) in enumerate(plan.framed):
        summaries[(n + 1) % size].append(sentence)
    for n, sentence in enumerate(plan.form_leaks):
        summaries[n % size].append(sentence)
    summaries[-1].append(plan.registered)
    shortest = sorted(corpus.secrets, key=lambda s: len(s.value))
    for n in range(size):
        titles[n] += f": rotated {shortest[n % len(shortest)].value}"
    titles[-1] += f" (passphrase {corpus.registered.value})"
    # The split secret: the head ends the oldest source's summary, the tail starts the next one's.
    texts = [" ".join(parts) for parts in summaries]
    texts[0] += f" {plan.split_head}"
    texts[1] = f"{plan.split_tail} {texts[1]}"
    if sr1.REGISTERED_SPLIT in _splits(size):
        texts[1] += f" {plan.registered_head}"
        texts[2] = f"{plan.registered_tail} {texts[2]}"
    group = _group(host, settings, "secret", size, age, kind)
    for item, title, text in zip(group, titles, texts, strict=True):
        item["title"], item["summary"] = title, text
    return group


def _splits(size: int) -> frozenset[str]:
    """The split secrets a group of `size` holds: the corpus one across its first two sources, the
    registered value across the next two when there are three."""
    return frozenset({sr1.CORPUS_SPLIT, sr1.REGISTERED_SPLIT} if size >= 3 else {sr1.CORPUS_SPLIT})


@dataclass
class Secrets(Gated):
    plan: sr1.Plan = field(default_factory=sr1.plan)
    group: Memories = field(default_factory=list)
    registered: bool | None = None
    bound: sr1.Bound | None = None  # what the host is bound to redact (its put baseline, registration)
    dry: dict[str, Any] | None = None
    real: dict[str, Any] | None = None
    after: Listing | None = None
    node: dict[str, Any] | None = None

    def texts(self) -> tuple[str, str]:
        title, summary = (self.node.get(k) for k in ("title", "summary"))
        return (title if isinstance(title, str) else ""), (summary if isinstance(summary, str) else "")

    def planted(self) -> dict[str, str]:
        """Every secret planted in the sources (the registered one once registered): the control's."""
        secrets = {s.id: s.sensitive for s in self.plan.corpus.secrets}
        if self.registered:
            secrets[self.plan.corpus.registered.secret_id] = self.plan.corpus.registered.value
        return secrets


def _drive_secrets(host: Driver, seen: Secrets) -> None:
    if (seams := compaction_on(host, seen)) is None:
        return
    size, age = _limits(seams)
    seen.group = _sr1_group(host, seams.settings, seen.plan, size, age, plain_kind(seams.settings))
    project = host.unique_ref("sr1")
    seams.seed(project, seen.group)
    before = seams.listing(project)
    # Registered after seeding: only redaction at compaction time can know this secret.
    seen.registered = sr1.register(MemorySurfaces(host.client), seen.plan.corpus)
    seen.bound = sr1.bound(host, seen.plan, registered=seen.registered, splits=_splits(size))
    seen.dry = seams.run(project, NOW, dry_run=True)
    seen.real = seams.run(project, NOW, dry_run=False)
    seen.after, nodes = _new_nodes(seams, project, before)
    if len(nodes) != 1:
        raise Blocked(f"the real run made {len(nodes)} compacted nodes, not 1 (see compacts-eligible-group)")
    seen.node = nodes[0]


secrets = drive_once(_drive_secrets, Secrets, name="secrets")


def _check_sources(ctx: Scenario, seen: Secrets) -> list[dict[str, Any]]:
    """Control: the oracle finds every planted secret in the sources as read back; the sources rows."""
    sources = [seen.after.memories.get(item["id"]) or {} for item in seen.group]
    source_text = "\n".join(f"{row.get('title')}\n{row.get('summary')}" for row in sources)
    secrets = seen.planted()
    planted = {sid for sid in secrets if find_leaks(source_text, {sid: secrets[sid]})}
    ctx.check(
        SR1,
        planted == set(secrets),
        {
            "plantedSecrets": len(secrets),
            "foundInSources": len(planted),
            "missing": sorted(set(secrets) - planted),
        },
        surface="retention-memories",
        note="control: the oracle finds every planted secret in the sources as read back",
    )
    return sources


def _check_leaks(ctx: Scenario, seen: Secrets) -> None:
    """No secret the host is bound to redact in the node's title or summary, whole or split, nor in the
    reports; no form leak (which binds every host). A split secret nothing binds is not looked for."""
    title, summary, bound = *seen.texts(), seen.bound
    secrets = bound.secrets()
    for sid, secret in secrets.items():
        for label, text in (("title", title), ("summary", summary)):
            sr1.check_no_leak(
                ctx,
                SR1,
                "retention-memories",
                label,
                text,
                {sid: secret},
                f"{sid} absent from the node's {label}",
            )
    if bound.splits():
        sr1.check_split_secret(ctx, SR1, "retention-memories", "the node's summary", summary, bound)
    sr1.check_no_form_leak(ctx, SR1, "retention-memories", "the node", f"{title}\n{summary}", bound)
    if not secrets:
        return
    for label, report in (("dry-run report", seen.dry), ("real-run report", seen.real)):
        sr1.check_no_leak(
            ctx,
            SR1,
            "retention-run",
            label,
            json.dumps(report),
            secrets,
            f"the {label} carries no secret the host is bound to redact",
        )


def _check_in_place(ctx: Scenario, seen: Secrets) -> None:
    """Where the node kept the prose around a secret, a [REDACTED:…] marker stands where the secret was
    (SR-1: replaced, not silently dropped). A node that summarises in its own words keeps no frame, and
    then there is no place to look at: the leak checks still hold it to SR-1."""
    title, summary, bound = *seen.texts(), seen.bound
    registered_id = seen.plan.corpus.registered.secret_id
    frames = {sid: frame for sid, frame in bound.frames().items() if sid != registered_id}
    dropped = dict.fromkeys(sr1.unmarked(summary, frames), True)
    in_title = sr1.segments(title, ": rotated ", ["; ", " ("])
    if len(title) >= TITLE_MAX:  # a title capped at its limit may cut its last secret's marker short
        in_title = in_title[:-1]
    # A title segment is judged when the secret planted there binds the host (_sr1_group's order).
    shortest = sorted(seen.plan.corpus.secrets, key=lambda s: len(s.value))
    judged = [n for n in range(len(in_title)) if shortest[n % len(shortest)].id in frames]
    # Keys name places, never the text there (which would be the secret itself).
    dropped.update({f"title segment {n}": True for n in judged if not markers(in_title[n])})
    if seen.registered:
        marker = f"[REDACTED:{registered_id}]"
        if any(marker not in segment for segment in sr1.segments(summary, sr1.VAULT, [sr1.VAULT_END])):
            dropped[registered_id] = True
    if not frames and not seen.registered:
        return  # nothing bound whose place to look at: the form-leak check still holds the node to SR-1
    ctx.check(
        SR1,
        not dropped,
        {"markers": markers(f"{title}\n{summary}")[:12], "placesWithoutTheirMarker": sorted(dropped)[:10]},
        surface="retention-memories",
        note="every secret whose surrounding text the node kept is replaced in place by a [REDACTED:…] "
        "marker (the registered BYOK secret by [REDACTED:<secretId>])",
    )


@pytest.mark.requirement(SR1)
def test_secrets_in_sources_never_reach_the_compacted_node(ctx, secrets):
    with secrets as seen:
        if not applies(ctx, seen, SR1) or seen.node is None:
            return
        sources = _check_sources(ctx, seen)
        _check_leaks(ctx, seen)
        _check_in_place(ctx, seen)
        sr1.check_text_beside_markers(
            ctx,
            SR1,
            "retention-memories",
            "the node's summary",
            seen.texts()[1],
            seen.bound,
            note="negative: redaction did not empty the node's summary (text remains beside the markers)",
        )
        altered = [
            item["id"]
            for item, row in zip(seen.group, sources, strict=True)
            if (row.get("title"), row.get("summary")) != (item["title"], item["summary"])
        ]
        ctx.check(
            SR1,
            not altered,
            {"sources": [item["id"] for item in seen.group], "altered": altered},
            surface="retention-memories",
            note="negative: the sources themselves are not redacted (preserved evidence, read back verbatim)",
        )


@pytest.mark.requirement(PARTIAL)
def test_no_fragment_of_a_secret_beside_its_marker(ctx, secrets):
    with secrets as seen:
        if not applies(ctx, seen, PARTIAL) or seen.node is None:
            return
        title, summary = seen.texts()
        sr1.check_no_partial_disclosure(
            ctx, PARTIAL, "retention-memories", "the node", f"{title}\n{summary}", seen.bound
        )
