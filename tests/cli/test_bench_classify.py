"""`warpath bench classify`: the report's fields and the cross-check of every engine's answers.

Runs tiny sets: GSwitch's synthetic generator with 200 rules (5-tuple and OpenFlow), 2,000 keys,
one timed pass; and, when ../shared/data is present, a WUSTL ClassBench set whose trace has a
first-match column. The rte_acl anchors are checked when the binary was built with DPDK and EAL
starts here; otherwise the test checks that the report says why they are unavailable.

Environment: WARPATH_BIN, the warpath binary (default <repo>/build/warpath); WARPATH_DATA (default
<repo>/../shared/data).
"""

import json

import pytest
from warpath_cli import DATA, skip_without_binary
from warpath_cli import run as run_warpath


skip_without_binary()


def run(*args, timeout=300):
    return run_warpath(*args, timeout=timeout)

ACL = {"rte_acl.scalar", "rte_acl.sse", "rte_acl.avx2", "rte_acl.avx512x16", "rte_acl.avx512x32"}
TINY = ("--max-keys", 2000, "--min-keys", 2000, "--repeat", 1)


def bench(tmp, *args):
    out = tmp / "bench.json"
    r = run("bench", "classify", *args, *TINY, "--json", out)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr}"
    for bad in ("terminate called", "Traceback", "internal error", "MISMATCH"):
        assert bad not in r.stderr, r.stderr
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
    return json.loads(out.read_text()), r.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return bench(tmp_path_factory.mktemp("bench"), "--synthetic", "200,16,8,1,5", "--tuples",
                 2000)


def test_report_fields(report):
    j, _ = report
    for key in ("version", "commit", "date", "command", "machine", "dataset", "params", "dpdk",
                "results", "check"):
        assert key in j, key
    assert "bench classify" in j["command"]
    m = j["machine"]
    assert m["cpu"] and m["logical_cores"] >= 1 and m["loadavg"] and m["loadavg_end"]
    ds = j["dataset"]
    assert ds["source"] == "synthetic" and ds["rules"] == 200 and ds["layout"] == "5-tuple"
    assert ds["synthetic"] == {**ds["synthetic"], "rules": 200, "classes": 16, "full": 8,
                               "matching": 1, "fields": 5, "tuples": 2000}
    assert ds["keys_distinct"] == 2000 and ds["keys_timed"] == 2000
    assert j["params"]["repeat"] == 1 and j["params"]["batch"] == 64
    assert j["params"]["rounds"] == 2  # the default: a second round in reverse order


def test_every_engine_ran_or_said_why_and_agreed(report):
    j, stdout = report
    assert j["check"]["passed"] is True and j["check"]["mismatches"] == 0
    rows = [x for x in j["results"] if x["kind"] == "warpath"]
    assert rows and "ref.linear" not in {x["engine"] for x in rows}
    for x in rows:
        if "skipped" in x:
            assert x["skipped"], x  # an engine that cannot be built says why
    ran = [x for x in j["results"] if "skipped" not in x]
    assert ran, j["results"]
    assert ran[0]["reference"] is True and j["check"]["reference"] == ran[0]["engine"]
    for x in ran:
        assert x["mismatches"] == 0 and x["trace_mismatches"] == 0
        assert x["count"] == 2000 and x["rate"] > 0 and x["ns"] > 0 and x["unit"] == "keys"
        # One timed pass per round (--repeat 1), the best of them counting.
        assert x["build_ms"] >= 0 and len(x["pass_s"]) == 2
        assert x["best_s"] == min(x["pass_s"])
    for x in ran:
        if x["kind"] == "warpath":
            assert {"memory_bytes", "classes", "entries", "engine_build_ms"} <= set(x)
    assert "every engine gave the same answers" in stdout


def test_rte_acl(report):
    j, _ = report
    anchors = [x for x in j["results"] if x["kind"] == "dpdk"]
    assert {x["engine"] for x in anchors} == ACL
    if not j["dpdk"]["available"]:
        assert j["dpdk"].get("why_not")
        assert all("skipped" in x for x in anchors)
        pytest.skip("DPDK anchors unavailable: " + j["dpdk"]["why_not"])
    # 4 KB pages, or 2 MB hugepages where the machine has them reserved and mounted
    assert j["dpdk"]["eal_args"].split()[0] in ("--no-huge", "--in-memory"), j["dpdk"]["eal_args"]
    ran = {x["engine"]: x for x in anchors if "skipped" not in x}
    available = {v["name"] for v in j["dpdk"]["variants"] if v["available"]}
    assert "rte_acl.scalar" in available
    assert available == set(ran), (available, set(ran))
    for x in ran.values():
        assert x["mismatches"] == 0 and x["memory_bytes"] > 0 and x["config"]
        assert x["build_ms"] > 0
    assert max(x["ratio"] for x in ran.values()) == pytest.approx(1.0)
    assert all(x["anchor"] for x in ran.values())


def test_openflow_set(tmp_path):
    j, _ = bench(tmp_path, "--synthetic", "200,16,8,1,12", "--tuples", 2000)
    assert j["dataset"]["layout"] == "openflow" and j["check"]["passed"] is True
    by = {x["engine"]: x for x in j["results"]}
    for e in ("cpu.rfc", "cpu.tic", "cpu.split"):  # 5-tuple engines say why they do not run
        if e in by:
            assert "skipped" in by[e]
    if j["dpdk"]["available"]:
        assert "skipped" not in by["rte_acl.scalar"], by["rte_acl.scalar"]
        assert by["rte_acl.scalar"]["mismatches"] == 0


def test_wustl_first_match(tmp_path):
    rules = DATA / "classbench/wustl_5tuple/acl1_100"
    trace = DATA / "classbench/wustl_5tuple/acl1_100_trace"
    if not rules.is_file():
        pytest.skip(f"{rules} not found (set WARPATH_DATA)")
    j, stdout = bench(tmp_path, "--rules", rules, "--trace", trace)
    assert j["dataset"]["first_match_check"] is True
    assert j["check"]["trace_first_match_checked"] is True and j["check"]["passed"] is True
    assert j["dataset"]["keys_distinct"] == 1000 and j["dataset"]["rules"] == 99
    assert "equal to the trace's first match" in stdout


def test_engine_selection_and_usage_errors(tmp_path):
    out = tmp_path / "one.json"
    r = run("bench", "classify", "--synthetic", "200,16,8,1,5", "--tuples", 500, *TINY,
            "--engines", "ref.linear,rte_acl.scalar", "--json", out)
    assert r.returncode == 0, r.stderr
    j = json.loads(out.read_text())
    assert [x["engine"] for x in j["results"]] == ["ref.linear", "rte_acl.scalar"]
    assert j["check"]["passed"] is True

    r = run("bench", "classify", "--synthetic", "200,16,8,1,5", "--engines", "no.such")
    assert r.returncode == 2 and "no.such" in r.stderr
    r = run("bench", "classify")
    assert r.returncode == 2 and "--synthetic" in r.stderr
    r = run("bench", "classify", "--synthetic", "200,16,8")
    assert r.returncode == 2 and "N,C,F,Cm,f" in r.stderr
    r = run("bench", "classify", "--rules", tmp_path / "missing", "--trace", tmp_path / "t")
    assert r.returncode == 1 and "missing" in r.stderr
