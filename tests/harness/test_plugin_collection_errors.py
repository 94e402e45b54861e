"""The plugin must survive reports that are not test reports (a module that fails to import)."""

import subprocess
import sys


def test_collection_error_is_reported_by_pytest_not_crashed_by_the_plugin(tmp_path):
    broken = tmp_path / "test_broken.py"
    broken.write_text("import module_that_does_not_exist\n\ndef test_x():\n    pass\n")
    for extra in ([], ["-n", "2"]):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(broken), *extra],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        output = done.stdout + done.stderr
        assert "INTERNALERROR" not in output and "AttributeError" not in output, output[-2000:]
        assert "module_that_does_not_exist" in output
        assert done.returncode != 0
