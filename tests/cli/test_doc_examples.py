"""The code docs/modules.md shows is code that compiles: its module example is, line for line
(comments and blank lines aside), the TTL filter the build compiles and the tests run."""

import re

from warpath_cli import REPO


def code_lines(text):
    """Lines without // comments and surrounding spaces, blank lines left out."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s*//.*$", "", line).strip()
        if line:
            out.append(line)
    return out


def test_the_module_example_is_the_ttl_filter_source():
    doc = (REPO / "docs" / "modules.md").read_text()
    blocks = re.findall(r"```cpp\n(.*?)```", doc, re.S)
    example = next(b for b in blocks if "class TtlFilterModule" in b)
    source = code_lines((REPO / "src" / "modules" / "ttl_filter_module.cpp").read_text())
    want = code_lines(example)
    cut = want.index("ModuleInfo ttl_filter_module_info() {")
    for part in (want[:cut], want[cut:]):  # the class, then its registry entry and registration
        start = source.index(part[0])
        assert source[start:start + len(part)] == part, (
            "docs/modules.md's example differs from src/modules/ttl_filter_module.cpp")
