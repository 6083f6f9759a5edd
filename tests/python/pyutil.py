"""Helpers of the Python package's tests: the package (or a skip saying why), the CLI beside
it, the shared data.

The package is imported from the build tree (the build assembles it under <build>/python;
`make test` builds it), or from WARPATH_PYTHONPATH. Environment: WARPATH_BIN (default
<repo>/build/warpath; the package is looked for beside it), WARPATH_PYTHONPATH (a directory
holding the package `warpath`), WARPATH_DATA (the shared data). A test module calls
`need_package()` at import: without the package (a build without Python's headers or
nanobind) the module is skipped, saying why.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WARPATH_BIN = Path(os.environ.get("WARPATH_BIN", str(REPO / "build" / "warpath")))
PACKAGE_DIR = Path(os.environ.get("WARPATH_PYTHONPATH", str(WARPATH_BIN.parent / "python")))
DATA = Path(os.environ.get("WARPATH_DATA", str(REPO.parent / "shared" / "data")))

if (PACKAGE_DIR / "warpath" / "__init__.py").is_file() and str(PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(PACKAGE_DIR))


def need_package():
    """The warpath package, or a module-level skip naming where it was looked for."""
    try:
        import warpath  # noqa: F401
    except ImportError as e:
        pytest.skip(f"the warpath Python package is not built under {PACKAGE_DIR} ({e}); "
                    "build with nanobind installed (scripts/setup.sh) or set WARPATH_PYTHONPATH",
                    allow_module_level=True)
    return warpath


def cli(*args, timeout=300):
    """Runs the warpath CLI; skips when it is not built; returns stdout (exit 0 asserted)."""
    if not WARPATH_BIN.is_file():
        pytest.skip(f"warpath binary not found at {WARPATH_BIN}")
    r = subprocess.run([str(WARPATH_BIN), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"warpath {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


def data(*parts):
    """A file of the shared data, or a skip saying it is absent."""
    p = DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared data {p} not present (set WARPATH_DATA)")
    return p


#: Batch sizes every engine is tried at: empty, one, around the lanes, large.
BATCH_SIZES = [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 1000, 4096, 70000]
