"""The module boundaries: every #include in src/ and include/warpath/ stays inside its module or
goes to a module the including module declares in DEPENDS (src/CMakeLists.txt, warpath_module
calls), and the declared graph has no cycle. CMake links each module only to what it declares;
this test also catches what static linking lets through (a use of header-only code). It does
not see calls to functions a module's header declares and a higher library defines (the io
loaders in io/text_file.hpp and io/classbench.hpp, runtime's load_run_config): a lower module
calling one of those builds here and fails to link where that library is not built."""
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CMAKE = ROOT / "src" / "CMakeLists.txt"
KEYWORDS = {"PATHS", "SOURCES", "CUDA", "DEPENDS", "IF", "WHOLE", "ABOVE_ALL", "FAMILIES"}


def modules(text=None):
    """{name: {"paths": [...], "depends": [...], "sources": [...]}} from the warpath_module calls."""
    text = CMAKE.read_text() if text is None else text
    text = re.sub(r"#[^\n]*", "", text)
    out = {}
    for m in re.finditer(r"warpath_module\(([^)]*)\)", text):
        tokens = m.group(1).split()
        name, key, entry = tokens[0], None, {"paths": [], "depends": [], "sources": []}
        for t in tokens[1:]:
            if t == "ABOVE_ALL":  # every module declared before it
                entry["depends"].extend(n for n in out if n not in entry["depends"])
            if t in KEYWORDS:
                key = t
            elif key == "PATHS":
                entry["paths"].append(t)
            elif key == "DEPENDS":
                entry["depends"].append(t)
            elif key in ("SOURCES", "CUDA"):
                entry["sources"].append(t)
        assert name not in out, f"module {name} declared twice"
        out[name] = entry
    return out


def owner(mods, path):
    """The module whose longest PATHS entry contains `path` (repository-relative), or None."""
    best, length = None, -1
    for name, m in mods.items():
        for p in m["paths"]:
            if (path == p or path.startswith(p + "/")) and len(p) > length:
                best, length = name, len(p)
    return best


def project_files():
    for top in ("src", "include/warpath"):
        for dirpath, _, files in os.walk(ROOT / top):
            for f in files:
                if f.endswith((".cpp", ".hpp", ".cu", ".cuh", ".h")):
                    yield (Path(dirpath) / f).relative_to(ROOT).as_posix()


INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(warpath/[^>]+)>)', re.M)
GENERATED = {"version_config.hpp", "git_commit.hpp"}  # written into the build tree


def resolve(path, inc):
    """The repository file an #include of `path` names: beside the includer first, then under
    include/ and src/ (the include directories every module has); None if it names none."""
    for cand in (os.path.normpath(os.path.join(os.path.dirname(path), inc)), f"include/{inc}",
                 f"src/{inc}"):
        if (ROOT / cand).is_file():
            return Path(cand).as_posix()
    return None


def includes(path):
    for quoted, angled in INCLUDE.findall((ROOT / path).read_text(errors="replace")):
        yield quoted or angled


def crossings(mods):
    """(from module, to module, file, included path) for every #include between two modules."""
    for path in project_files():
        m = owner(mods, path)
        for inc in includes(path):
            target = resolve(path, inc)
            t = owner(mods, target) if target else None
            if t and t != m:
                yield m, t, path, inc


def test_every_include_names_a_file():
    # A quoted include that resolves nowhere would escape the check below.
    missing = [f"{p}: {inc}" for p in project_files() for inc in includes(p)
               if resolve(p, inc) is None and os.path.basename(inc) not in GENERATED]
    assert missing == []


@pytest.fixture(scope="module")
def mods():
    return modules()


def test_the_declarations_are_read(mods):
    # The parse itself: every module of src/ is declared, with the layers the build relies on.
    for name in ("core", "net", "packet", "lookup", "classify", "runtime", "selftest", "io"):
        assert name in mods
    assert mods["core"]["depends"] == []
    assert "net" in mods["packet"]["depends"]
    # ABOVE_ALL: the chain modules and the self-test depend on every module before them.
    assert {"lookup", "classify", "runtime", "nids"} <= set(mods["modules"]["depends"])
    assert "modules" in mods["selftest"]["depends"] and "io" not in mods["modules"]["depends"]


def test_every_file_belongs_to_a_module(mods):
    assert [p for p in project_files() if owner(mods, p) is None] == []


def test_sources_lie_in_their_module(mods):
    for name, m in mods.items():
        for glob in m["sources"]:
            if glob.startswith("${"):
                continue  # a variable (core's CUDA or no-CUDA backend), set just above
            assert owner(mods, "src/" + glob.replace("*", "x")) == name, (name, glob)


def test_dependencies_are_declared_modules(mods):
    for name, m in mods.items():
        for d in m["depends"]:
            assert d in mods, f"module {name} depends on '{d}', which is not a module"


def test_includes_follow_the_declared_dependencies(mods):
    bad = sorted({f"{path} (module {m}) includes {inc} (module {t}), not in {m}'s DEPENDS"
                  for m, t, path, inc in crossings(mods) if t not in mods[m]["depends"]})
    assert bad == []


def check_acyclic(mods):
    state = {}

    def visit(n, trail):
        if state.get(n) == "done":
            return
        assert state.get(n) != "open", "cycle: " + " -> ".join(trail + [n])
        state[n] = "open"
        for d in mods[n]["depends"]:
            visit(d, trail + [n])
        state[n] = "done"

    for n in mods:
        visit(n, [])


def test_the_module_graph_has_no_cycle(mods):
    check_acyclic(mods)


def test_a_violation_is_reported():
    # The checker itself: a declaration where packet does not declare net, over the real tree
    # (packet's headers include net's), is caught; and so is a declared cycle.
    real = modules()
    real["packet"] = dict(real["packet"], depends=["core"])
    assert any(m == "packet" and t == "net" for m, t, _, _ in crossings(real)
               if t not in real[m]["depends"])
    cyclic = modules("""warpath_module(a PATHS src/a DEPENDS b)  # a comment (b)
                        warpath_module(b PATHS src/b DEPENDS a)""")
    assert cyclic["a"]["depends"] == ["b"] and cyclic["b"]["depends"] == ["a"]
    with pytest.raises(AssertionError, match="cycle: a -> b -> a"):
        check_acyclic(cyclic)
