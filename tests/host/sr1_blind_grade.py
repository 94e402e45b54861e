"""Grade one frozen blind corpus on the SR-1 engine of the checkout this runs from (its root).

The grader the lead ran for each blind round, kept here so anyone can rerun a grading:

    python tests/host/sr1_blind_grade.py fixtures/sr1-blind-1/corpus.json > grading.json

Four paths: alone (each item compacted on its own), shared (every item in one memoryRef,
shuffled), parts (each item's entries as distillation sources), put (each entry put on its own:
one `Redactor.redact` per entry). It uses the repository's own judging (`sr1_accuracy.py`) and
reads the corpus with its labels as written, so that it grades any commit alike (also one whose
`sr1_accuracy.py` predates the `put` path). Documentation examples (class
`documentation-example`, labelled clean by the corpus writer) are reported apart: the engine
redacts them by decision (docs/sr1-redaction.md).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import sr1_accuracy as acc

from reference_host.redaction import Redactor

PATHS = ("alone", "shared", "parts", "put")
DOC = ("documentation-example",)


def _items(corpus: Path) -> list[acc.Item]:
    raw = json.loads(corpus.read_text(encoding="utf-8"))["items"]
    return [
        acc.Item(r["id"], r["class"], r["kind"], tuple(r["entries"]), tuple(r.get("secrets", ())))
        for r in raw
    ]


def _sums(
    table: dict[str, dict[str, acc.Tally]], kind: str, exclude: tuple[str, ...] = ()
) -> dict[str, acc.Tally]:
    out = {}
    for path in PATHS:
        total = acc.Tally()
        for key, t in table[path].items():
            if key.startswith(kind + ":") and key.split(":", 1)[1] not in exclude:
                total.n, total.good = total.n + t.n, total.good + t.good
        out[path] = total
    return out


def grade(corpus: Path) -> dict[str, object]:
    items = _items(corpus)
    table = acc.grade(items)
    red = Redactor({})
    put: dict[str, acc.Tally] = defaultdict(acc.Tally)
    for item in items:
        acc._judge(item, [red.redact(e) for e in item.entries], put[f"{item.kind}:{item.cls}"])
    table["put"] = put

    def cells(sums: dict[str, acc.Tally]) -> dict[str, list[float]]:
        return {p: [t.good, t.n, round(100 * t.good / t.n, 2)] for p, t in sums.items()}

    def doc(path: str) -> list[int]:
        t = table[path]["clean:documentation-example"]
        return [t.n - t.good, t.n]

    return {
        "corpus": str(corpus),
        "secret_recall": cells(_sums(table, "secret")),
        "clean_intact_excluding_doc_examples": cells(_sums(table, "clean", DOC)),
        "clean_intact_all": cells(_sums(table, "clean")),
        "doc_examples_redacted": {p: doc(p) for p in PATHS},
        "per_class": {
            key: {p: [table[p][key].good, table[p][key].n] for p in PATHS} for key in sorted(table["alone"])
        },
        "misses_alone": {
            key: table["alone"][key].misses for key in sorted(table["alone"]) if table["alone"][key].misses
        },
    }


if __name__ == "__main__":
    json.dump(grade(Path(sys.argv[1])), sys.stdout, indent=1, ensure_ascii=False)
    print()
