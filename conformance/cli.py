"""`openwop-memory-conformance`: run the suite with a friendly summary, explain a requirement, or list
the requirements.

`run` is a thin front end over the same pytest plugin (`pytest --host-url …`): it checks first that
the host can be graded (reachable, usable discovery, keys accepted: one line and exit 2 if not),
runs the bundled scenarios in-process, then renders the verdict table from the JSON result bundle.
What follows `--` goes to pytest unchanged. `explain` and `requirements --json` link each requirement
to the scenario tests that grade it (conformance/scenario_index.py) and its common causes of failure.

Exit codes are pytest's, so that `run` and `pytest --host-url` mean the same thing by them; a usage
error of this command line is 4 (pytest's USAGE_ERROR), never 2, which means "could not start".

Built on `argparse` and plain text, not a CLI framework: the grading install stays small, and the
output is the same in a terminal, a CI log or a pipe.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import shutil
import sys
import tempfile
import textwrap
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance import NAME, explain, inputs, requirements, scenario_index
from conformance.certify import commands as certify_commands
from conformance.certify.bundles import BundleError
from conformance.client import DEFAULT_MAX_ANSWER_BYTES, HostClient
from conformance.discovery import EXIT_COULD_NOT_START, Credential, startup_problem
from conformance.embedded import MISSING as EMBEDDED_MISSING
from conformance.embedded import embedded_available
from conformance.paths import scenarios_dir
from conformance.report import ranked_rows
from conformance.secrecy import Secret, scrub

PROG = NAME
COMMANDS = (
    *("run", "explain", "requirements"),  # implementers and CI
    *("matrix", "diff", "badge", "keygen", "export-v3", "sign", "verify"),  # maintainers
)
TRUE_WORDS = frozenset({"1", "true", "t", "yes", "y", "on"})
FALSE_WORDS = frozenset({"0", "false", "f", "no", "n", "off"})
VERDICT_COLUMNS = ("Outcome", "Level", "Checks", "Requirement", "Reason")
REGISTRY_COLUMNS = ("Id", "Level", "Section", "Sentence")
CELL_WIDTH = 48
MIN_LAST_WIDTH = 30
COLUMN_GAP = "  "
PARALLEL_EXTRA = f"pip install '{PROG}[parallel]'"
ALLURE_EXTRA = f"pip install '{PROG}[allure]'"
EXIT_OK = int(pytest.ExitCode.OK)
EXIT_FAILED = int(pytest.ExitCode.TESTS_FAILED)
EXIT_INTERNAL_ERROR = int(pytest.ExitCode.INTERNAL_ERROR)
EXIT_USAGE_ERROR = int(pytest.ExitCode.USAGE_ERROR)
EXIT_NOTHING_SELECTED = int(pytest.ExitCode.NO_TESTS_COLLECTED)
EXIT_CODES = (
    (EXIT_OK, "passed: nothing failed (BLOCKED does not fail without --require-behavior)"),
    (EXIT_FAILED, "failed: a FAIL or an ERROR (or a BLOCKED under --require-behavior)"),
    (EXIT_COULD_NOT_START, "could not start: host unreachable, discovery unusable, a key refused, no host"),
    (EXIT_INTERNAL_ERROR, "internal error of the suite (please report it)"),
    (EXIT_USAGE_ERROR, "usage error: a bad option, value or requirement id"),
    (EXIT_NOTHING_SELECTED, "nothing selected or graded: no test matched, or --requirement graded none"),
)
EPILOG = "exit codes:\n" + "\n".join(f"  {code}  {meaning}" for code, meaning in EXIT_CODES)


def _at_least(kind: Callable[[str], float], minimum: float) -> Callable[[str], Any]:
    """A converter for a number option with a floor: a bad value is a usage error, not a traceback."""
    name = "an integer" if kind is int else "a number"

    def convert(raw: str) -> float:
        try:
            value = kind(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw!r} is not {name}") from None
        if not value >= minimum:  # `not >=` so that NaN is refused too
            raise argparse.ArgumentTypeError(f"{raw} is not in the range x>={minimum}")
        return value

    return convert


def _integer(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not an integer") from None


def _seed(raw: str) -> int:
    try:
        return inputs.parse_seed(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number in 0..{inputs.SEED_MAX}") from None


def _major(raw: str) -> int:
    from conformance.majors import KNOWN

    if raw.strip().isdigit() and int(raw) in KNOWN:
        return int(raw)
    known = ", ".join(map(str, KNOWN))
    raise argparse.ArgumentTypeError(f"{raw!r} is not an OpenWOP major this suite grades ({known})")


def _boolean(raw: str) -> bool:
    """An environment switch: the usual yes/no words, anything else refused rather than guessed."""
    word = raw.strip().lower()
    if word in TRUE_WORDS | FALSE_WORDS:
        return word in TRUE_WORDS
    raise argparse.ArgumentTypeError(f"{raw!r} is not a boolean (use true/false, 1/0, yes/no, on/off)")


@dataclass(frozen=True)
class EnvOption:
    """An option of `run` that falls back to an environment variable, then to a default."""

    flag: str
    env: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


ENV_OPTIONS = (
    EnvOption(
        "--host-url",
        "OPENWOP_BASE_URL",
        str,
        None,
        "Host to certify; omit for the embedded reference host.",
        "URL",
    ),
    EnvOption("--host-token", "OPENWOP_API_KEY", str, None, "Bearer key (tenant A).", "KEY"),
    EnvOption(
        "--tenant-b-token",
        "OPENWOP_TEST_TENANT_B_API_KEY",
        str,
        None,
        "Bearer key of a second tenant.",
        "KEY",
    ),
    EnvOption("--require-behavior", "OPENWOP_REQUIRE_BEHAVIOR", _boolean, False, "BLOCKED fails the run."),
    EnvOption(
        "--request-timeout",
        "OPENWOP_REQUEST_TIMEOUT",
        _at_least(float, 0.001),
        20.0,
        "Seconds per HTTP request (x>=0.001).",
        "SECONDS",
    ),
    EnvOption(
        "--max-answer-bytes",
        "OPENWOP_MAX_ANSWER_BYTES",
        _at_least(int, 1),
        DEFAULT_MAX_ANSWER_BYTES,
        "Largest decoded answer (bytes, x>=1).",
        "BYTES",
    ),
    EnvOption(
        "--input-seed",
        inputs.SEED_ENV,
        _seed,
        None,
        "Seed of the inputs scenarios draw (seed counts, sizes, text, tags); default a fresh one per run, "
        "recorded in the bundle and in every rerun command.",
        "N",
    ),
    EnvOption(
        "--protocol-major",
        "OPENWOP_PROTOCOL_MAJOR",
        _major,
        None,
        "The OpenWOP major to grade (1 or 2); default the host's preferredVersion's major.",
        "N",
    ),
)


@dataclass(frozen=True)
class RunOptions:
    """What `run` was asked to do, after the command line, the environment and the defaults."""

    host_url: str | None
    host_token: str | None
    tenant_b_token: str | None
    report: Path | None
    junit: Path | None
    summary_md: Path | None
    alluredir: Path | None
    baseline: Path | None
    host_build: str | None
    profiles: tuple[str, ...]
    require_behavior: bool
    request_timeout: float
    max_answer_bytes: int
    input_seed: int | None
    workers: int
    disable: list[str]
    requirements: tuple[str, ...] = ()  # --requirement: ids or globs, passed to the plugin
    pytest_extra: tuple[str, ...] = ()  # what followed `--`, for pytest unchanged
    protocol_major: int | None = None  # --protocol-major: the OpenWOP major to grade (None: the host's)


class UsageError(Exception):
    """A command line this program cannot act on: one line on stderr, exit 4."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 4, not the usage block and exit 2, and no
    option is taken by an abbreviation (`--host-ur=` is an error, as it is to pytest).

    Why: 2 is "could not start" (the host), and a CI log should show one line saying what was wrong.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse's hook; never returns
        self.exit(EXIT_USAGE_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The command line: `run`, `explain` and `requirements`."""
    parser = Parser(
        prog=PROG,
        description="OpenWOP memory conformance suite.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="Run the scenarios against a host and print the verdict table.",
        description="Run the scenarios against a host and print the verdict table. "
        "Arguments after `--` go to pytest unchanged, e.g. `run --host-url=URL -- -x -k expiry`.",
        usage=f"{PROG} run [options] [-- PYTEST_ARGS...]",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.set_defaults(command_parser=run)  # so that a bad environment value is reported as `run`'s
    for option in ENV_OPTIONS:
        _add_env_option(run, option)
    run.add_argument("--report", type=Path, metavar="PATH", help="Write the JSON result bundle here.")
    run.add_argument(
        "--junit", type=Path, metavar="PATH", help="Also write JUnit XML here, one row per requirement."
    )
    run.add_argument("--summary-md", type=Path, metavar="PATH", help="Also write the Markdown summary here.")
    run.add_argument(
        "--alluredir", type=Path, metavar="DIR", help="Also write Allure results here (the allure extra)."
    )
    run.add_argument("--host-build", metavar="BUILD", help="The host build graded, recorded in the bundle.")
    run.add_argument(
        "--baseline",
        type=Path,
        metavar="known.yaml",
        help="Known failures (id, reason, link, expires): listed ones are BASELINED and do not fail the run.",
    )
    run.add_argument(
        "--profile",
        dest="profiles",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="Grade only these profiles (compaction, distillation, retention), with a verdict for each.",
    )
    run.add_argument(
        "--workers",
        type=_integer,
        default=0,
        help="Parallel pytest-xdist workers (0 = none; needs the `parallel` extra). [default: 0]",
    )
    run.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="ID=REASON",
        help="ID=REASON: opt a requirement out (repeatable).",
    )
    run.add_argument(
        "--requirement",
        dest="requirements",
        action="append",
        default=[],
        metavar="ID",
        help="Run only the tests that grade this requirement (repeatable; an alias or a glob such as "
        "'p11.expiry.*').",
    )
    explaining = commands.add_parser(
        "explain",
        help="Explain a requirement: sentence, gate, scenario tests, how to rerun, common causes.",
        description="Explain requirements: sentence, section, level, evidence surfaces, what makes them "
        "UNSUPPORTED or BLOCKED, the scenario tests that grade them, how to rerun them, and common "
        "causes of failure.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explaining.add_argument(
        "ids", nargs="+", metavar="ID", help="A requirement id, an alias, or a glob such as 'p11.expiry.*'."
    )
    explaining.add_argument(
        "--json", dest="as_json", action="store_true", help="Print a JSON array, one object per requirement."
    )
    listing = commands.add_parser(
        "requirements",
        help="List the requirement registry (id, level, section, sentence).",
        description="List the requirement registry (id, level, section, sentence); with --json, every "
        "field plus the scenario tests that grade each requirement and its common causes of failure.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--json", dest="as_json", action="store_true", help="Print JSON.")
    certify_commands.add_commands(commands)
    return parser


def _add_env_option(parser: argparse.ArgumentParser, option: EnvOption) -> None:
    """Default None, so that "not given" is visible and the environment can be consulted after."""
    shown = f" [env var: {option.env}" + (f"; default: {option.default}]" if option.default else "]")
    if option.parse is _boolean:
        parser.add_argument(option.flag, action="store_true", default=None, help=option.help + shown)
    else:
        parser.add_argument(
            option.flag, type=option.parse, default=None, metavar=option.metavar, help=option.help + shown
        )


def run_options(
    parser: argparse.ArgumentParser, args: argparse.Namespace, pytest_extra: Sequence[str] = ()
) -> RunOptions:
    """Fill what the command line left out from the environment (empty = unset), then the default."""
    values: dict[str, Any] = {}
    for option in ENV_OPTIONS:
        value = getattr(args, option.dest)
        raw = os.environ.get(option.env) or None
        if value is None and raw is not None:
            try:
                value = option.parse(raw)
            except argparse.ArgumentTypeError as exc:
                parser.error(f"argument {option.flag} (env var: {option.env}): {exc}")
        values[option.dest] = option.default if value is None else value
    for key in ("host_token", "tenant_b_token"):
        if values[key]:
            Secret(values[key])  # registered with the scrubber before anything can print it
    for pattern in args.requirements:
        try:
            explain.resolve(pattern)
        except requirements.UnknownRequirement as exc:
            parser.error(f"argument --requirement: {exc.args[0]} (list them: {PROG} requirements)")
    return RunOptions(
        report=args.report,
        junit=args.junit,
        summary_md=args.summary_md,
        alluredir=args.alluredir,
        baseline=args.baseline,
        host_build=args.host_build,
        profiles=tuple(args.profiles),
        workers=args.workers,
        disable=args.disable,
        requirements=tuple(args.requirements),
        pytest_extra=tuple(pytest_extra),
        **values,
    )


def run(options: RunOptions) -> int:
    """Run the scenarios against a host and print the verdict table; the exit code is pytest's."""
    if options.workers > 0 and not _has_xdist():
        raise UsageError(f"--workers needs pytest-xdist: install the parallel extra ({PARALLEL_EXTRA})")
    if options.alluredir is not None and importlib.util.find_spec("allure_pytest") is None:
        raise UsageError(f"--alluredir needs allure-pytest: install the allure extra ({ALLURE_EXTRA})")
    if not options.host_url and not embedded_available():
        print(f"openwop: {EMBEDDED_MISSING}", file=sys.stderr)
        return EXIT_COULD_NOT_START
    if options.host_url:
        problem = _startup_check(options.host_url, options)
        if problem is not None:
            print(scrub(f"openwop: {options.host_url}: {problem}"), file=sys.stderr)
            return EXIT_COULD_NOT_START
    bundle_path = options.report or Path(tempfile.mkdtemp(prefix="openwop-")) / "bundle.json"
    code = exit_code(int(pytest.main(pytest_args(options, bundle_path))))
    if not bundle_path.exists():
        if code in (EXIT_OK, EXIT_FAILED):
            print("openwop: the suite produced no result bundle (see the output above)", file=sys.stderr)
        return code
    bundle = json.loads(bundle_path.read_text(encoding="utf-8"))
    print(scrub("\n".join(verdict_lines(bundle, options.report))))
    return code


def exit_code(pytest_code: int) -> int:
    """pytest's exit code, which is ours (see EXIT_CODES); anything else it may return is internal."""
    return pytest_code if pytest_code in {code for code, _ in EXIT_CODES} else EXIT_INTERNAL_ERROR


def _has_xdist() -> bool:
    """Whether `-n` can work: pytest-xdist is an optional extra, so look it up without importing it."""
    return importlib.util.find_spec("xdist") is not None


def pytest_args(options: RunOptions, bundle_path: Path) -> list[str]:
    """The plugin's command line for these options: `run` grades exactly as `pytest` would."""
    args = [
        str(scenarios_dir()),
        "-q",
        "-p",
        "no:cacheprovider",
        # pytest's unraisable-exception hook ends a session with five full garbage collections
        # (about 0.4 s here) to surface exceptions raised in finalizers; no verdict reads them.
        "-p",
        "no:unraisableexception",
        # xdist's status line, written twice where the output is not a terminal; the table says it all
        "-p",
        "no:terminaldistreporter",
        # the plugin (an entry point) imports the suite before pytest could rewrite its asserts, which
        # asserts nothing the verdicts rest on
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--no-verdict-table",
        "--report",
        str(bundle_path),
        f"--request-timeout={options.request_timeout}",
        f"--max-answer-bytes={options.max_answer_bytes}",
    ]
    if options.host_url:
        args.append(f"--host-url={options.host_url}")
    if options.host_token:
        args.append(f"--host-token={options.host_token}")
    if options.tenant_b_token:
        args.append(f"--tenant-b-token={options.tenant_b_token}")
    if options.require_behavior:
        args.append("--require-behavior")
    if options.junit:
        args.append(f"--junit={options.junit}")
    if options.summary_md:
        args.append(f"--summary-md={options.summary_md}")
    if options.alluredir:
        args.append(f"--alluredir={options.alluredir}")
    if options.baseline:
        args.append(f"--baseline={options.baseline}")
    if options.host_build:
        args.append(f"--host-build={options.host_build}")
    if options.input_seed is not None:
        args.append(f"--input-seed={options.input_seed}")
    if options.protocol_major is not None:
        args.append(f"--protocol-major={options.protocol_major}")
    args += [f"--profile={p}" for p in options.profiles]
    if options.workers:
        args += ["-n", str(options.workers)]
    args += [f"--disable={d}" for d in options.disable]
    args += [f"--requirement={r}" for r in options.requirements]
    return args + list(options.pytest_extra)


def _startup_check(url: str, options: RunOptions) -> str | None:
    """The plugin's start-up check (discovery, then the credential preflight), run before pytest."""
    token, token_b = options.host_token, options.tenant_b_token
    client = HostClient(
        url, Secret(token) if token else None, options.request_timeout, options.max_answer_bytes
    )
    tenant_b = client.with_token(Secret(token_b)) if token_b else None
    try:
        return startup_problem(
            Credential(client, "--host-token", "OPENWOP_API_KEY"),
            Credential(tenant_b, "--tenant-b-token", "OPENWOP_TEST_TENANT_B_API_KEY") if tenant_b else None,
            options.protocol_major,
        )
    finally:
        client.close()
        if tenant_b is not None:
            tenant_b.close()


def verdict_lines(bundle: dict[str, Any], report: Path | None) -> list[str]:
    """Title, one row per requirement, then the totals and the verdict (and where the bundle is)."""
    host = bundle.get("host") or {}
    impl = host.get("implementation") or {}
    title = f"{impl.get('name', 'host')} {impl.get('version', '')} at {host.get('url', '?')}"
    graded = [row for row in ranked_rows(bundle["requirements"]) if row["outcome"] != "NOT-RUN"]
    rows = [
        (row["outcome"], row["level"], str(row["assertions"]), row["id"], row.get("reason") or "")
        for row in graded
    ]
    lines = [f"OpenWOP memory conformance — {title}", *table(VERDICT_COLUMNS, rows)]
    if len(graded) < len(bundle["requirements"]):
        lines.append(f"NOT-RUN: {len(bundle['requirements']) - len(graded)} requirements (see the bundle)")
    verdict = bundle.get("verdict") or {}
    lines.append(verdict.get("line") or ", ".join(f"{n} {k}" for k, n in bundle["totals"].items() if n))
    lines += [f"  {reason}" for reason in verdict.get("reasons", [])[1:]]
    lines += [f"  {p['profile']}: {p['verdict']}" for p in verdict.get("profiles", [])]
    if report:
        lines.append(f"result bundle: {report}")
    return lines


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = None) -> list[str]:
    """Aligned plain text; a long cell folds onto more lines, so no text is cut and columns stay put.

    Every column but the last is as wide as its widest cell, up to `CELL_WIDTH`; the last one takes
    what is left of the terminal (`width`, or the terminal's, or 120 columns in a pipe).
    """
    total = width or shutil.get_terminal_size((120, 24)).columns
    widths = [min(CELL_WIDTH, max([len(h), *(len(r[i]) for r in rows)])) for i, h in enumerate(headers[:-1])]
    widths.append(max(MIN_LAST_WIDTH, total - sum(widths) - len(COLUMN_GAP) * len(widths)))
    rule = ["-" * min(w, max([len(headers[i]), *(len(r[i]) for r in rows)])) for i, w in enumerate(widths)]
    lines: list[str] = []
    for cells in (headers, rule, *rows):
        folded = [_fold(cell, w) for cell, w in zip(cells, widths, strict=True)]
        for parts in itertools.zip_longest(*folded, fillvalue=""):
            lines.append(COLUMN_GAP.join(p.ljust(w) for p, w in zip(parts, widths, strict=True)).rstrip())
    return lines


def _fold(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width`, broken at spaces (ids keep their hyphens together)."""
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def list_requirements(as_json: bool) -> int:
    """List the requirement registry (id, level, section, sentence); as JSON, with tests and causes."""
    rows = list(requirements.registry().values())
    if as_json:
        tests = scenario_index.tests_by_requirement()
        listed = [
            {**r.__dict__, "tests": list(tests.get(r.id, ())), "causes": list(explain.causes_for(r.id))}
            for r in rows
        ]
        print(json.dumps(listed, indent=2, ensure_ascii=False))
        return 0
    cells = [
        (r.id, r.level, r.section, r.sentence + (f" (untestable: {r.untestable})" if r.untestable else ""))
        for r in rows
    ]
    print("Requirement registry")
    print("\n".join(table(REGISTRY_COLUMNS, cells)))
    return 0


def explain_requirements(patterns: Sequence[str], as_json: bool) -> int:
    """Explain every requirement the ids, aliases and globs name, in the order named, each once."""
    matches: dict[str, explain.Match] = {}
    for pattern in patterns:
        try:
            found = explain.resolve(pattern)
        except requirements.UnknownRequirement as exc:
            raise UsageError(f"explain: {exc.args[0]} (list them: {PROG} requirements)") from None
        for match in found:
            matches.setdefault(match.requirement.id, match)
    data = [explain.explanation(m) for m in matches.values()]
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print("\n\n".join("\n".join(explain.text_lines(d)) for d in data))
    return EXIT_OK


def split_pytest_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """This command line, and what follows its first `--` (pytest's arguments, unchanged)."""
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (EXIT_CODES, in --help too)."""
    parser = build_parser()
    own, extra = split_pytest_args(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(own)
    try:
        return _dispatch(args, extra)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE_ERROR
    except (BundleError, certify_commands.CommandError) as exc:  # a bad bundle, key or keyring file
        print(f"{args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE_ERROR
    except scenario_index.CollectionFailed as exc:
        print(f"{PROG}: internal error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    except BrokenPipeError:  # `… | head`: the reader left, which is not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception:  # a bug of ours: the traceback to report, and an exit code that says so
        print(scrub(traceback.format_exc()), file=sys.stderr, end="")
        print(f"{PROG}: internal error (please report it with the traceback above)", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


def _dispatch(args: argparse.Namespace, extra: list[str]) -> int:
    """Run the command asked for; arguments after `--` belong to `run` alone."""
    if extra and args.command != "run":
        raise UsageError(f"only `run` passes arguments after `--` to pytest (got: {' '.join(extra)})")
    if args.command == "run":
        return run(run_options(args.command_parser, args, extra))
    if args.command == "explain":
        return explain_requirements(args.ids, args.as_json)
    if args.command == "requirements":
        return list_requirements(args.as_json)
    if getattr(args, "handler", None) is not None:  # the maintainers' commands (conformance/certify/)
        return int(args.handler(args))
    raise UsageError(f"choose a command: {', '.join(COMMANDS)} (see {PROG} --help)")


if __name__ == "__main__":
    sys.exit(main())
