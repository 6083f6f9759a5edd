"""The warpath binary for the CLI tests: where it and the data are, running it, and the checks
every run gets (no crash, exit status).

Environment: WARPATH_BIN (default <repo>/build/warpath), WARPATH_DATA (default
<repo>/../shared/data). A test module calls skip_without_binary() at import.
"""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WARPATH_BIN = Path(os.environ.get("WARPATH_BIN", str(REPO / "build" / "warpath")))
DATA = Path(os.environ.get("WARPATH_DATA", str(REPO.parent / "shared" / "data")))


def skip_without_binary():
    """Skips the calling test module when the binary is missing."""
    if not WARPATH_BIN.is_file():
        pytest.skip(f"warpath binary not found at {WARPATH_BIN} (set WARPATH_BIN)",
                    allow_module_level=True)


def run(*args, timeout=120, cwd=None):
    """Runs warpath with `args` (str()-ed), capturing text output."""
    return subprocess.run([str(WARPATH_BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def run_beside(name, *args, timeout=180):
    """Runs the program `name` built beside warpath (a bench) with `args`; skips the test when
    it was not built."""
    program = WARPATH_BIN.parent / name
    if not program.is_file():
        pytest.skip(f"{program} not built")
    return subprocess.run([str(program), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def assert_no_crash(r):
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr}"
    for bad in ("terminate called", "Traceback", "Aborted", "core dumped", "internal error"):
        assert bad not in r.stderr, r.stderr


def assert_ok(r):
    assert_no_crash(r)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}\n{r.stdout}"
    return r
