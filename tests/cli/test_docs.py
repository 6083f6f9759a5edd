"""The documents do not go stale: every path, ADR, `file:line` and section link they name exists,
every document and ADR is in docs/README.md's contents, and the README stays short enough to
read (issue 63: README under 250 lines, the manuals in docs/)."""
import fnmatch
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted([REPO / "README.md", REPO / "bench/README.md", REPO / "fuzz/README.md",
               *(REPO / "docs").rglob("*.md")])
TOP = "src|include|tests|tools|bench|scripts|examples|docs|fuzz|cmake|python"
# A repository path as the documents write it: from a top-level folder, with a file extension
# or a trailing slash. Templates and globs (<kind>, *, {a,b}, NAME) are checked as globs.
PATH = re.compile(rf"(?<![\w./-])((?:{TOP})/[\w./*<>{{}},+-]*[\w/*>}}])")
FILE_LINE = re.compile(rf"(?<![\w./-])((?:{TOP})/[\w./-]+\.\w+):(\d+)\b")
ADR = re.compile(r"\bADR (\d{4})\b|docs/adr/(\d{4})\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _tracked() -> set[str]:
    """The repository's files and folders as git tracks them (a clean clone's tree), so that an
    empty or ignored folder left in a working copy cannot hide a path that no longer exists."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    paths = set()
    for f in out.splitlines():
        parts = f.split("/")
        paths.add(f)
        paths.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return paths


TRACKED = _tracked()


def _exists(path: str) -> bool:
    path = path.rstrip(".,;:")
    if not any(c in path for c in "*<{"):
        if TRACKED:
            return path.rstrip("/") in TRACKED
        return (REPO / path).exists()
    glob = re.sub(r"<[^>]*>|\{[^}]*\}", "*", path)
    if TRACKED:
        return any(fnmatch.fnmatchcase(t, glob.rstrip("/")) for t in TRACKED)
    return any(REPO.glob(glob))


def _text(doc: Path) -> str:
    return doc.read_text(encoding="utf-8")


def _headings(doc: Path) -> set[str]:
    out = set()
    for line in _text(doc).splitlines():
        m = re.match(r"#+ (.*)", line)
        if m:
            out.add(re.sub(r"[^a-z0-9 -]", "", m.group(1).lower()).strip().replace(" ", "-"))
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_path_a_document_names_exists(doc):
    text = _text(doc)
    # Results files are named as globs (bench/results/nids-cpu-*.md) or in full; outputs the
    # commands write (build/, .gpu-data/) are not repository paths and are not matched.
    # docs/adr/NNNN is an ADR, checked below.
    missing = sorted({p for p in PATH.findall(text) if not _exists(p) and not re.fullmatch(r"docs/adr/\d{4}", p)})
    assert not missing, f"{doc.relative_to(REPO)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_file_line_a_document_names_is_in_its_file(doc):
    bad = []
    for path, line in FILE_LINE.findall(_text(doc)):
        f = REPO / path
        if f.is_file() and int(line) > len(f.read_text(errors="replace").splitlines()):
            bad.append(f"{path}:{line}")
    assert not bad, f"{doc.relative_to(REPO)} names lines past the end of their files: {bad}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_adr_and_link_a_document_names_exists(doc):
    text = _text(doc)
    adrs = {a or b for a, b in ADR.findall(text)}
    missing = sorted(a for a in adrs if not list((REPO / "docs/adr").glob(f"{a}-*.md")))
    assert not missing, f"{doc.relative_to(REPO)} names ADRs that do not exist: {missing}"
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _headings(dest):
            broken.append(target)
    assert not broken, f"{doc.relative_to(REPO)} has links to nothing: {broken}"


def test_the_contents_list_every_document_and_adr():
    contents = _text(REPO / "docs/README.md")
    unlisted = [p.name for p in (REPO / "docs").glob("*.md") if p.name != "README.md" and f"({p.name})" not in contents]
    unlisted += [p.name for p in (REPO / "docs/adr").glob("*.md") if f"(adr/{p.name})" not in contents]
    assert not unlisted, f"docs/README.md does not list {unlisted}"
    readme = _text(REPO / "README.md")
    assert "(docs/README.md)" in readme


def test_the_readme_stays_short():
    lines = _text(REPO / "README.md").splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: manuals belong in docs/"


def test_the_checks_find_what_they_look_for(tmp_path):
    """The patterns are not vacuous: a stale path, line, ADR and link are each found."""
    text = ("see src/nowhere/gone.cpp and `tests/cli/test_docs.py:99999`, ADR 0999, "
            "[x](missing.md) and [y](README.md#no-such-section)")
    assert [p for p in PATH.findall(text) if not _exists(p)] == ["src/nowhere/gone.cpp"]
    assert FILE_LINE.findall(text) == [("tests/cli/test_docs.py", "99999")]
    assert {a or b for a, b in ADR.findall(text)} == {"0999"}
    assert LINK.findall(text) == ["missing.md", "README.md#no-such-section"]
    assert "writing-a-chain" in _headings(REPO / "docs/modules.md")


SOURCE_PATH = re.compile(rf"(?<![\w./-])((?:{TOP})/[\w./-]*\.(?:cpp|hpp|cu|cuh|h|md|py|sh|txt|toml|json|cmake))\b")


def test_every_path_a_source_file_names_exists():
    """Comments and messages in the sources name files too (`Tested by src/selftest/...`); a file
    that moved leaves them pointing at nothing."""
    missing = {}
    for folder in ("src", "include", "tools", "bench", "tests", "fuzz", "scripts", "cmake"):
        for f in (REPO / folder).rglob("*"):
            if f.suffix not in {".cpp", ".hpp", ".cu", ".cuh", ".h", ".py", ".sh", ".cmake"} or f == Path(__file__):
                continue
            for p in SOURCE_PATH.findall(f.read_text(errors="replace")):
                if "..." not in p and not (REPO / p).exists():
                    missing.setdefault(p, str(f.relative_to(REPO)))
    assert not missing, f"sources name files that do not exist (path: first file naming it): {missing}"
