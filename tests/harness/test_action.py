"""The GitHub Action: action.yml's inputs, outputs and steps (keys only through the environment,
uploads that always run), and action/run.sh run for real, outside GitHub, against reference hosts:
outputs file, exit code, the reports written, and no key anywhere."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
SCRIPT = ROOT / "action" / "run.sh"
KEY_ENV = {"api-key": "OPENWOP_API_KEY", "tenant-b-api-key": "OPENWOP_TEST_TENANT_B_API_KEY"}


def _steps() -> list[dict]:
    return ACTION["runs"]["steps"]


def _run_step() -> dict:
    return next(step for step in _steps() if step.get("id") == "run")


def test_the_action_declares_its_inputs_and_outputs():
    assert ACTION["runs"]["using"] == "composite"
    assert {
        *("host-url", "api-key", "tenant-b-api-key", "profiles", "require-behavior"),
        *("requirements", "baseline", "host-build", "input-seed", "pytest-args"),
    } <= set(ACTION["inputs"])
    assert all(not spec.get("required") for spec in ACTION["inputs"].values())
    assert {"verdict", "bundle"} <= set(ACTION["outputs"])
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_every_verdict_value_the_script_can_write_is_documented():
    """The `verdict` output names each headline and each word for a run that stopped before grading."""
    documented = ACTION["outputs"]["verdict"]["description"]
    script = SCRIPT.read_text(encoding="utf-8")
    headlines = ("CONFORMING", "NONCONFORMING", "PARTIAL", "INCOMPLETE", "BASELINED", "INAPPLICABLE")
    stopped = ("COULD-NOT-START", "USAGE-ERROR", "NOTHING-GRADED", "INTERNAL-ERROR")
    for word in (*headlines, *stopped):
        assert word in documented, word
    for word in stopped:
        assert f'"{word}"' in script, word
    schema = json.loads((ROOT / "schemas" / "report-bundle.schema.json").read_text(encoding="utf-8"))
    assert set(headlines) <= set(json.dumps(schema).split('"'))


def test_keys_reach_the_suite_through_the_environment_only():
    step = _run_step()
    for key_input, variable in KEY_ENV.items():
        assert step["env"][variable] == f"${{{{ inputs.{key_input} }}}}"
    for step in _steps():
        # No input is spliced into a script (script injection, keys in the log): `env:` carries them.
        assert "inputs." not in step.get("run", ""), step.get("name")
    assert _run_step()["run"].strip() == 'bash "$ACTION_PATH/action/run.sh"'


def test_the_host_extra_is_installed_only_without_a_host_url():
    install = next(step for step in _steps() if "pip install" in step.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    lines = [line.strip() for line in install["run"].splitlines() if "pip install" in line]
    assert len(lines) == 2 and all("-c constraints.txt" in line for line in lines)
    assert "host" not in lines[0] and "'.[host,allure]'" in lines[1] and "./host" in lines[1]
    assert 'if [ -n "$HOST_URL" ]' in install["run"]


def test_reports_are_uploaded_even_when_the_run_fails():
    uploads = [step for step in _steps() if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == 2 and all(step["uses"] == "actions/upload-artifact@v4" for step in uploads)
    assert all(step["if"] == "always()" for step in uploads)
    paths = "\n".join(step["with"]["path"] for step in uploads)
    for name in ("bundle.json", "junit.xml", "summary.md", "allure-results"):
        assert name in paths
    folder = _run_step()["env"]["OPENWOP_OUTPUT_DIR"]
    assert all(line.strip().startswith(folder) for line in paths.splitlines() if line.strip())


def test_ci_runs_the_same_script_against_the_embedded_host():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in ci.splitlines() if not line.lstrip().startswith("#")]
    (line,) = [line for line in commands if "action/run.sh" in line]
    assert ".venv/bin" in line and "verdict=CONFORMING" in line and "OPENWOP_BASE_URL" not in line
    assert commands.index("make test-slow") < commands.index(line)


def _run_script(tmp_path: Path, *pytest_args: str, **env: str) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENWOP_", "PYTEST_", "GITHUB_"))}
    child_env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{child_env.get('PATH', '')}",
        OPENWOP_OUTPUT_DIR=str(out),
        **env,
    )
    args = ["bash", str(SCRIPT), *(["--", *pytest_args] if pytest_args else [])]
    done = subprocess.run(args, cwd=tmp_path, env=child_env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr, out


def _outputs(out: Path) -> dict[str, str]:
    lines = (out / "outputs.txt").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines)


def _assert_no_key(host, output: str, out: Path) -> None:
    texts = [
        output,
        *(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file()),
    ]
    for text in texts:
        assert host.token_a not in text and host.token_b not in text


def _host_env(host, **extra: str) -> dict[str, str]:
    return {
        "OPENWOP_BASE_URL": host.url,
        "OPENWOP_API_KEY": host.token_a,
        "OPENWOP_TEST_TENANT_B_API_KEY": host.token_b,
        **extra,
    }


@pytest.mark.slow  # a fresh shell and suite process per run
def test_the_script_grades_a_failing_host_and_says_so(start_host, tmp_path):
    host = start_host("event-wrong-type")
    code, output, out = _run_script(
        tmp_path,
        "-k",
        "test_event_type or test_event_schema",
        **_host_env(host, OPENWOP_PROFILES="compaction"),
    )
    assert code == 1, output[-3000:]
    outputs = _outputs(out)
    assert outputs["exit-code"] == "1" and outputs["verdict"] not in ("CONFORMING", "INCOMPLETE")
    for key, name in (("bundle", "bundle.json"), ("junit", "junit.xml"), ("summary", "summary.md")):
        assert outputs[key] == str(out / name) and (out / name).stat().st_size > 0
    bundle = json.loads((out / "bundle.json").read_text(encoding="utf-8"))
    assert bundle["exitCode"] == 1 and bundle["totals"]["FAIL"] >= 1
    assert "rfc0012.B.event-type" in (out / "junit.xml").read_text(encoding="utf-8")
    assert "**FAIL** | `rfc0012.B.event-type`" in (out / "summary.md").read_text(encoding="utf-8")
    assert bundle["options"]["hostToken"] == "provided"
    _assert_no_key(host, output, out)


@pytest.mark.slow  # a fresh shell and suite process per run
def test_the_script_passes_a_clean_host_and_appends_the_step_summary(start_host, tmp_path):
    host = start_host()
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("previous step\n", encoding="utf-8")
    code, output, out = _run_script(
        tmp_path, "-k", "test_event_type", **_host_env(host, GITHUB_STEP_SUMMARY=str(step_summary))
    )
    assert code == 0, output[-3000:]
    assert _outputs(out)["verdict"] in ("CONFORMING", "PARTIAL")
    summary = step_summary.read_text(encoding="utf-8")
    assert summary.startswith("previous step\n## OpenWOP memory conformance: ")
    assert summary.removeprefix("previous step\n") == (out / "summary.md").read_text(encoding="utf-8")
    _assert_no_key(host, output, out)


@pytest.mark.slow  # a fresh shell and suite process per run
def test_a_refused_key_could_not_start_with_exit_2_and_no_key_shown(start_host, tmp_path):
    host = start_host()
    wrong = "wrong-key-" + host.token_a[::-1]
    env = _host_env(host, OPENWOP_API_KEY=wrong, GITHUB_OUTPUT=str(tmp_path / "github-output"))
    code, output, out = _run_script(tmp_path, **env)
    assert code == 2, output[-3000:]
    outputs = dict(line.split("=", 1) for line in (tmp_path / "github-output").read_text().splitlines())
    assert outputs == {"verdict": "COULD-NOT-START", "exit-code": "2"}
    assert not (out / "outputs.txt").exists()  # in GitHub Actions the outputs go to $GITHUB_OUTPUT only
    assert wrong not in output and not re.search(r"wrong-key-\S+", output)


def test_a_stray_argument_is_a_usage_error(tmp_path):
    """Options belong to the environment (keys must not be on a command line); pytest's after --."""
    done = subprocess.run(
        ["bash", str(SCRIPT), "--host-url", "x"], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 4 and "after --" in done.stderr


@pytest.mark.slow  # a fresh shell and suite process per run
def test_an_unreachable_host_could_not_start_and_a_bad_baseline_is_a_usage_error(tmp_path):
    code, output, out = _run_script(tmp_path, OPENWOP_BASE_URL="http://127.0.0.1:9", OPENWOP_API_KEY="k")
    assert code == 2 and _outputs(out) == {"verdict": "COULD-NOT-START", "exit-code": "2"}, output[-2000:]
    missing = tmp_path / "absent.yaml"
    code, output, out = _run_script(tmp_path, OPENWOP_BASELINE=str(missing))
    assert code == 4 and _outputs(out)["verdict"] == "USAGE-ERROR", output[-2000:]


@pytest.mark.slow  # a fresh shell and suite process per run
def test_a_baseline_and_a_requirement_given_as_inputs_read_baselined(start_host, tmp_path):
    host = start_host("event-wrong-type")
    known = tmp_path / "known.yaml"
    known.write_text(
        "- id: rfc0012.B.event-type\n  reason: tracked upstream\n  expires: 2999-01-01\n", encoding="utf-8"
    )
    env = _host_env(host, OPENWOP_BASELINE=str(known), OPENWOP_PROFILES="compaction")
    code, output, out = _run_script(tmp_path, **env)
    assert code == 0 and _outputs(out)["verdict"] == "BASELINED", output[-3000:]
    code, output, out = _run_script(tmp_path, **_host_env(host, OPENWOP_REQUIREMENTS="rfc0012.B.event-*"))
    bundle = json.loads((out / "bundle.json").read_text(encoding="utf-8"))
    graded = {r["id"] for r in bundle["requirements"] if r["outcome"] != "NOT-RUN"}
    assert graded and all(rid.startswith("rfc0012.B.event-") for rid in graded), graded
    assert _outputs(out)["verdict"] == "NONCONFORMING" and code == 1, output[-3000:]
