"""The house's size limits (issue 63, STYLE.md's small files): outside the tests, no source
file over 800 lines and no function over 150. Every C++, CUDA and Python file git tracks under
the directories below is read; functions are found by lizard (PyPI: a C/C++/Python analyser
that needs no headers or build), CUDA files read as C++. A function a macro hides from lizard
is not seen; a long one it does see is named with its file and line."""
import subprocess
from pathlib import Path

import pytest

lizard = pytest.importorskip("lizard", reason="lizard is in python/requirements.txt (make setup)")

ROOT = Path(__file__).resolve().parents[2]
DIRS = ("src", "include", "tools", "bench", "python", "scripts", "fuzz", "examples")
SUFFIXES = {".c", ".cpp", ".hpp", ".h", ".cu", ".cuh", ".py"}
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150


def sources():
    r = subprocess.run(["git", "ls-files", "--", *DIRS], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:  # not a git checkout (a source tarball): every file below the dirs
        files = [str(p.relative_to(ROOT)) for d in DIRS for p in (ROOT / d).rglob("*")]
    else:
        files = r.stdout.split()
    out = [f for f in files if Path(f).suffix in SUFFIXES and (ROOT / f).is_file()]
    assert len(out) > 300, f"only {len(out)} sources found under {DIRS}"
    return sorted(out)


def too_long(path, text):
    """(line, name, length) of each function in `text` longer than MAX_FUNCTION_LINES."""
    name = path + (".cpp" if Path(path).suffix in (".cu", ".cuh") else "")
    info = lizard.analyze_file.analyze_source_code(name, text)
    return [(f.start_line, f.name, f.length) for f in info.function_list
            if f.length > MAX_FUNCTION_LINES]


def test_no_source_file_is_over_800_lines():
    long_files = []
    for f in sources():
        lines = (ROOT / f).read_text(errors="replace").count("\n")
        if lines > MAX_FILE_LINES:
            long_files.append(f"{f}: {lines} lines")
    assert not long_files, "over the house's 800 lines:\n" + "\n".join(long_files)


def test_no_function_outside_the_tests_is_over_150_lines():
    found = []
    for f in sources():
        for line, name, length in too_long(f, (ROOT / f).read_text(errors="replace")):
            found.append(f"{f}:{line}: {name} is {length} lines")
    assert not found, "over the house's 150 lines a function:\n" + "\n".join(found)


def test_the_function_check_sees_cpp_cuda_and_python():
    """What the two tests above rely on: lizard finds a long function in each kind of file."""
    body = "".join(f"  x += {i};\n" for i in range(MAX_FUNCTION_LINES))
    cpp = "namespace n {\nint f(int x) {\n" + body + "  return x;\n}\n}\n"
    py = "def f(x):\n" + "".join(f"    x += {i}\n" for i in range(MAX_FUNCTION_LINES)) + \
        "    return x\n"
    for path, text in (("a.cpp", cpp), ("a.cu", "__global__ " + cpp.replace("int f", "void f")),
                       ("a.hpp", cpp), ("a.py", py)):
        found = too_long(path, text)
        assert len(found) == 1 and found[0][2] > MAX_FUNCTION_LINES, (path, found)
    assert too_long("a.cpp", "int f(int x) {\n  return x;\n}\n") == []
