"""Grades the reference host's SR-1 redaction on a corpus: the training corpora (fixtures/sr1-corpus/,
fixtures/sr1-eval/, fixtures/sr1-train/, each with its own formats, contexts and hard negatives), or
any corpus of the same format given by its path (a blind corpus the rules' authors never read).

Four paths, as a host runs them:
- `alone`: each item compacted on its own (`redact_joined` of its entries);
- `shared`: every item's entries in one memoryRef, in a fixed shuffled order (one `redact_parts`
  over all of them, so neighbours can interfere; its output is per entry, which attributes each
  piece of text to its item exactly; `redact_joined` is the same list joined);
- `parts`: each item's entries as distillation sources (`redact_parts`);
- `put`: each entry stored on its own (one `Redactor.redact` per entry, as a `put` makes it), so a
  secret split across entries is judged by what each entry alone shows.

Documentation examples (class `documentation-example` in a blind corpus, labelled clean by its
writer) are redacted by the engine's decision (docs/sr1-redaction.md): they are tallied apart, as
kind `example`, and count neither as secrets nor as secret-free items.

A secret item is **caught** when no piece of any of its secrets of 16 characters (or the whole
secret, if shorter) survives, whitespace removed (a secret wrapped or split across entries must not
come back by dropping the line break). Its **span is exact** when, markers removed, everything of
the item but its secrets survives (the marker replaced exactly the secret). A clean item is
**intact** when every entry comes back unchanged.

`python tests/host/sr1_accuracy.py [sr1-corpus|sr1-eval|sr1-train|sr1-blind-N|PATH]`
prints the table (the training corpora by default); with `--json`, the figures per path and per class and
the items missed, as JSON (what `tests/host/sr1_blind_grade.py` writes for a blind round).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reference_host.redaction import Redactor, redact_joined, redact_parts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CORPORA = {
    name: FIXTURES / name / "corpus.json"
    for name in (
        "sr1-corpus",
        "sr1-eval",
        "sr1-train",
        "sr1-blind-1",
        "sr1-blind-2",
        "sr1-blind-3",
        "sr1-blind-4",
        "sr1-blind-5",
        "sr1-blind-6",
        "sr1-blind-8",
        "sr1-blind-9",
        "sr1-blind-10",
        "sr1-blind-11",
        "sr1-blind-14",
        "sr1-blind-15",
        "sr1-blind-17",
        "sr1-blind-18",
        "sr1-blind-19",
        "sr1-blind-20",
        "sr1-blind-21",
        "sr1-blind-22",
        "sr1-blind-24",
        "sr1-blind-25",
        "sr1-blind-26",
        "sr1-blind-27",
        "sr1-blind-29",
        "sr1-blind-30",
        "sr1-blind-31",
        "sr1-blind-32",
        "sr1-blind-35",
        "sr1-blind-36",
        "sr1-blind-38",
        "sr1-blind-39",
        "sr1-blind-41",
    )
}
CORPUS = CORPORA["sr1-corpus"]
PATHS = ("alone", "shared", "parts", "put")
EXAMPLE_CLASS = "documentation-example"  # redacted by decision: kind `example`, tallied apart
FRAGMENT = 16
_SPACE = re.compile(r"\s+")
_MARKER = re.compile(r"\[REDACTED:[A-Za-z0-9._-]{1,64}\]")


@dataclass(frozen=True)
class Item:
    id: str
    cls: str
    kind: str
    entries: tuple[str, ...]
    secrets: tuple[str, ...]


def load(path: Path = CORPUS) -> list[Item]:
    raw = json.loads(path.read_text(encoding="utf-8"))["items"]
    return [
        Item(
            r["id"],
            r["class"],
            "example" if r["class"] == EXAMPLE_CLASS else r["kind"],
            tuple(r["entries"]),
            tuple(r.get("secrets", ())),
        )
        for r in raw
    ]


def leaked(secret: str, output: str) -> bool:
    """Whether any 16-character piece of `secret` (whitespace removed) is in `output` (likewise)."""
    flat, text = _SPACE.sub("", secret), _SPACE.sub("", output)
    n = min(FRAGMENT, len(flat))
    return any(flat[i : i + n] in text for i in range(len(flat) - n + 1))


def span_exact(item: Item, outputs: Sequence[str]) -> bool:
    """Markers removed, the item's text is its input with the secrets removed (whitespace aside:
    a secret wrapped or split across entries takes its line break with it)."""
    expected = _SPACE.sub("", "\n".join(item.entries))
    for secret in item.secrets:
        expected = expected.replace(_SPACE.sub("", secret), "")
    return _SPACE.sub("", _MARKER.sub("", "\n".join(outputs))) == expected


@dataclass
class Tally:
    n: int = 0
    good: int = 0
    exact: int = 0
    misses: list[tuple[str, str]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.good / self.n if self.n else 1.0


def _judge(item: Item, outputs: Sequence[str], tally: Tally, *, joined: bool = False) -> None:
    """`outputs`: one per entry, or (`joined`) the entries' redaction joined by a line break."""
    tally.n += 1
    if item.kind == "example":  # good when redacted, as decided
        ok = "\n".join(outputs) != "\n".join(item.entries)
    elif item.kind == "secret":
        ok = not any(leaked(s, "\n".join(outputs)) for s in item.secrets)
        tally.exact += ok and span_exact(item, outputs)
    else:
        ok = ("\n".join(outputs),) == ("\n".join(item.entries),) if joined else tuple(outputs) == item.entries
    tally.good += ok
    if not ok:
        tally.misses.append((item.id, "\n".join(outputs)[:300]))


def grade(items: Sequence[Item], seed: int = 7) -> dict[str, dict[str, Tally]]:
    """path -> class -> tally (classes prefixed `secret:` or `clean:`)."""
    redactor = Redactor({})
    table: dict[str, dict[str, Tally]] = {path: defaultdict(Tally) for path in PATHS}
    for item in items:
        key = f"{item.kind}:{item.cls}"
        _judge(item, [redact_joined(item.entries, redactor, "\n")], table["alone"][key], joined=True)
        _judge(item, redact_parts(item.entries, redactor, "\n"), table["parts"][key])
        _judge(item, [redactor.redact(entry) for entry in item.entries], table["put"][key])
    order = list(items)
    random.Random(seed).shuffle(order)
    entries = [e for item in order for e in item.entries]
    shared = redactor.redact_parts(entries)
    at = 0
    for item in order:
        outputs = shared[at : at + len(item.entries)]
        at += len(item.entries)
        _judge(item, outputs, table["shared"][f"{item.kind}:{item.cls}"])
    return table


def overall(table: dict[str, dict[str, Tally]], kind: str) -> dict[str, Tally]:
    """path -> the tally over every class of `kind`."""
    sums: dict[str, Tally] = {}
    for path, classes in table.items():
        total = Tally()
        for key, t in classes.items():
            if key.startswith(kind + ":"):
                total.n, total.good, total.exact = total.n + t.n, total.good + t.good, total.exact + t.exact
                total.misses += t.misses
        sums[path] = total
    return sums


def render(table: dict[str, dict[str, Tally]], out: Callable[[str], None] = print) -> None:
    out(f"{'class':36} {'n':>5}  " + "  ".join(f"{p:>14}" for p in PATHS) + "  span exact (alone)")
    for key in sorted(table["alone"]):
        cells = "  ".join(
            f"{table[p][key].good:>5}/{table[p][key].n:<4}{table[p][key].rate:>5.0%}" for p in PATHS
        )
        alone = table["alone"][key]
        exact = f"{alone.exact}/{alone.good}" if key.startswith("secret:") else ""
        out(f"{key:36} {alone.n:>5}  {cells}  {exact}")
    for kind, word in (
        ("secret", "caught (recall)"),
        ("clean", "intact"),
        ("example", "redacted (decision)"),
    ):
        sums = overall(table, kind)
        if not sums["alone"].n:
            continue
        cells = "  ".join(f"{sums[p].good:>5}/{sums[p].n:<5}{sums[p].rate:>6.1%}" for p in PATHS)
        out(f"{'ALL ' + kind + ' ' + word:36} {sums['alone'].n:>5}  {cells}")
    cells = "  ".join(f"{precision(table, p):>17.1%}" for p in PATHS)
    out(f"{'ALL precision (items)':36} {'':>5}  {cells}")


def precision(table: dict[str, dict[str, Tally]], path: str) -> float:
    """Of the items the engine changed, the share that held a secret: secret items caught over
    those plus secret-free items damaged."""
    caught, damaged = overall(table, "secret")[path], overall(table, "clean")[path]
    flagged = caught.good + (damaged.n - damaged.good)
    return caught.good / flagged if flagged else 1.0


def figures(table: dict[str, dict[str, Tally]]) -> dict[str, object]:
    """The figures of a grading as JSON: per kind and path [good, n, percent], per class and path
    [good, n], and the items missed when each is compacted alone."""

    def cell(t: Tally) -> list[float]:
        return [t.good, t.n, round(100 * t.rate, 2)]

    sums = {kind: overall(table, kind) for kind in ("secret", "clean", "example")}
    return {
        "secret_recall": {p: cell(t) for p, t in sums["secret"].items()},
        "clean_intact_excluding_doc_examples": {p: cell(t) for p, t in sums["clean"].items()},
        "doc_examples_redacted": {p: cell(t) for p, t in sums["example"].items()},
        "per_class": {
            key: {p: [table[p][key].good, table[p][key].n] for p in table} for key in sorted(table["alone"])
        },
        "misses_alone": {
            key: table["alone"][key].misses for key in sorted(table["alone"]) if table["alone"][key].misses
        },
    }


def main(argv: Sequence[str]) -> None:
    as_json = "--json" in argv
    names = [a for a in argv if a != "--json"] or list(CORPORA)
    for name in names:
        table = grade(load(CORPORA[name] if name in CORPORA else Path(name)))
        if as_json:
            json.dump({"corpus": name, **figures(table)}, sys.stdout, indent=1, ensure_ascii=False)
            print()
        else:
            print(f"== {name}")
            render(table)


if __name__ == "__main__":
    main(sys.argv[1:])
