"""warpath-stream-bench: every engine delivers every payload byte of the workloads it is timed on.

The bench exits non-zero and says INCOMPLETE when an engine's delivered stream bytes differ from
the payload; these runs check that for warpath, the floor yardstick (bench/stream/stream_floor.hpp)
and libnids where the bench was built with it, on the short-connection and reordering workloads
(one run each), and that a bad option is refused.

Environment: WARPATH_BIN (default <repo>/build/warpath); the bench is beside it.
"""

import json

import pytest
from warpath_cli import run_beside, skip_without_binary


skip_without_binary()


def bench(*args):
    return run_beside("warpath-stream-bench", *args)


@pytest.mark.parametrize("engine", ["warpath", "floor", "libnids"])
@pytest.mark.parametrize("workload,packets", [("short", 800000), ("reorder", 612000)])
def test_every_payload_byte_is_delivered(engine, workload, packets):
    r = bench("--workload", workload, "--engine", engine, "--repeat", 1, "--json")
    if engine == "libnids" and "built without libnids" in r.stderr:
        pytest.skip("the bench was built without libnids")
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)
    assert row["engine"] == engine and row["workload"] == workload
    assert row["packets"] == packets
    assert row["payload_bytes"] > 0
    assert row["delivered_bytes"] == row["payload_bytes"]
    assert row["ns"] > 0 and row["rate"] > 0 and row["unit"] == "packets"
    assert row["anchor"] == (engine == "libnids") and len(row["pass_s"]) == 1


def test_unknown_engine_and_workload_are_refused():
    r = bench("--engine", "nosuch")
    assert r.returncode == 2 and "unknown engine 'nosuch'" in r.stderr
    r = bench("--workload", "nosuch")
    assert r.returncode == 2 and "unknown workload 'nosuch'" in r.stderr
