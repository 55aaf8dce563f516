"""Start-up (issue 20): the console script's module imports neither numpy nor the command tree
(so that it can tune the process first, filterkit.ownership), and a chain run imports neither
the model files' module (only ``--save-model`` does) nor click's shell completion."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chain_helpers import REAL

#: Import ``filterkit.cli`` and run ``ARGV`` if any, then report the modules loaded (on stderr's last line).
PROBE = """
import json, sys
import filterkit.cli
status = filterkit.cli.run(sys.argv[1:]) if len(sys.argv) > 1 else 0
sys.stdout.flush()
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def loaded_modules(*argv) -> tuple[int, set[str]]:
    completed = subprocess.run([sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, timeout=120)
    report = json.loads(completed.stderr.decode().strip().splitlines()[-1])
    return report["status"], set(report["modules"])


@pytest.mark.slow
def test_importing_the_console_scripts_module_imports_neither_numpy_nor_the_commands():
    status, modules = loaded_modules()
    assert status == 0
    assert "click" in modules
    assert not {"numpy", "filterkit.commands", "filterkit.plugins", "importlib.metadata"} & modules


@pytest.mark.slow
def test_a_chain_run_imports_no_model_module_and_no_shell_completion(tmp_path):
    status, modules = loaded_modules("-q", "-o", tmp_path / "out.arff", REAL / "iris.arff", "l2")
    assert status == 0 and (tmp_path / "out.arff").stat().st_size > 0
    assert not {"filterkit.model", "click.shell_completion"} & modules
    status, modules = loaded_modules("-q", "--save-model", tmp_path / "m.json", REAL / "iris.arff", "l2")
    assert status == 0 and json.loads((tmp_path / "m.json").read_text())
    assert "filterkit.model" in modules
