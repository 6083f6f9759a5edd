"""Suricata's own regression suite, the alert checks: every test of ../shared/data/suricata-verify
through `warpath nids` (tests/cli/suricata_verify.py says how a test is run and judged). A test
passes, is skipped with its reason (no alert check, a rule outside the supported subset, a
capture the reader does not take), or is a known failure listed with its reason in
data/suricata-verify-known-failures.txt; a listed test that passes fails here, so the list
stays true."""

from pathlib import Path

import pytest

from warpath_cli import DATA, WARPATH_BIN, skip_without_binary

skip_without_binary()
pytest.importorskip("yaml")

import suricata_verify  # noqa: E402  (needs yaml)

SV = DATA / "suricata-verify"
KNOWN = {}
for line in (Path(__file__).parent / "data" / "suricata-verify-known-failures.txt").read_text().splitlines():
    if line.strip() and not line.startswith("#"):
        name, reason = line.split(None, 1)
        KNOWN[name] = reason


def verify_tests():
    return [pytest.param(p.parent, id=p.parent.name) for p in sorted(SV.glob("*/test.yaml"))] if SV.is_dir() else []


def test_known_failures_name_real_tests():
    if not SV.is_dir():
        pytest.skip(f"no suricata-verify tests at {SV} (set WARPATH_DATA)")
    assert not [n for n in KNOWN if not (SV / n).is_dir()]


@pytest.mark.parametrize("folder", verify_tests())
def test_alert_checks(folder):
    outcome, detail = suricata_verify.run_test(folder, str(WARPATH_BIN))
    if folder.name in KNOWN:
        assert outcome != "pass", f"listed as a known failure but passes: remove it ({detail})"
        pytest.xfail(KNOWN[folder.name] + f" [{detail}]")
    if outcome == "skip":
        pytest.skip(detail)
    assert outcome == "pass", detail
