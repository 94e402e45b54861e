"""A retention run's compaction is the host's RFC 0012 compaction: the event (§B) and SR-1 (§D) hold too.

Event: a fresh project holds two eligible groups (min_related_memories memories each, under two parent
scopes) and one group a memory short; a second project holds one eligible group. A dry run must log
nothing; a real run of each project must log exactly one `memory.compacted` event per compacted node
(found by its outputId in `GET /v1/host/events`), naming exactly the node's sources as read back.

SR-1: one eligible group whose summaries and titles carry the suite's secret corpus (secret-shaped
values in framing sentences, a secret split across two consecutive sources, form leaks, a registered
BYOK secret when the host has a registration seam) next to plain prose. The node read back must carry
none of them, a marker wherever it kept a secret's surrounding text, and some text beside the markers
(a node that summarises in its own words need not keep the prose verbatim: "Combined summary of all
source memories"); the sources stay verbatim.
"""

import json

import pytest

from conformance.oracles.secrets import MARKER_RE, find_form_leaks, find_leaks, load_corpus, markers
from conformance.outcomes import Blocked
from conformance.retention_checks import compaction_on, ids_of
from conformance.retention_seams import DAY, NOW, memory, plain_kind, transitions
from conformance.seams import CompactionSeams, read_events

EVENT, SR1 = "p11.compaction.rfc0012-event", "p11.compaction.sr1-carry-forward"
SCHEMA = "run-event-payloads#/$defs/memoryCompacted"
FRAME, END = "Ticket {n}: the deploy used ", " yesterday."
VAULT = "Vault note: the staging passphrase is "
TITLE_MAX = 512  # docs/retention-profile.md: a title is at most 512 characters


def _limits(seams):
    """(group size, age of an eligible memory: a day past min_age_days), as advertised."""
    size, min_age = seams.settings.group_limits()
    return size, min_age + DAY


def _group(ctx, label, count, age, **attributes):
    """`count` memories under one fresh parent scope, oldest first by creation."""
    scope = ctx.unique_id(f"{label}-scope")
    return [
        memory(ctx.unique_id(f"{label}{n}"), age=age + (count - n) * DAY, parentId=scope, **attributes)
        for n in range(count)
    ]


def _new_nodes(seams, project, before):
    after = seams.listing(project)
    return after, [row for row in after.added(before) if row.get("status") == "compacted"]


def _compaction_ids(report):
    return {t.get("memoryId") for t in transitions(report) if t.get("rule") == "compaction"}


def _payload(event):
    """An event's payload object ({} when it is not one, e.g. a JSON string)."""
    payload = event.get("payload")
    return payload if isinstance(payload, dict) else {}


def _naming(logged, ids):
    """Logged events whose outputId or sourceIds name any of `ids`."""
    found = []
    for event in logged:
        payload = _payload(event)
        sources = payload.get("sourceIds") if isinstance(payload.get("sourceIds"), list) else []
        if str(payload.get("outputId")) in ids or set(map(str, sources)) & ids:
            found.append(event)
    return found


@pytest.mark.requirement(EVENT)
def test_real_compaction_logs_one_memory_compacted_event_per_node(ctx):
    if (seams := compaction_on(ctx, EVENT)) is None:
        return
    size, age = _limits(seams)
    if read_events(ctx.client, "memory.compacted") is None:
        ctx.block(EVENT, "the host offers no event log (GET /v1/host/events → 404)")
        return
    kind = plain_kind(seams.settings)
    first, second = _group(ctx, "first", size, age, kind=kind), _group(ctx, "second", size, age, kind=kind)
    short = _group(ctx, "short", size - 1, age, kind=kind)
    other = _group(ctx, "other", size, age, kind=kind)
    project, other_project = ctx.unique_ref("event"), ctx.unique_ref("event-other")
    in_project = [*first, *second, *short]
    seams.seed(project, in_project)
    seams.seed(other_project, other)
    seeded = ids_of(in_project)
    before, other_before = seams.read_back(project, in_project), seams.listing(other_project)

    # -- a dry run logs nothing --------------------------------------------------------------------------
    dry = seams.run(project, NOW, dry_run=True)
    dry_nodes = _compaction_ids(dry)
    if not dry_nodes:
        raise Blocked(
            "the dry run reports no compaction of the eligible groups (see compacts-eligible-group)"
        )
    logged = read_events(ctx.client, "memory.compacted") or []
    ctx.check(
        EVENT,
        not _naming(logged, dry_nodes | seeded),
        {"dryRunNodes": sorted(dry_nodes), "eventsNamingThem": _naming(logged, dry_nodes | seeded)[:3]},
        surface="event-log",
        note="negative: after a dry run no logged event names its predicted nodes or the seeded memories",
    )

    # -- a real run logs one event per node --------------------------------------------------------------
    seams.run(project, NOW, dry_run=False)
    seams.run(other_project, NOW, dry_run=False)
    after, nodes = _new_nodes(seams, project, before)
    other_after, other_nodes = _new_nodes(seams, other_project, other_before)
    if len(nodes) != 2 or len(other_nodes) != 1:
        raise Blocked(
            f"the real runs did not make one node per eligible group ({len(nodes)} of 2 in the project, "
            f"{len(other_nodes)} of 1 in the other): nothing to match events to (see compacts-eligible-group)"
        )
    seams.run(project, NOW, dry_run=False)  # nothing left to compact: must not log the nodes again
    logged = read_events(ctx.client, "memory.compacted") or []
    refs = {}
    for node, listing in [*((n, after) for n in nodes), (other_nodes[0], other_after)]:
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
            continue
        payload = _payload(mine[0])
        refs[node_id] = payload.get("memoryRef")
        ctx.check_schema(
            EVENT,
            SCHEMA,
            payload,
            surface="event-log",
            note=f"the event of {node_id} is valid against {SCHEMA}",
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
        size_ok = isinstance(summary, str) and payload.get("byteSize") == len(summary.encode("utf-8"))
        ctx.check(
            EVENT,
            size_ok,
            {
                "node": node_id,
                "byteSize": payload.get("byteSize"),
                "summaryUtf8": len(summary.encode("utf-8")) if isinstance(summary, str) else None,
            },
            surface="event-log",
            note="byteSize is the UTF-8 length of the node's summary as read back",
        )
    first_ref, second_ref = (refs.get(n.get("id")) for n in nodes)
    other_ref = refs.get(other_nodes[0].get("id"))
    ctx.check(
        EVENT,
        isinstance(first_ref, str) and first_ref == second_ref and other_ref != first_ref,
        {"project": [first_ref, second_ref], "otherProject": other_ref},
        surface="event-log",
        note="memoryRef is the same for both nodes of the project and differs for the other project's node",
    )

    # -- negatives: no event for what was not compacted, none crossing projects -------------------------
    short_ids = ids_of(short)
    ctx.check(
        EVENT,
        not _naming(logged, short_ids)
        and not any((after.memories.get(i) or {}).get("compactedIntoId") for i in short_ids),
        {"shortGroup": sorted(short_ids), "eventsNamingThem": _naming(logged, short_ids)[:3]},
        surface="event-log",
        note=f"negative: no event names the group of {size - 1} (below min_related_memories)",
    )
    theirs = ids_of(other) | {other_nodes[0].get("id")}
    ours = _naming(logged, seeded | {n.get("id") for n in nodes})
    crossing = [_payload(e).get("outputId") for e in ours if _naming([e], theirs)]
    ctx.check(
        EVENT,
        not crossing,
        {"otherProjectNode": other_nodes[0].get("id"), "eventsMixingProjects": crossing},
        surface="event-log",
        note="negative: the other project's compaction is not this project's event, and no event mixes them",
    )


def _sr1_group(ctx, corpus, size, age, kind):
    """The group's memories (secrets spread over summaries and titles) and each framed secret's frame."""
    summaries = [[] for _ in range(size)]
    titles = [f"Runbook {n}" for n in range(size)]
    framed = {}
    for n, prose in enumerate(corpus.prose):
        summaries[n % size].append(prose)
    for n, secret in enumerate(corpus.secrets):
        framed[secret.id] = FRAME.format(n=n)
        summaries[(n + 1) % size].append(f"{FRAME.format(n=n)}{secret.value}{END}")
    for n, leak in enumerate(corpus.form_leaks):
        summaries[n % size].append(f"User confirmed: {leak.value} during the incident.")
    summaries[-1].append(f"{VAULT}{corpus.registered.value} for now.")
    shortest = sorted(corpus.secrets, key=lambda s: len(s.value))
    for n in range(size):
        secret = shortest[n % len(shortest)]
        titles[n] += f": rotated {secret.value}"
    titles[-1] += f" (passphrase {corpus.registered.value})"
    # The split secret: the head ends the oldest source's summary, the tail starts the next one's.
    texts = [" ".join(parts) for parts in summaries]
    texts[0] += f" Rotation log continues: {corpus.split.head}"
    texts[1] = f"{corpus.split.tail} was the value before rotation. {texts[1]}"
    group = _group(ctx, "secret", size, age, kind=kind)
    for item, title, text in zip(group, titles, texts, strict=True):
        item["title"], item["summary"] = title, text
    return group, framed


@pytest.mark.requirement(SR1)
def test_secrets_in_sources_never_reach_the_compacted_node(ctx):
    if (seams := compaction_on(ctx, SR1)) is None:
        return
    size, age = _limits(seams)
    corpus = load_corpus()
    group, framed = _sr1_group(ctx, corpus, size, age, plain_kind(seams.settings))
    project = ctx.unique_ref("sr1")
    seams.seed(project, group)
    before = seams.listing(project)
    # Registered after seeding: only redaction at compaction time can know this secret.
    registered = CompactionSeams(ctx.client).register_secret(
        corpus.registered.secret_id, corpus.registered.value
    )
    dry = seams.run(project, NOW, dry_run=True)
    real = seams.run(project, NOW, dry_run=False)
    after, nodes = _new_nodes(seams, project, before)
    if len(nodes) != 1:
        raise Blocked(f"the real run made {len(nodes)} compacted nodes, not 1 (see compacts-eligible-group)")
    node = nodes[0]
    title, summary = (v if isinstance(v, str) else "" for v in (node.get("title"), node.get("summary")))
    text = f"{title}\n{summary}"

    secrets = {s.id: s.sensitive for s in corpus.secrets}
    if registered:
        secrets[corpus.registered.secret_id] = corpus.registered.value
    sources = [after.memories.get(item["id"]) or {} for item in group]
    source_text = "\n".join(f"{row.get('title')}\n{row.get('summary')}" for row in sources)
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
    for sid, secret in secrets.items():
        for label, surface in (("title", title), ("summary", summary)):
            leaks = find_leaks(surface, {sid: secret})
            ctx.check(
                SR1,
                not leaks,
                {"secret": sid, "surface": label, "leaks": [leak.__dict__ for leak in leaks]},
                surface="retention-memories",
                note=f"{sid} absent from the node's {label}",
            )
    split = find_leaks(summary, {corpus.split.id: corpus.split.value}, allow_whitespace_split=True)
    ctx.check(
        SR1,
        not split,
        {"leaks": [leak.__dict__ for leak in split]},
        surface="retention-memories",
        note="the secret split across two sources does not reappear whole in the node's summary",
    )
    forms = find_form_leaks(text)
    ctx.check(
        SR1,
        not forms,
        {"formLeaks": forms},
        surface="retention-memories",
        note="no [BYOK:…] or <REDACTED:…> form in the node",
    )
    for label, surface in (("dry-run report", json.dumps(dry)), ("real-run report", json.dumps(real))):
        leaks = find_leaks(surface, secrets)
        ctx.check(
            SR1,
            not leaks,
            {"surface": label, "leaks": [leak.__dict__ for leak in leaks]},
            surface="retention-run",
            note=f"the {label} carries no secret",
        )

    _check_in_place(ctx, corpus, framed, title, summary, registered)
    residue = MARKER_RE.sub("", summary).strip()
    ctx.check(
        SR1,
        bool(residue),
        {"summaryLength": len(summary), "withoutMarkers": len(residue)},
        surface="retention-memories",
        note="negative: redaction did not empty the node's summary (text remains beside the markers)",
    )
    altered = [
        item["id"]
        for item, row in zip(group, sources, strict=True)
        if (row.get("title"), row.get("summary")) != (item["title"], item["summary"])
    ]
    ctx.check(
        SR1,
        not altered,
        {"sources": [item["id"] for item in group], "altered": altered},
        surface="retention-memories",
        note="negative: the sources themselves are not redacted (preserved evidence, read back verbatim)",
    )


def _segments(text, frame, ends):
    """The text after each occurrence of `frame` up to the first of `ends` (or the end)."""
    found = []
    for tail in text.split(frame)[1:]:
        cut = min([tail.find(end) for end in ends if end in tail] or [len(tail)])
        found.append(tail[:cut])
    return found


def _check_in_place(ctx, corpus, framed, title, summary, registered):
    """Where the node kept the prose around a secret, a [REDACTED:…] marker stands where the secret was
    (SR-1: replaced, not silently dropped). A node that summarises in its own words keeps no frame, and
    then there is no place to look at: the leak checks above still hold it to SR-1."""
    dropped = {
        sid: True
        for sid, frame in framed.items()
        for segment in _segments(summary, frame, [END])
        if not markers(segment)
    }
    in_title = _segments(title, ": rotated ", ["; ", " ("])
    if len(title) >= TITLE_MAX:  # a title capped at its limit may cut its last secret's marker short
        in_title = in_title[:-1]
    # Keys name places, never the text there (which would be the secret itself).
    dropped.update({f"title segment {n}": True for n, segment in enumerate(in_title) if not markers(segment)})
    if registered:
        marker = f"[REDACTED:{corpus.registered.secret_id}]"
        if any(marker not in segment for segment in _segments(summary, VAULT, [" for now."])):
            dropped[corpus.registered.secret_id] = True
    ctx.check(
        SR1,
        not dropped,
        {"markers": markers(f"{title}\n{summary}")[:12], "placesWithoutTheirMarker": sorted(dropped)[:10]},
        surface="retention-memories",
        note="every secret whose surrounding text the node kept is replaced in place by a [REDACTED:…] "
        "marker (the registered BYOK secret by [REDACTED:<secretId>])",
    )
