"""The mutants' own entry point: serve a defective reference host, or list the catalogue.

`serve` takes every option of `openwop-reference-host serve` plus `--fault NAME` (repeatable); it
prints a warning banner, because such a host is non-conforming on purpose. `--variant NAME`
(repeatable) shapes the host as a conforming variant (mutants/variants/) instead, or as well.
"""

from __future__ import annotations

import sys

USAGE = (
    "usage: python -m mutants serve [--fault NAME]... [--variant NAME]... [host options]"
    " | python -m mutants list"
)


def _split(argv: list[str], option: str) -> tuple[list[str], list[str]]:
    """The values of a repeatable `option`, and every other argument."""
    names: list[str] = []
    rest: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == option:
            names.append(next(args, ""))
        elif arg.startswith(f"{option}="):
            names.append(arg.partition("=")[2])
        else:
            rest.append(arg)
    return names, rest


def list_mutants() -> int:
    from mutants.catalog import MUTANTS
    from mutants.variants.catalog import VARIANTS

    for item in MUTANTS.values():
        graded = f" (graded at OpenWOP major {item.major})" if item.major != 1 else ""
        print(f"{item.name:40} {item.expected:11} {item.requirement:45} {item.description}{graded}")
    for variant in VARIANTS.values():
        print(f"{variant.name:40} {'variant':11} {'(graded as the clean host)':45} {variant.description}")
    return 0


def serve(argv: list[str]) -> int:
    from mutants.catalog import MUTANTS
    from mutants.host import assemble
    from mutants.variants.catalog import VARIANTS
    from reference_host.cli import app

    names, rest = _split(argv, "--fault")
    variants, rest = _split(rest, "--variant")
    unknown = [n for n in names if n not in MUTANTS] + [n for n in variants if n not in VARIANTS]
    if unknown:
        print(
            f"error: unknown mutant or variant {unknown[0]!r}; see `python -m mutants list`", file=sys.stderr
        )
        return 2
    if names:
        print(
            f"WARNING: mutants active ({', '.join(names)}): this host is deliberately non-conforming.",
            file=sys.stderr,
        )

    def build(config: object) -> tuple[object, object]:
        built = assemble(names, config, variants)  # type: ignore[arg-type]
        return built.config, built.parts

    app(args=["serve", *rest], obj=build, prog_name="python -m mutants")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["list"]:
        return list_mutants()
    if argv[:1] == ["serve"]:
        return serve(argv[1:])
    print(USAGE, file=sys.stderr)
    return 2
