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
