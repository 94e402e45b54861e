"""RFC 0012 §D against shapes, not strings: Hypothesis generates provider-format secrets (fixed seed).

A host tuned to the fixed corpus passes the corpus scenario; only a harness that knows the formats
passes this one. Each example compacts its own memoryRef.
"""

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conformance.oracles.secret_shapes import secret_shapes
from conformance.oracles.secrets import find_leaks
from conformance.profiles.compaction.checks import Compaction
from conformance.profiles.compaction.seams import entry
from conformance.surfaces import read_output

SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=12,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
WRAPPERS = ["{s}", "key={s};", "({s})", '"{s}"', "token: {s}\n", "<{s}>"]


@pytest.mark.requirement("rfc0012.D.generated-shapes")
@SETTINGS
@given(
    shapes=st.lists(secret_shapes(), min_size=3, max_size=5, unique_by=lambda kv: kv[1]),
    wrap=st.sampled_from(WRAPPERS),
)
def test_generated_secret_shapes_never_survive(ctx, shapes, wrap):
    seams, _ = ctx.compaction()
    ref = ctx.unique_ref()
    planted = {f"{kind}-{n}": value for n, (kind, value) in enumerate(shapes)}
    entries = [
        entry(ctx.unique_id("gen"), f"Note {n}: {wrap.format(s=value)} end.")
        for n, value in enumerate(planted.values())
    ]
    entries.append(entry(ctx.unique_id("gen-prose"), "A plain sentence about the weekly sync."))
    seams.seed(ref, entries)
    result = Compaction(seams.compact(ref))
    surfaces = [("seam-answer", "answer", result.reply.text)]
    read = read_output(seams, ref, result.output_id)
    if read.entry is not None:
        surfaces.append(("read-route", "read back", str(read.entry.get("content"))))
    for surface, label, text in surfaces:
        leaks = find_leaks(text, planted)
        held = ctx.check(
            "rfc0012.D.generated-shapes",
            not leaks,
            {
                "surface": label,
                "kinds": sorted(planted),
                "leaks": [leak.__dict__ for leak in leaks],
            },
            surface=surface,
            note=f"{label}: generated {', '.join(sorted(k.rsplit('-', 1)[0] for k in planted))} all redacted",
        )
        if not held:
            raise AssertionError(
                f"generated secrets leaked in the {label}: {[leak.secret_id for leak in leaks]}"
            )
