#!/usr/bin/env bash
# The one script the GitHub Action runs (action.yml), and .ci/run runs against the embedded host:
# grade a host with `openwop-memory-conformance run`, write the bundle, JUnit, the Markdown summary
# and (when allure-pytest is installed) Allure results into one folder, and say the verdict.
#
# Inputs, all from the environment, so that keys never stand on a command line:
#   OPENWOP_BASE_URL                host to grade; empty: the embedded reference host (`host` extra)
#   OPENWOP_API_KEY, OPENWOP_TEST_TENANT_B_API_KEY
#                                   keys of tenants A and B, read by the suite itself
#   OPENWOP_REQUIRE_BEHAVIOR        true: BLOCKED fails the run (read by the suite itself)
#   OPENWOP_PROFILES                comma-separated profiles to grade (empty: every profile)
#   OPENWOP_REQUIREMENTS            requirement ids, aliases or globs to grade, separated by commas or
#                                   whitespace (empty: every requirement)
#   OPENWOP_BASELINE                a baseline file of known failures (--baseline; empty: none)
#   OPENWOP_HOST_BUILD, OPENWOP_INPUT_SEED, OPENWOP_REQUEST_TIMEOUT
#                                   read by the suite itself
#   OPENWOP_PYTEST_ARGS             more pytest arguments, separated by whitespace (no quoting)
#   OPENWOP_OUTPUT_DIR              where the reports go (default: ./openwop-conformance)
# Arguments after `--` go to pytest unchanged (e.g. scenario files, -k).
#
# Outputs, as key=value lines: appended to $GITHUB_OUTPUT in GitHub Actions, else written to
# $OPENWOP_OUTPUT_DIR/outputs.txt: verdict, bundle, junit, summary, allure-results, exit-code.
# verdict is the bundle's headline (CONFORMING, NONCONFORMING, INCOMPLETE, PARTIAL, BASELINED,
# INAPPLICABLE) when the run graded; otherwise what stopped it, from the exit code: COULD-NOT-START
# (2: the host unreachable, its discovery unusable, a key refused, no host at all), USAGE-ERROR (4: a
# bad option, value, baseline file or requirement id), NOTHING-GRADED (5: nothing selected, or a
# narrowed run graded none of what it selected), INTERNAL-ERROR (3, or a run that wrote no bundle).
# The exit code is the suite's (0 passed, 1 failed, 2 could not start, …).
set -uo pipefail

if [ "${1:-}" = "--" ]; then
  shift
elif [ $# -gt 0 ]; then
  echo "action/run.sh: unexpected argument '$1' (pytest arguments go after --)" >&2
  exit 4
fi

OUT=${OPENWOP_OUTPUT_DIR:-openwop-conformance}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
BUNDLE="$OUT/bundle.json"
JUNIT="$OUT/junit.xml"
SUMMARY="$OUT/summary.md"
ALLURE="$OUT/allure-results"
OUTPUTS=${GITHUB_OUTPUT:-$OUT/outputs.txt}
[ -n "${GITHUB_OUTPUT:-}" ] || : >"$OUTPUTS"  # GitHub's file collects every step's; ours is this run's
PYTHON=${OPENWOP_PYTHON:-python3}

plugin_args=("--junit=$JUNIT" "--summary-md=$SUMMARY")
if [ -n "${OPENWOP_PROFILES:-}" ]; then
  plugin_args+=("--profile=$OPENWOP_PROFILES")
fi
requirements=${OPENWOP_REQUIREMENTS:-}
set -f  # no pathname expansion: a requirement glob such as p11.expiry.* reaches the suite as written
for requirement in ${requirements//,/ }; do
  plugin_args+=("--requirement=$requirement")
done
if [ -n "${OPENWOP_BASELINE:-}" ]; then
  plugin_args+=("--baseline=$OPENWOP_BASELINE")
fi
read -r -a extra_args <<<"${OPENWOP_PYTEST_ARGS:-}"
if "$PYTHON" -c "import allure_pytest" 2>/dev/null; then
  plugin_args+=("--alluredir=$ALLURE")
fi

rm -f "$BUNDLE"
openwop-memory-conformance run --report "$BUNDLE" -- "${plugin_args[@]}" "${extra_args[@]}" "$@"
code=$?
set +f

verdict=$("$PYTHON" - "$BUNDLE" "$code" <<'PY'
import json, sys
code = int(sys.argv[2])
# A run that stopped before grading says what stopped it, never a headline it did not earn.
STOPPED = {2: "COULD-NOT-START", 3: "INTERNAL-ERROR", 4: "USAGE-ERROR", 5: "NOTHING-GRADED"}
if code in STOPPED:
    print(STOPPED[code])
    sys.exit(0)
try:
    bundle = json.load(open(sys.argv[1], encoding="utf-8"))
except (OSError, ValueError):
    print("INTERNAL-ERROR")  # it ran and wrote no bundle
    sys.exit(0)
print((bundle.get("verdict") or {}).get("headline") or "INTERNAL-ERROR")
PY
)

if [ ! -f "$BUNDLE" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  printf '## OpenWOP memory conformance: %s\n\nThe suite wrote no result bundle (exit code %s); see the log of this step.\n' \
    "$verdict" "$code" >>"$GITHUB_STEP_SUMMARY"
fi

{
  echo "verdict=$verdict"
  echo "exit-code=$code"
  [ -f "$BUNDLE" ] && echo "bundle=$BUNDLE"
  [ -f "$JUNIT" ] && echo "junit=$JUNIT"
  [ -f "$SUMMARY" ] && echo "summary=$SUMMARY"
  [ -d "$ALLURE" ] && echo "allure-results=$ALLURE"
} >>"$OUTPUTS"

echo "openwop: verdict $verdict (exit code $code); reports in $OUT"
exit "$code"
