"""RFC 0012 §D against shapes, not strings: Hypothesis generates provider-format secrets (fixed seed).

A host tuned to the fixed corpus passes the corpus scenario; only a harness that knows the formats
passes this one. Each example compacts its own memoryRef, and puts the same texts through the host's
own put route (once per run: conformance/oracles/put_baseline.py). A generated secret the put redacts is
one the host is bound to redact in derived content too (RFC 0012 §D: "the same BYOK redaction harness it
would apply to a fresh `put`"): its survival FAILs no-secret-echo (the answer) or no-secret-readback
(the read route). Every generated secret, bound or not, is graded under rfc0012.D.generated-shapes, a
SHOULD: a harness that knows the formats catches them whether or not anyone told it about them.
"""

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conformance.context import Scenario
from conformance.oracles.put_baseline import ROUTE, Planted, PutBaseline, put_baseline
from conformance.oracles.secret_shapes import secret_shapes
from conformance.oracles.secrets import find_leaks
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import entry
from conformance.surfaces import read_output

SHAPES, ECHO, READBACK = (
    "rfc0012.D.generated-shapes",
    "rfc0012.D.no-secret-echo",
    "rfc0012.D.no-secret-readback",
)
MUST_OF = {"seam-answer": ECHO, "read-route": READBACK}
SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=12,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
WRAPPERS = ["{s}", "key={s};", "({s})", '"{s}"', "token: {s}\n", "<{s}>"]


@dataclass
class Bindings:
    """What the put baselines of every example said, for a MUST none of whose examples bound the host."""

    bound: int = 0
    baselines: list[PutBaseline] = field(default_factory=list)

    def mark(self, ctx: Scenario) -> None:
        """No generated secret was one the host is bound to redact: the MUSTs are the corpus scenario's
        here (whose fact: the host's own put, or the absence of one, which leaves registration alone)."""
        if self.bound or not self.baselines:
            return
        refused = sorted({str(s) for b in self.baselines for s in b.refused.values()})
        mark, reason = ctx.inapplicable, f"the host's own put ({ROUTE}) redacts none of the generated shapes"
        if not any(b.route for b in self.baselines):
            reason = (
                f"the host offers no put route ({ROUTE}): no generated shape is one it is bound to "
                "redact, and the MUST rests on the registered BYOK value (the corpus scenario)"
            )
        elif refused and not any(b.kept for b in self.baselines):
            mark, reason = (
                ctx.block,
                f"the put route ({ROUTE}) stored none of the generated probes ({refused})",
            )
        for rid in (ECHO, READBACK):
            mark(rid, reason)


def _example(ctx: Scenario, bindings: Bindings, shapes: list[tuple[str, str]], wrap: str) -> bool:
    """One compaction of generated secrets; whether every check of a MUST held."""
    seams, _ = ctx.compaction()
    ref = ctx.unique_ref()
    planted = {f"{kind}-{n}": value for n, (kind, value) in enumerate(shapes)}
    texts = [f"Note {n}: {wrap.format(s=value)} end." for n, value in enumerate(planted.values())]
    baseline = put_baseline(ctx, {sid: Planted("\n".join(texts), value) for sid, value in planted.items()})
    bindings.baselines.append(baseline)
    bound = {sid: value for sid, value in planted.items() if baseline.binds(sid)}
    bindings.bound += len(bound)
    entries = [entry(ctx.unique_id("gen"), text) for text in texts]
    entries.append(entry(ctx.unique_id("gen-prose"), "A plain sentence about the weekly sync."))
    seams.seed(ref, entries)
    result = Compaction(seams.compact(ref))
    surfaces = [("seam-answer", "answer", result.reply.text)]
    read = read_output(seams, ref, result.output_id)
    if read.entry is not None:
        surfaces.append(("read-route", "read back", str(read.entry.get("content"))))
    kinds = ", ".join(sorted(k.rsplit("-", 1)[0] for k in planted))
    held = True
    for surface, label, text in surfaces:
        leaks = find_leaks(text, planted)
        evidence = {"surface": label, "kinds": sorted(planted), "leaks": [leak.__dict__ for leak in leaks]}
        ctx.check(
            SHAPES, not leaks, evidence, surface=surface, note=f"{label}: generated {kinds} all redacted"
        )
        if bound:
            mine = [leak.__dict__ for leak in leaks if leak.secret_id in bound]
            held &= ctx.check(
                MUST_OF[surface],
                not mine,
                {"surface": label, "putRedacts": sorted(bound), "leaks": mine},
                surface=surface,
                note=f"{label}: no generated secret the host's own put redacts ({', '.join(sorted(bound))})",
            )
    return held


@pytest.mark.requirement(SHAPES)
@pytest.mark.requirement(ECHO)
@pytest.mark.requirement(READBACK)
def test_generated_secret_shapes_never_survive(ctx):
    bindings = Bindings()

    @SETTINGS
    @given(
        shapes=st.lists(secret_shapes(), min_size=3, max_size=5, unique_by=lambda kv: kv[1]),
        wrap=st.sampled_from(WRAPPERS),
    )
    def examples(shapes, wrap):
        if not _example(ctx, bindings, shapes, wrap):
            raise AssertionError("a generated secret the host's own put redacts survived compaction")

    try:
        examples()
    finally:
        bindings.mark(ctx)
