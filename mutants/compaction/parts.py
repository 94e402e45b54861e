"""Building a compaction mutant: hand one or more replacement policy classes to the assembly."""

from __future__ import annotations

from collections.abc import Callable

from mutants.model import Assembly


def replacing(**policies: type) -> Callable[[Assembly], Assembly]:
    """A mutant's `build`: the assembly with these `HostParts` fields (`compaction_*`) replaced."""

    def build(host: Assembly) -> Assembly:
        return host.with_parts(**policies)

    return build
