"""Requirement-level differences between result bundles: did a change alter any verdict?

    python -m bench.verdict_diff BEFORE.json AFTER.json   # one pair
    python -m bench.verdict_diff BEFORE_DIR AFTER_DIR     # every bundle name the two folders share

A verdict is a requirement's outcome and its assertion count. Two bundles agree when they grade the
same requirements with the same verdicts; reasons, evidence, test ids and timings are not compared
(a refactor that splits one scenario into several tests changes those and nothing else). Prints one
line per difference and a summary line; exits 1 when any pair differs, 2 when a bundle is unusable.

Why: "the same requests, the same checks, the same outcomes" is a claim a refactor of the scenarios
has to prove against every host, faulty ones included, and the bundle is what the user reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Difference:
    """One requirement graded differently: `before`/`after` are (outcome, assertions), None if absent."""

    requirement: str
    before: tuple[str, int] | None
    after: tuple[str, int] | None

    def line(self) -> str:
        def shown(verdict: tuple[str, int] | None) -> str:
            return "absent" if verdict is None else f"{verdict[0]} ({verdict[1]} assertions)"

        return f"{self.requirement}: {shown(self.before)} -> {shown(self.after)}"


def verdicts(bundle: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """requirement id -> (outcome, assertions), from a bundle's per-requirement rows."""
    return {row["id"]: (row["outcome"], int(row["assertions"])) for row in bundle.get("requirements", [])}


def compare(before: dict[str, Any], after: dict[str, Any], *, common: bool = False) -> list[Difference]:
    """Every requirement whose verdict differs between two bundles: graded in one only included, unless
    `common` (then only requirements both graded are compared, e.g. a subset run against a full one)."""
    old, new = verdicts(before), verdicts(after)
    ids = set(old) & set(new) if common else set(old) | set(new)
    return [
        Difference(rid, old.get(rid), new.get(rid)) for rid in sorted(ids) if old.get(rid) != new.get(rid)
    ]


def load(path: Path) -> dict[str, Any]:
    bundle = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(bundle, dict) or not isinstance(bundle.get("requirements"), list):
        raise ValueError(f"{path}: not a result bundle (no requirements list)")
    return bundle


def pairs(before: Path, after: Path) -> list[tuple[str, Path, Path]]:
    """(label, before bundle, after bundle): the two files, or each *.json name both folders hold."""
    if before.is_dir() and after.is_dir():
        names = sorted({p.name for p in before.glob("*.json")} & {p.name for p in after.glob("*.json")})
        return [(name.removesuffix(".json"), before / name, after / name) for name in names]
    return [(after.name.removesuffix(".json"), before, after)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verdict_diff", description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path, help="a bundle, or a folder of bundles")
    parser.add_argument("after", type=Path, help="a bundle, or a folder of bundles with the same names")
    parser.add_argument("--common", action="store_true", help="compare only requirements both graded")
    args = parser.parse_args(argv)
    found = pairs(args.before, args.after)
    if not found:
        print("no bundle names in common", file=sys.stderr)
        return 2
    differing = requirements = 0
    for label, old_path, new_path in found:
        try:
            old, new = load(old_path), load(new_path)
        except (OSError, ValueError) as exc:
            print(f"{label}: {exc}", file=sys.stderr)
            return 2
        differences = compare(old, new, common=args.common)
        old_ids, new_ids = set(verdicts(old)), set(verdicts(new))
        requirements += len(old_ids & new_ids if args.common else old_ids | new_ids)
        differing += bool(differences)
        for difference in differences:
            print(f"{label}: {difference.line()}")
    print(
        f"{len(found)} bundle pair(s), {requirements} requirement verdicts compared, "
        f"{differing} pair(s) with differences"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
