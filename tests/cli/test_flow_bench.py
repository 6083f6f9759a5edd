"""warpath-flow-bench: every row answers right, and the rte_hash anchor runs in both key layouts.

The bench checks each row's answers against the keys' flow ids before timing it and exits 1 on
the first wrong one; a short run at two table sizes checks that for warpath's lookups and, where
the bench was built with DPDK and its EAL starts, for rte_hash with the 36-byte keys as they are
and padded to 48 bytes (bench/anchors/hash_anchor.hpp), the best of those the anchor. A bad
option is refused.

Environment: WARPATH_BIN (default <repo>/build/warpath); the bench is beside it.
"""

import json

import pytest
from warpath_cli import run_beside, skip_without_binary


skip_without_binary()


def bench(*args):
    return run_beside("warpath-flow-bench", *args)


def test_every_row_answers_right_and_the_best_anchor_is_the_reference(tmp_path):
    out = tmp_path / "rows.json"
    r = bench("--flows", "1000,5000", "--lookups", 8192, "--seconds", 0.01, "--repeat", 1,
              "--subtables", 0, "--json", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    rows = {}
    assert doc["tool"] == "warpath-flow-bench" and doc["commit"] and doc["machine"]["cpu"]
    for row in doc["results"]:
        assert row["unit"] == "lookups" and row["rate"] > 0, row
        rows.setdefault(row["flows"], {})[row["engine"]] = row
    assert sorted(rows) == [1000, 5000]
    with_anchor = not any("no rte_hash rows" in n or "no anchor rows" in n for n in doc["notes"])
    with_anchor = with_anchor and "no anchor rows" not in r.stderr
    with_anchor = with_anchor and "warpath-flow-bench: rte_hash:" not in r.stderr  # no memory
    for flows, by_engine in rows.items():
        for name in ("warpath.exact.b32", "warpath.exact.b64", "warpath.exact.b256",
                     "warpath.exact.b64.hot"):
            assert by_engine[name]["ns"] > 0, (flows, name)
        if not with_anchor:
            continue
        for hot in ("", ".hot"):
            anchors = {n: row for n, row in by_engine.items()
                       if n.startswith("rte_hash.") and n.endswith(".hot") == bool(hot)}
            assert f"rte_hash.bulk64{hot}" in anchors and f"rte_hash.k48.bulk64{hot}" in anchors
            best = min(row["ns"] for row in anchors.values())
            for row in anchors.values():  # each against the fastest rte_hash row of its size
                assert row["anchor"] and row["ratio"] == pytest.approx(best / row["ns"], rel=1e-3)
            row = by_engine[f"warpath.exact.b64{hot}"]  # against the same best anchor
            assert row["ratio"] == pytest.approx(best / row["ns"], rel=1e-3)


def test_bad_options_are_refused():
    r = bench("--lookups", 10)
    assert r.returncode == 2 and "--lookups >= 256" in r.stderr
    r = bench("--key-pages", "1g")
    assert r.returncode == 2 and "--key-pages: huge or 4k" in r.stderr
