"""Adversarial text for a secret scanner: 1 MiB (by default) built to be slow to redact, from a seed.

What a scanner can stumble on, each as a stretch of the text:

- **near-misses of every rule** in `reference_host/secret_rules.yaml`: the rule's pattern walked
  (`re._parser`) into a random string it would match, except that one repetition is one character
  too short, or ends in a character outside its alphabet; one such string per repetition of every
  rule, many times over, separated by spaces or line breaks;
- **long runs without separators**: over 100 KB each of base64 and of lowercase hex;
- **unterminated PEM blocks**: `-----BEGIN RSA PRIVATE KEY-----` (and other private-key headers)
  with no END line, followed by base64-ish lines and then prose;
- **assignments with long values**: `password=`, `token: `, `api_key = "`… each followed by a
  value of 1-4 KB;
- **URL userinfo without an `@`**: thousands of `scheme://user:` and `://user:pass` fragments;
- **long lines** of `=`, of `-` and of `/`;
- **dotted `eyJ` segments**: `eyJ…` repeated with dots, thousands deep on one line;
- **wrapped base64**: 76- and 64-column lines, every line break a joint a scanner may glue across.

`adversarial_text(size, seed)` is deterministic: the same arguments give the same text (the rules
file is read when called). `adversarial_parts` cuts it into entries at arbitrary places, inside
tokens too, as a compaction of that many sources would see it.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reference_host.secret_scan import RULES_FILE, load_rules

MIB = 1 << 20
DEFAULT_SEED = 20261203

B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "_-"
HEX = "0123456789abcdef"
PRINTABLE = ["\t", "\n", "\r", " ", *(chr(c) for c in range(33, 127))]
TOKENISH = string.ascii_letters + string.digits

try:  # Python 3.11+
    from re import _constants as _sre  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]


def rule_patterns(path: Path = RULES_FILE) -> list[tuple[str, str]]:
    """(kind, regex) of every rule, in file order, with the file's `%NAME%` definitions expanded."""
    return [(rule.kind, rule.pattern) for rule in load_rules(path)]


@functools.lru_cache(maxsize=4)
def _rules(path: Path = RULES_FILE) -> tuple[tuple[str, str], ...]:
    return tuple(rule_patterns(path))


# -- walking a parsed pattern -------------------------------------------------------------------


def _member(items: list[tuple[Any, Any]]) -> Callable[[str], bool]:
    """Membership in a character class (`IN` of a parsed pattern)."""
    negate = bool(items) and items[0][0] is _sre.NEGATE
    tests: list[Callable[[str], bool]] = []
    for op, av in items[1:] if negate else items:
        if op is _sre.LITERAL:
            tests.append(lambda c, v=av: ord(c) == v)
        elif op is _sre.RANGE:
            tests.append(lambda c, lo=av[0], hi=av[1]: lo <= ord(c) <= hi)
        elif op is _sre.CATEGORY:
            name = str(av)
            if "DIGIT" in name:
                base: Callable[[str], bool] = str.isdigit
            elif "SPACE" in name:
                base = str.isspace
            else:
                base = lambda c: c.isalnum() or c == "_"  # noqa: E731
            tests.append((lambda c, b=base: not b(c)) if "NOT" in name else base)
    if negate:
        return lambda c: not any(t(c) for t in tests)
    return lambda c: any(t(c) for t in tests)


_ALPHABETS: dict[tuple[Any, int], tuple[list[str], list[str]]] = {}


def _alphabet(op: Any, av: Any) -> tuple[list[str], list[str]]:
    """(characters one item matches, printable characters it does not), for a one-character item;
    cached by the item (the parsed patterns stay alive in `_parsed`'s cache)."""
    key = (op, id(av))
    known = _ALPHABETS.get(key)
    if known is None:
        known = _ALPHABETS[key] = _compute_alphabet(op, av)
    return known


def _compute_alphabet(op: Any, av: Any) -> tuple[list[str], list[str]]:
    if op is _sre.LITERAL:
        inside = [chr(av)]
    elif op is _sre.NOT_LITERAL:
        inside = [c for c in PRINTABLE if ord(c) != av]
    elif op is _sre.ANY:
        inside = list(PRINTABLE)
    elif op is _sre.IN:
        test = _member(av)
        inside = [c for c in PRINTABLE if test(c)]
    else:
        return [], []
    outside = [c for c in PRINTABLE if c not in inside and not c.isspace()]
    # a wrong character that still looks like a token where there is one (g-z after hex, a-z after A-Z)
    tokenish = [c for c in outside if c in TOKENISH]
    return inside or ["x"], tokenish or outside or ["\x01"]


class _Walk:
    """One random string a parsed pattern matches, with one repetition made to miss."""

    def __init__(self, rng: random.Random, miss: int | None, wrong: bool) -> None:
        self.rng, self.miss, self.wrong = rng, miss, wrong
        self.repeats = 0  # repetitions seen so far (the `miss`-th is the one that misses)

    def items(self, parsed: Any) -> str:
        return "".join(self.item(op, av) for op, av in parsed)

    def item(self, op: Any, av: Any) -> str:
        rng = self.rng
        if op in (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY, _sre.IN):
            return rng.choice(_alphabet(op, av)[0])
        if op is _sre.SUBPATTERN:
            return self.items(av[-1])
        if op is _sre.BRANCH:
            return self.items(rng.choice(av[1]))
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
            low, high, sub = av
            index = self.repeats
            self.repeats += 1
            count = low if low > 0 or rng.random() < 0.5 else min(high, rng.randint(1, 3))
            if index != self.miss:
                return "".join(self.items(sub) for _ in range(count))
            wrong = _alphabet(*sub[0])[1] if self.wrong and len(sub) == 1 else []
            if not wrong:  # one character (or one repetition) too few
                return "".join(self.items(sub) for _ in range(max(0, count - 1)))
            body = [self.items(sub) for _ in range(max(1, count))]
            body[rng.randrange(len(body))] = rng.choice(wrong)  # a character of the wrong alphabet
            return "".join(body)
        return ""  # anchors (AT) and the like: nothing to spell


def _repeats(parsed: Any) -> int:
    """How many repetitions a walk of `parsed` can meet (an upper bound over its branches)."""
    n = 0
    for op, av in parsed:
        if op is _sre.SUBPATTERN:
            n += _repeats(av[-1])
        elif op is _sre.BRANCH:
            n += max(_repeats(b) for b in av[1])
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
            n += 1 + _repeats(av[2])
    return n


def near_misses(rng: random.Random, pattern: str, tries: int = 4) -> list[str]:
    """For each repetition of `pattern`: a string that is one character short there, and one with a
    character of the wrong alphabet there; only strings the rule does not match (a miss at an
    optional repetition may still match: it is tried again, then left out)."""
    parsed, rule = _parsed(pattern)
    out = []

    def keep(make: Callable[[], str]) -> None:
        for _ in range(tries):
            candidate = make()
            if candidate and rule.search(candidate) is None:
                out.append(candidate)
                return

    def dropped() -> str:  # a whole match with one character taken out (a literal prefix one short)
        whole = _Walk(rng, None, False).items(parsed)
        at = rng.randrange(len(whole)) if whole else 0
        return whole[:at] + whole[at + 1 :]

    for index in range(max(1, _repeats(parsed))):
        for wrong in (False, True):
            keep(lambda i=index, w=wrong: _Walk(rng, i, w).items(parsed))
    keep(dropped)
    return out


@functools.cache
def _parsed(pattern: str) -> tuple[Any, re.Pattern[str]]:
    return _sre_parse.parse(pattern), re.compile(pattern)


# -- the stretches ------------------------------------------------------------------------------


def _run(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _lines(rng: random.Random, alphabet: str, width: int, total: int) -> str:
    return "\n".join(_run(rng, alphabet, width) for _ in range(max(1, total // (width + 1))))


_PROSE = (
    "The deploy finished and the rollout looks healthy.",
    "Ask Chen about the retry policy before Friday.",
    "then prose: nothing secret here, only a note about the onboarding checklist.",
)
_PEM_HEADERS = (
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "-----BEGIN EC PRIVATE KEY-----",
    "-----BEGIN ENCRYPTED PRIVATE KEY-----",
)
_ASSIGNMENTS = ("password=", "token: ", 'api_key = "', "secret:", "PASSWORD ", "auth=", "key: '")


def stretches(size: int = MIB, seed: int = DEFAULT_SEED) -> dict[str, str]:
    """Each adversarial stretch by name; together a little over `size` characters."""
    rng = random.Random(seed)
    unit = size // 14  # about 73 KiB at 1 MiB; the stretches below add up to about 14.5 units
    near = []
    total = 0
    while total < 5 * unit:  # every rule's near-misses, over and over, each time different
        for _kind, pattern in _rules():
            for miss in near_misses(rng, pattern):
                near.append(miss)
                near.append(rng.choice((" ", " ", "\n", ", ")))
                total += len(miss) + 1
    pem = []
    total = 0
    while total < 2 * unit:
        block = rng.choice(_PEM_HEADERS) + "\n"
        block += _lines(rng, B64, rng.choice((64, 70, 76)), rng.randint(64, 1200)) + "\n"
        block += rng.choice(_PROSE) + "\n"
        pem.append(block)
        total += len(block)
    assignments = []
    total = 0
    while total < unit:
        value = _run(rng, rng.choice((B64, TOKENISH, HEX)), rng.randint(1000, 4000))
        piece = rng.choice(_ASSIGNMENTS) + value + rng.choice((" ", "\n", "; "))
        assignments.append(piece)
        total += len(piece)
    userinfo = []
    total = 0
    while total < unit // 2:
        admin = "postgres://admin:" + _run(rng, TOKENISH, 12)
        piece = rng.choice(("://user:", "https://user:", "x://u:", admin))
        userinfo.append(piece)
        total += len(piece)
    eyj = []
    total = 0
    while total < unit // 2:
        piece = "eyJ" + _run(rng, B64URL, rng.randint(3, 12)) + "."
        eyj.append(piece)
        total += len(piece)
    return {
        "near-misses": "".join(near),
        "base64 run": _run(rng, B64, max(100_000, 2 * unit)),
        "hex run": _run(rng, HEX, max(100_000, 2 * unit)),
        "unterminated PEM": "".join(pem),
        "long assignments": "".join(assignments),
        "://user: without @": "".join(userinfo),
        "= - / lines": "\n".join(c * (unit // 6) for c in "=-/"),
        "dotted eyJ": "".join(eyj),
        "wrapped base64": _lines(rng, B64, 76, unit // 2) + "\n" + _lines(rng, B64URL, 64, unit // 2),
    }


def adversarial_text(size: int = MIB, seed: int = DEFAULT_SEED) -> str:
    """Exactly `size` characters: the stretches in a seeded order, each cut to its share."""
    parts = stretches(size, seed)
    names = list(parts)
    random.Random(seed).shuffle(names)
    text = "\n".join(parts[name] for name in names)
    while len(text) < size:  # only for sizes where the 100 KB runs do not already overflow
        text += "\n" + text
    return text[:size]


def adversarial_parts(size: int = MIB, parts: int = 1000, seed: int = DEFAULT_SEED) -> list[str]:
    """The same text cut into about `parts` entries of uneven length, at arbitrary places."""
    text = adversarial_text(size, seed)
    rng = random.Random(seed + 1)
    cuts = sorted(rng.sample(range(1, len(text)), parts - 1)) if parts > 1 else []
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def shares(size: int = MIB, seed: int = DEFAULT_SEED) -> dict[str, int]:
    """Characters of each stretch (before the text is cut to `size`)."""
    return {name: len(s) for name, s in stretches(size, seed).items()}


if __name__ == "__main__":
    for name, chars in shares().items():
        print(f"{name:>22}  {chars:>9,}")
    sample = near_misses(random.Random(1), r"sk-ant-[A-Za-z0-9_-]{20,}")
    print(sample)
    print(re.findall(r"sk-ant-[A-Za-z0-9_-]{20,}", " ".join(sample)))
