"""`warpath bench lookup`: the report's fields and the cross-check of every engine's answers.

Runs on a tiny generated route file (--count 1000 --repeat 1). The DPDK anchors are checked
when the binary was built with DPDK and EAL starts here; otherwise the test checks that the
report says why they are unavailable.

Environment: WARPATH_BIN, the warpath binary (default <repo>/build/warpath).
"""

import json
import random

import pytest
from warpath_cli import run, skip_without_binary


skip_without_binary()

ANCHORS4 = {"rte_lpm", "rte_lpm.x4", "rte_fib.macro", "rte_fib.inline", "rte_fib.uni",
            "rte_fib.avx512"}
ANCHORS6 = {"rte_lpm6", "rte_fib6.scalar", "rte_fib6.avx512"}


def write_routes(path, seed=7):
    """A small table with nested prefixes, a default route per family and host routes."""
    rng = random.Random(seed)
    lines = ["0.0.0.0/0 1", "::/0 2"]
    seen = set()
    for _ in range(300):
        length = rng.choice([8, 12, 16, 20, 24, 25, 28, 30, 32])
        a = rng.getrandbits(32) & (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
        if (a, length) in seen:
            continue
        seen.add((a, length))
        lines.append(f"{a >> 24}.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}/{length} "
                     f"{rng.randrange(200)}")
    for _ in range(200):
        length = rng.choice([16, 24, 32, 40, 48, 56, 64, 96, 128])
        a = (0x2 << 125 | rng.getrandbits(125)) & (((1 << 128) - 1) << (128 - length))
        if (a, length) in seen:
            continue
        seen.add((a, length))
        groups = ":".join(f"{a >> (112 - 16 * i) & 0xFFFF:x}" for i in range(8))
        lines.append(f"{groups}/{length} {rng.randrange(200)}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench")
    routes = d / "routes.txt"
    write_routes(routes)
    out = d / "bench.json"
    r = run("bench", "lookup", "--fib", routes, "--count", 1000, "--repeat", 1, "--json", out)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr}"
    for bad in ("terminate called", "Traceback", "internal error", "MISMATCH"):
        assert bad not in r.stderr, r.stderr
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
    return json.loads(out.read_text()), r.stdout


def test_report_fields(report):
    j, _ = report
    for key in ("version", "commit", "date", "command", "machine", "dataset", "addresses",
                "params", "dpdk", "results", "check"):
        assert key in j, key
    assert "bench lookup" in j["command"]
    assert j["machine"]["cpu"] and j["machine"]["logical_cores"] >= 1
    assert j["dataset"]["name"] == "routes.txt"
    assert j["dataset"]["routes4"] > 250 and j["dataset"]["routes6"] > 150
    assert j["addresses"] == {**j["addresses"], "count4": 1000, "count6": 1000, "mix": "mixed",
                              "seed": 1, "source": "generated"}
    assert j["params"]["repeat"] == 1


def test_every_warpath_engine_ran_and_agreed(report):
    j, stdout = report
    assert j["check"]["passed"] is True and j["check"]["mismatches"] == 0
    for fam in ("ipv4", "ipv6"):
        rows = [x for x in j["results"] if x["family"] == fam and x["kind"] == "warpath"]
        assert rows, fam
        assert "ref.lpm" not in {x["engine"] for x in rows}
        ran = [x for x in rows if "skipped" not in x]
        assert {"cpu.lpm", "cpu.lpm.scalar"} <= {x["engine"] for x in ran}
        assert ran[0]["reference"] is True
        assert j["check"]["reference"][fam] == ran[0]["engine"]
        for x in ran:
            assert x["mismatches"] == 0
            # The harness's row (bench/harness/report.hpp): rate in lookups/s, ns a lookup.
            assert x["count"] == 1000 and x["rate"] > 0 and x["ns"] > 0
            assert x["unit"] == "lookups" and x["workload"] == fam and not x["anchor"]
            assert x["build_ms"] >= 0 and x["image_bytes"] > 0
            assert len(x["pass_s"]) == 1
    assert "every engine gave the same answers" in stdout


def test_dpdk_anchors(report):
    j, _ = report
    anchors = [x for x in j["results"] if x["kind"] == "dpdk"]
    if not j["dpdk"]["available"]:
        assert j["dpdk"].get("why_not")
        assert all("skipped" in x for x in anchors)
        pytest.skip("DPDK anchors unavailable: " + j["dpdk"]["why_not"])
    # 4 KB pages, or 2 MB hugepages where the machine has them reserved and mounted
    assert j["dpdk"]["eal_args"].split()[0] in ("--no-huge", "--in-memory"), j["dpdk"]["eal_args"]
    ran = {x["engine"]: x for x in anchors if "skipped" not in x}
    available = {v["name"] for v in j["dpdk"]["variants"] if v["available"]}
    assert {"rte_lpm", "rte_lpm.x4", "rte_lpm6"} <= available
    assert available == set(ran), (available, set(ran))
    assert set(ran) <= ANCHORS4 | ANCHORS6
    for name, x in ran.items():
        assert x["family"] == ("ipv6" if name in ANCHORS6 else "ipv4")
        assert x["mismatches"] == 0 and x["reference"] is False
        assert x["memory_bytes"] > 0 and x["image_bytes"] > 0 and x["config"]
    for fam in ("ipv4", "ipv6"):
        ratios = [x["ratio"] for x in ran.values() if x["family"] == fam]
        assert max(ratios) == pytest.approx(1.0)
        # The median of paired passes against the best variant: that variant's own is 1, and
        # every engine of the family, warpath's too, has one, from its passes and the best's.
        best = max((x for x in ran.values() if x["family"] == fam),
                   key=lambda x: x["rate"])
        assert best["paired"] == pytest.approx(1.0)
        for x in j["results"]:
            if x["family"] == fam and "skipped" not in x:
                assert x["paired"] > 0
                assert len(x["pass_s"]) == len(best["pass_s"])
                k = len(x["pass_s"])
                q = sorted(b / t for b, t in zip(best["pass_s"], x["pass_s"]))
                median = q[k // 2] if k % 2 else (q[k // 2 - 1] + q[k // 2]) / 2
                assert x["paired"] == pytest.approx(median)


def test_engine_selection_and_usage_errors(tmp_path):
    routes = tmp_path / "r.txt"
    write_routes(routes)
    out = tmp_path / "one.json"
    r = run("bench", "lookup", "--fib", routes, "--count", 500, "--repeat", 1, "--engines",
            "cpu.lpm.scalar,ref.lpm", "--family", "ipv4", "--mix", "prefix", "--json", out)
    assert r.returncode == 0, r.stderr
    j = json.loads(out.read_text())
    assert [x["engine"] for x in j["results"]] == ["cpu.lpm.scalar", "ref.lpm"]
    assert j["check"]["passed"] is True
    assert j["addresses"]["count6"] == 0

    r = run("bench", "lookup", "--fib", routes, "--engines", "no.such")
    assert r.returncode == 2 and "no.such" in r.stderr
    r = run("bench", "lookup")
    assert r.returncode == 2 and "--fib" in r.stderr
    r = run("bench", "lookup", "--fib", tmp_path / "missing.txt")
    assert r.returncode == 1 and "missing.txt" in r.stderr
    # A results file that cannot be written is refused before any pass, in one message.
    bad = tmp_path / "no-such-dir" / "x.json"
    r = run("bench", "lookup", "--fib", routes, "--count", 500, "--repeat", 1, "--json", bad)
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("cannot write") == 1 and "No such file or directory" in r.stderr, \
        r.stderr
    assert "bench: loading" not in r.stderr, "it ran before it checked"
