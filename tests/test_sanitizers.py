"""The compiled modules under AddressSanitizer and UndefinedBehaviorSanitizer (issue 37, item 14).

The C modules are built with ``-fsanitize=address,undefined`` and the tests that compare them
with their oracles run in a child Python that imports them: an out-of-bounds access, an
undefined shift, ``__builtin_clzll(0)`` (what writing ``-0.0`` once reached, harmless in the
shipped build by luck) or a ``memcpy`` from NULL (built with ``-fno-builtin``, so that gcc calls
``memcpy`` rather than inlining it unchecked) stops the child with the sanitizer's report.  The child's Python is not
instrumented, so the ASan runtime is preloaded; leak checking is off (the interpreter keeps
its memory at exit).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from chain_helpers import TESTS

ROOT = TESTS.parent
#: Each module and its sources, built as setup.py builds them (-ffp-contract=off: no fused multiply-add).
MODULES = {
    "filterkit.arff._speedups": [
        "filterkit/arff/_speedups.c",
        "filterkit/arff/format_rows.c",
        "filterkit/arff/labels.c",
        "filterkit/arff/numbers.c",
    ],
    "filterkit._kernels": ["filterkit/_kernels.c"],
    "filterkit.formats._lines": ["filterkit/formats/_lines.c"],
    "filterkit._words": ["filterkit/_words.c"],
}
#: The tests that compare each compiled function with its oracle (CONTRIBUTING.md).
DIFFERENTIAL_TESTS = [
    "tests/arff/test_arff_speedups.py",
    "tests/arff/test_block_formatting.py",
    "tests/arff/test_gathered_rows.py",
    "tests/arff/test_header_bulk.py",
    "tests/arff/test_sparse_single_pass.py",
    "tests/arff/test_header_fast_path.py",
    "tests/arff/test_parse_paths.py",
    "tests/test_quoted_compiled.py",
    "tests/arff/test_quoted_labels.py",
    "tests/test_kernels.py",
    "tests/test_lines_compiled.py",
    "tests/test_words_compiled.py",
    "tests/test_words_characters.py",
    "tests/test_words_hashing.py",
    "tests/test_words_kept.py",
    "tests/test_words_unicode.py",
]
#: Tests left out of the sanitized run: a child forked from a process with threads that starts a thread of its own
#: can hang in gcc 12's libasan (a lock another thread held at the fork; LLVM's runtime takes its locks around a fork
#: since llvm/llvm-project#75290, and CPython skips its fork tests under ASan for this, gh-89363).  The test checks
#: Python's thread bookkeeping, not the module's memory: the suite runs it unsanitized.
FORK_WITH_THREADS = ["tests/test_words_compiled.py::test_a_forked_child_counts_with_a_helper_thread_of_its_own"]
#: Imports the sanitized modules in place of the built ones, checks they are the ones used, runs pytest.
CHILD = """
import importlib.util, sys
import pytest
names = sys.argv[1].split(",")
paths = sys.argv[2 : 2 + len(names)]
for name, path in zip(names, paths):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
from filterkit import kernels
from filterkit_plugins import words
used = (kernels.speedups, kernels.arrays, kernels.lines, kernels.words)
assert words.count_words is kernels.words.count
assert tuple(module.__file__ for module in used) == tuple(paths)
sys.exit(pytest.main(sys.argv[2 + len(names) :]))
"""


def sanitizer_runtime() -> str:
    """The path of gcc's ASan runtime; skips the test without gcc or the sanitizers' runtimes."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    found = {}
    for library in ("libasan.so", "libubsan.so"):
        path = subprocess.run(["gcc", f"-print-file-name={library}"], capture_output=True, text=True).stdout.strip()
        if not os.path.isabs(path) or not os.path.exists(path):
            pytest.skip(f"gcc has no {library} (the sanitizer runtime: apt-get install libasan8 libubsan1)")
        found[library] = path
    return found["libasan.so"]


@pytest.mark.nightly
def test_the_compiled_modules_pass_the_differential_tests_under_asan_and_ubsan(tmp_path):
    asan = sanitizer_runtime()
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = []
    for name, sources in MODULES.items():
        target = tmp_path / (name.rsplit(".", 1)[1] + suffix)
        compiled = subprocess.run(
            # -fno-builtin: a memcpy gcc inlines is not checked for a NULL argument (issue 47, item 7)
            ["gcc", "-shared", "-fPIC", "-O2", "-g", "-fno-omit-frame-pointer", "-ffp-contract=off", "-fno-builtin"]
            + ["-fsanitize=address,undefined", "-I", sysconfig.get_paths()["include"], *sources, "-o", str(target)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert compiled.returncode == 0, compiled.stderr
        built.append(str(target))
    environment = {
        **os.environ,
        "LD_PRELOAD": asan,
        "ASAN_OPTIONS": "detect_leaks=0",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    }
    child = subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(MODULES), *built]
        + ["-q", "-x", "-m", "not slow", "-p", "no:cacheprovider", *DIFFERENTIAL_TESTS]
        + [f"--deselect={test}" for test in FORK_WITH_THREADS],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    report = child.stdout[-3000:] + child.stderr[-6000:]
    assert "runtime error:" not in child.stderr and "AddressSanitizer" not in child.stderr, report
    assert child.returncode == 0, report
    assert " passed" in child.stdout, report


#: C that is no module of the package but the template of each file ``filterkit export`` writes, sanitized there.
EXPORTED = {
    "filterkit/export/scorer.c": "tests/test_export.py",
    "filterkit/export/tokens.c": "tests/test_export_words.py",
}


def test_the_sanitized_run_covers_every_compiled_module_and_its_differential_tests():
    sources = {Path(ROOT, source) for sources in MODULES.values() for source in sources}
    assert sources | {Path(ROOT, source) for source in EXPORTED} == set(ROOT.glob("filterkit/**/*.c"))
    assert all("-fsanitize=address,undefined" in (ROOT / test).read_text() for test in EXPORTED.values())
    assert all((ROOT / path).is_file() for path in DIFFERENTIAL_TESTS)
    for test in FORK_WITH_THREADS:  # each left out is still there to leave out, in a file the run reads
        path, name = test.split("::")
        assert path in DIFFERENTIAL_TESTS and f"def {name}(" in (ROOT / path).read_text()
