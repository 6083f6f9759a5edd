"""Every examples/*.toml runs as it is (the README and `warpath run --help` point users at them):
counters add up, and each does what its comment says."""

import json
from pathlib import Path

import pytest
from test_run import check_report
from warpath_cli import REPO, assert_ok, run, skip_without_binary

skip_without_binary()

EXAMPLES = sorted((REPO / "examples").glob("*.toml"))


def test_every_application_has_an_example():
    names = {p.stem for p in EXAMPLES}
    assert names >= {"router", "firewall", "router-acl", "chain"}, names


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(tmp_path, example):
    out = tmp_path / "run.json"
    r = assert_ok(run("run", example, "--no-progress", "--json", out, timeout=300))
    j = json.loads(out.read_text())
    check_report(j)
    assert j["totals"]["rx"] == 200000, j["totals"]
    assert "warning" not in r.stderr, r.stderr
    mods = {m["kind"]: m for m in j["modules"]}
    if example.stem == "firewall":
        assert j["drops_by_reason"].get("acl_deny", 0) > 0 and j["totals"]["tx"] > 0
    if example.stem == "chain":
        assert list(mods) == ["acl", "ttl-filter", "router"]
        assert 0 < mods["ttl-filter"]["in"] < j["totals"]["rx"], "only the inspect context"
    if example.stem == "ipsec":
        assert list(mods) == ["esp-in", "esp-out", "router"]
        assert j["totals"]["tx"] == 200000, "every packet sealed and routed"
        assert sum(p["tx_bytes"] for p in j["ports"]) > sum(p["rx_bytes"] for p in j["ports"])
    if example.stem == "flows":
        assert list(mods) == ["flow", "stream", "router"]
        stats = mods["flow"]["stats"]
        assert stats["flows"] > 0 and stats["flows"] == sum(
            v for k, v in stats.items() if k.startswith("ended_")) + stats["active"]
        assert "streams" in mods["stream"]["stats"]
    if example.stem in ("router", "router-acl", "chain", "flows"):
        assert mods["router"]["forwarded"] > 0


def test_examples_are_in_the_help_and_readme():
    help_text = assert_ok(run("run", "--help")).stdout
    readme = (REPO / "README.md").read_text()
    for p in EXAMPLES:
        assert p.name in help_text, p.name
        assert f"examples/{p.name}" in readme, p.name
