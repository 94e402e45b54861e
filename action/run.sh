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
#   OPENWOP_OUTPUT_DIR              where the reports go (default: ./openwop-conformance)
# Arguments after `--` go to pytest unchanged (e.g. scenario files, -k).
#
# Outputs, as key=value lines: appended to $GITHUB_OUTPUT in GitHub Actions, else written to
# $OPENWOP_OUTPUT_DIR/outputs.txt: verdict (the bundle's headline: CONFORMING, NONCONFORMING,
# INCOMPLETE, PARTIAL, BASELINED, INAPPLICABLE), bundle, junit, summary, allure-results, exit-code.
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
if "$PYTHON" -c "import allure_pytest" 2>/dev/null; then
  plugin_args+=("--alluredir=$ALLURE")
fi

rm -f "$BUNDLE"
openwop-memory-conformance run --report "$BUNDLE" -- "${plugin_args[@]}" "$@"
code=$?

verdict=$("$PYTHON" - "$BUNDLE" "$code" <<'PY'
import json, sys
# No bundle: the run could not start or broke before grading anything.
try:
    bundle = json.load(open(sys.argv[1], encoding="utf-8"))
except (OSError, ValueError):
    print("INCOMPLETE")
    sys.exit(0)
headline = (bundle.get("verdict") or {}).get("headline")
# A bundle written before the verdict field: the exit code is all there is to go on.
print(headline or ("CONFORMING" if sys.argv[2] == "0" else "NONCONFORMING"))
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
