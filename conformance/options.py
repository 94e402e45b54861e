"""Command-line options and their OpenWOP-compatible environment variables, in one table."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.client import DEFAULT_MAX_ANSWER_BYTES
from conformance.inputs import SEED_ENV, SEED_MAX, WORKER_KEY, fresh_seed, parse_seed
from conformance.secrecy import Secret

DEFAULT_REQUEST_TIMEOUT = 20.0
MAJOR_ENV = "OPENWOP_PROTOCOL_MAJOR"


@dataclass(frozen=True)
class Options:
    host_url: str | None
    host_token: Secret | None
    tenant_b_token: Secret | None
    require_behavior: bool
    request_timeout: float
    report: str | None
    disabled: dict[str, str]
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    requirements: tuple[str, ...] = ()  # --requirement globs: run only the tests that grade these
    profiles: tuple[str, ...] = ()  # --profile: grade only these profiles (and say a verdict for each)
    baseline: str | None = None  # --baseline known.yaml
    junit: str | None = None  # --junit PATH: JUnit, one row per requirement
    summary_md: str | None = None  # --summary-md PATH: the Markdown summary
    host_build: str | None = None  # --host-build: the host's build, as its maintainers name it
    input_seed: int = 0  # --input-seed: what the scenarios' varied inputs are drawn from (inputs.py)
    # --protocol-major: the OpenWOP major to grade; None grades the host's header-less default
    # (its preferredVersion's major, as OpenWOP's own suite does: conformance/majors/negotiation.py)
    protocol_major: int | None = None

    def public(self) -> dict[str, object]:
        """What the report may say about the options: never a token, only whether one was given."""
        return {
            "hostUrl": self.host_url or "embedded",
            "hostToken": "provided" if self.host_token else "absent",
            "tenantBToken": "provided" if self.tenant_b_token else "absent",
            "requireBehavior": self.require_behavior,
            "requestTimeoutSeconds": self.request_timeout,
            "maxAnswerBytes": self.max_answer_bytes,
            "disabled": dict(self.disabled),
            "requirements": list(self.requirements),
            "profiles": list(self.profiles),
            "baseline": Path(self.baseline).name if self.baseline else None,  # no path of the machine
            "hostBuild": self.host_build,
            "inputSeed": self.input_seed,
            "protocolMajor": self.protocol_major,
        }


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("openwop", "OpenWOP memory conformance")
    group.addoption(
        "--host-url",
        default=None,
        help="Host under test (env OPENWOP_BASE_URL). Omit to boot the embedded reference host.",
    )
    group.addoption("--host-token", default=None, help="Bearer key for tenant A (env OPENWOP_API_KEY).")
    group.addoption(
        "--tenant-b-token",
        default=None,
        help="Bearer key for a second tenant (env OPENWOP_TEST_TENANT_B_API_KEY).",
    )
    group.addoption(
        "--require-behavior",
        action="store_true",
        default=None,
        help="BLOCKED fails the run (env OPENWOP_REQUIRE_BEHAVIOR=true).",
    )
    group.addoption(
        "--request-timeout",
        default=None,
        help="Seconds for each HTTP request, connect to last byte (env OPENWOP_REQUEST_TIMEOUT, default 20).",
    )
    group.addoption(
        "--max-answer-bytes",
        default=None,
        help="Largest decoded answer accepted, in bytes; a larger one is an ERROR "
        "(env OPENWOP_MAX_ANSWER_BYTES, default 8 MiB).",
    )
    group.addoption("--report", default=None, help="Write the JSON result bundle here.")
    group.addoption(
        "--no-verdict-table",
        action="store_true",
        default=False,
        help="Do not print the verdict table at the end (the CLI prints its own).",
    )
    group.addoption(
        "--requirement",
        action="append",
        default=[],
        metavar="ID",
        help="Run only the tests that grade this requirement (repeatable; globs such as 'p11.expiry.*').",
    )
    group.addoption(
        "--profile",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="Grade only these profiles (compaction, distillation, retention; repeatable or "
        "comma-separated), with a verdict for each.",
    )
    group.addoption(
        "--baseline",
        default=None,
        metavar="known.yaml",
        help="Known failures (id, reason, link, expires): listed ones are BASELINED and do not fail the run.",
    )
    group.addoption(
        "--host-build",
        default=None,
        metavar="BUILD",
        help="The host build under test, recorded in the bundle (env OPENWOP_HOST_BUILD); "
        "as KIND:ID (commit:SHA, image-digest:sha256:HEX, artifact-sha256:HEX) it also serves export-v3.",
    )
    group.addoption(
        "--input-seed",
        default=None,
        metavar="N",
        help="Seed of the inputs scenarios draw (seed counts, entry sizes, multi-byte text, tags), "
        f"0..{SEED_MAX}; default a fresh one per run, recorded in the bundle and in every rerun "
        f"command (env {SEED_ENV}).",
    )
    group.addoption(
        "--protocol-major",
        default=None,
        metavar="N",
        help="The OpenWOP major to grade (1 or 2; env OPENWOP_PROTOCOL_MAJOR); default the host's "
        "preferredVersion's major, the header-less default (a major the host does not offer: exit 2).",
    )
    group.addoption("--junit", default=None, metavar="PATH", help="Write JUnit XML, one row per requirement.")
    group.addoption("--summary-md", default=None, metavar="PATH", help="Write the Markdown summary here.")
    group.addoption(
        "--disable",
        action="append",
        default=[],
        metavar="ID=REASON",
        help="Opt a requirement out (DISABLED), with a reason.",
    )


def read_options(config: pytest.Config) -> Options:
    env = os.environ
    url = config.getoption("host_url") or env.get("OPENWOP_BASE_URL") or None
    token = config.getoption("host_token") or env.get("OPENWOP_API_KEY") or None
    token_b = config.getoption("tenant_b_token") or env.get("OPENWOP_TEST_TENANT_B_API_KEY") or None
    require = config.getoption("require_behavior")
    if require is None:
        require = _truthy(env.get("OPENWOP_REQUIRE_BEHAVIOR"))
    timeout = _number(
        "--request-timeout",
        config.getoption("request_timeout") or env.get("OPENWOP_REQUEST_TIMEOUT"),
        DEFAULT_REQUEST_TIMEOUT,
        float,
    )
    cap = _number(
        "--max-answer-bytes",
        config.getoption("max_answer_bytes") or env.get("OPENWOP_MAX_ANSWER_BYTES"),
        DEFAULT_MAX_ANSWER_BYTES,
        int,
    )
    disabled: dict[str, str] = {}
    for item in config.getoption("disable") or []:
        rid, sep, reason = item.partition("=")
        if not sep or not reason.strip():
            raise pytest.UsageError(f"--disable needs ID=REASON (a reason is mandatory), got {item!r}")
        disabled[_known_id("--disable", rid.strip())] = reason.strip()
    return Options(
        host_url=url.rstrip("/") if url else None,
        host_token=Secret(token) if token else None,
        tenant_b_token=Secret(token_b) if token_b else None,
        require_behavior=bool(require),
        request_timeout=timeout,
        report=config.getoption("report"),
        disabled=disabled,
        max_answer_bytes=int(cap),
        requirements=tuple(config.getoption("requirement") or ()),
        profiles=_profiles(config.getoption("profile") or ()),
        baseline=config.getoption("baseline"),
        junit=config.getoption("junit"),
        summary_md=config.getoption("summary_md"),
        host_build=config.getoption("host_build") or env.get("OPENWOP_HOST_BUILD") or None,
        input_seed=_input_seed(config),
        protocol_major=_protocol_major(config.getoption("protocol_major") or env.get(MAJOR_ENV) or None),
    )


def _protocol_major(raw: str | None) -> int | None:
    """The major asked for, one the suite grades; None for the host's default; a usage error otherwise."""
    from conformance.majors import KNOWN

    if raw is None or not str(raw).strip():
        return None
    text = str(raw).strip()
    if not text.isdigit() or int(text) not in KNOWN:
        known = " or ".join(map(str, KNOWN))
        raise pytest.UsageError(f"--protocol-major needs {known}, got {raw!r} (env {MAJOR_ENV})")
    return int(text)


def _input_seed(config: pytest.Config) -> int:
    """The seed of the run's drawn inputs: an xdist worker's is its controller's; otherwise the option,
    the environment, or a fresh one, written back to the options so that every later read (and the
    workers the controller starts) agrees on it."""
    handed = getattr(config, "workerinput", {}).get(WORKER_KEY)
    if handed is not None:
        return int(handed)
    raw = config.getoption("input_seed") or os.environ.get(SEED_ENV) or None
    if raw is None:
        seed = fresh_seed()
    else:
        try:
            seed = parse_seed(raw)
        except ValueError:
            raise pytest.UsageError(
                f"--input-seed needs a whole number in 0..{SEED_MAX}, got {raw!r}"
            ) from None
    config.option.input_seed = str(seed)
    return seed


def _profiles(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    from conformance.requirements import GRADED_PROFILES

    chosen = [name.strip() for value in values for name in value.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(GRADED_PROFILES))
    if unknown:
        choices = ", ".join(GRADED_PROFILES)
        raise pytest.UsageError(f"--profile: unknown profile(s) {unknown}; choose from {choices}")
    return tuple(dict.fromkeys(chosen))


def _known_id(option: str, requirement_id: str) -> str:
    """A registered id (an alias counts, reported under its current id); a usage error otherwise."""
    from conformance import requirements

    try:
        return requirements.get(requirement_id).id
    except requirements.UnknownRequirement:
        raise pytest.UsageError(
            f"{option}: {requirement_id!r} is not a requirement id "
            "(list them: openwop-memory-conformance requirements)"
        ) from None


def _number(name: str, raw: str | None, default: float, kind: type[float] | type[int]) -> float:
    """A positive number from an option or its environment variable; a usage error otherwise."""
    if raw in (None, ""):
        return default
    try:
        value = kind(str(raw).strip())
    except ValueError:
        raise pytest.UsageError(f"{name} needs a positive number, got {raw!r}") from None
    if not value > 0:
        raise pytest.UsageError(f"{name} needs a positive number, got {raw!r}")
    return value
