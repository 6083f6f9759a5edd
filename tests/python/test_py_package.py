"""The package itself: every public name documented, type stubs generated and shipped, the
errors' family, the build facts, and pyproject.toml's build wiring."""

import inspect

import pytest
from pyutil import PACKAGE_DIR, REPO, need_package

warpath = need_package()


def test_every_public_name_has_a_docstring():
    missing = []
    for name in warpath.__all__:
        obj = getattr(warpath, name)
        if name.isupper() or name == "__version__":
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for m, member in vars(obj).items():
                if m.startswith("_") or not callable(member) and not isinstance(member, property):
                    continue
                if not (getattr(member, "__doc__", "") or "").strip():
                    missing.append(f"{name}.{m}")
    assert not missing, f"undocumented: {missing}"


def test_stubs_are_generated():
    stub = PACKAGE_DIR / "warpath" / "_warpath.pyi"
    assert stub.is_file(), f"{stub} missing"
    text = stub.read_text()
    for name in ("class Fib", "class Classifier", "def lookup(", "def classify(", "def ipv4("):
        assert name in text, name
    assert (PACKAGE_DIR / "warpath" / "py.typed").is_file()


def test_errors_are_one_family_and_builtin_kinds():
    assert issubclass(warpath.ParseError, warpath.Error)
    assert issubclass(warpath.ParseError, ValueError)
    assert issubclass(warpath.IoError, OSError)
    assert issubclass(warpath.NotFoundError, LookupError)
    assert issubclass(warpath.NotSupportedError, NotImplementedError)
    # `code` on the classes too, so errors raised from Python carry it
    assert warpath.ParseError("x").code == "parse_error" and warpath.Error.code == "error"
    with pytest.raises(warpath.InvalidArgumentError, match="unknown kind 'x'"):
        warpath.engines("x")


def test_build_info_and_engine_tables():
    info = warpath.build_info()
    assert info["version"] == warpath.__version__
    assert isinstance(info["cuda"], bool)
    for kind in ("lookup", "classify", "pattern", "parse"):
        engines = warpath.engines(kind)
        assert engines and all({"id", "description", "priority", "available"} <= set(e)
                                for e in engines)
        # CPU engines run everywhere; CUDA engines only with a GPU
        assert all(e["available"] for e in engines if e["id"].startswith(("cpu.", "ref.")))
        assert all(e["available"] == (warpath.cuda_devices() > 0)
                   for e in engines if e["id"].startswith("cuda."))


def test_pyproject_builds_the_package_with_scikit_build_core():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert meta["build-system"]["build-backend"] == "scikit_build_core.build"
    assert any(r.startswith("nanobind") for r in meta["build-system"]["requires"])
    assert meta["project"]["name"] == "warpath"
    assert "numpy" in " ".join(meta["project"]["dependencies"])
    sk = meta["tool"]["scikit-build"]
    assert sk["cmake"]["define"]["WARPATH_PYTHON"] == "ON"
    assert "python" in sk["install"]["components"]
    assert meta["project"]["version"] == warpath.__version__


def test_bench_curve_of_an_engine_against_its_anchor(tmp_path):
    """warpath.plot.bench_batches runs the C++ benchmark per batch size (with its DPDK anchors
    where the build has them) and batch_curve draws engine and anchor."""
    import os

    import matplotlib
    from pyutil import WARPATH_BIN, data

    matplotlib.use("Agg")
    import warpath.plot

    if not WARPATH_BIN.is_file():
        pytest.skip(f"warpath binary not found at {WARPATH_BIN}")
    rules = data("classbench", "wustl_5tuple", "acl1_1K")
    trace = data("classbench", "wustl_5tuple", "acl1_1K_trace")
    batches = [64, 4096]
    curves = warpath.plot.bench_batches(
        "classify", ["--rules", rules, "--trace", trace, "--repeat", 1, "--min-keys", 20000],
        batches, cli=str(WARPATH_BIN))
    assert "cpu.rfc" in curves and all(r > 0 for r in curves["cpu.rfc"])
    anchors = [k for k in curves if k.startswith("rte_acl")]
    if anchors:  # built with DPDK: the anchor is in the same curves
        assert all(r > 0 for r in curves[anchors[-1]])
    keep = {k: v for k, v in curves.items() if k == "cpu.rfc" or k in anchors[-1:]}
    ax = warpath.plot.batch_curve(keep, batches, unit="keys/s")
    ax.figure.savefig(tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 2000
    assert len(ax.get_lines()) == len(keep)
