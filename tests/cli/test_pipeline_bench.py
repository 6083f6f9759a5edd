"""warpath-pipeline-bench --sweep (issue 60's sweep, which scripts/gpu-check.sh e2e runs on a
GPU machine): on the CPU it runs the cpu policy at each worker count and case asked, each point
naming its chain, traffic, worker count and round with counters that add up; --cases picks
cases by name; the acl1_10K case comes only with --data; a bad worker list is refused.

Environment: WARPATH_BIN (default <repo>/build/warpath); the bench is beside it. WARPATH_DATA for
the acl1_10K case.
"""

import json

import pytest
from warpath_cli import DATA, run_beside, skip_without_binary

skip_without_binary()


def sweep(*args):
    return run_beside("warpath-pipeline-bench", "--engines", "cpu", "--sweep", *args)


def check_points(doc, cases, workers, rounds):
    # The harness's result file (bench/harness/report.hpp): a row a point, the offload policy
    # its engine, the cpu policy the anchor of its workload (the case and worker count).
    seen = {(p["app"], p["profile"], p["workers"], p["round"]) for p in doc["results"]}
    assert seen == {(a, t, w, r) for a, t in cases for w in workers for r in range(1, rounds + 1)}
    assert doc["tool"] == "warpath-pipeline-bench" and doc["machine"]["cpu"]
    for p in doc["results"]:
        assert p["sweep"] == "workers" and p["engine"] == p["policy"] == "cpu" and p["anchor"]
        assert p["workload"] == f'{p["app"]} {p["profile"]} {p["workers"]} workers'
        assert p["batch"] == 1024 and p["delay_us"] == 1000 and p["unit"] == "packets"
        assert p["rx"] > 0 and p["rate"] > 0 and p["ns"] > 0
        assert p["rx"] == p["tx"] + p["dropped"] + p["slow_path"]
        assert p["gpu_launches"] == 0


def test_sweep_runs_each_case_at_each_worker_count():
    r = sweep(2, "--workers-list", "1,2", "--duration", "0.05",
              "--cases", "router:ipv6+min,router+acl:imix")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["bench"] == "pipeline-sweep" and doc["rounds"] == 2
    assert "no --data" in doc["acl1_10K"]
    # The sweep's order (router+acl before router), whatever the order --cases names them in.
    check_points(doc, [("router+acl", "imix"), ("router", "ipv6+min")], [1, 2], 2)
    assert [p["app"] for p in doc["results"]][0] == "router+acl"
    # The closing table on stderr: a row per case and worker count.
    assert "router      ipv6+min        2" in r.stderr
    # Each point also on stderr as it completes, one line of JSON (gpu-check.sh reads them back
    # from a sweep cut short).
    lines = [json.loads(x) for x in r.stderr.splitlines() if x.startswith('{"workload": ')]
    assert [(x["app"], x["workers"], x["round"]) for x in lines] == \
        [(x["app"], x["workers"], x["round"]) for x in doc["results"]]


def test_acl1_10k_case_reads_the_classbench_set():
    if not (DATA / "classbench/wustl_5tuple/acl1_10K").is_file():
        pytest.skip(f"ClassBench acl1_10K not under {DATA} (set WARPATH_DATA)")
    r = sweep(1, "--workers-list", "1", "--duration", "0.05", "--cases", "acl:ipv4+min",
              "--data", DATA)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "acl1_10K (9603 rules)" in doc["acl1_10K"]
    check_points(doc, [("acl", "ipv4+min")], [1], 1)
    assert doc["results"][0]["engines"].startswith("cpu: cpu.")  # a CPU classifier, no offload


def test_an_unknown_case_is_refused():
    r = sweep(1, "--workers-list", "1", "--duration", "0.05", "--cases", "router:ipv4+max")
    assert r.returncode == 2
    assert "no case 'router:ipv4+max'" in r.stderr and "router:ipv6+min" in r.stderr


@pytest.mark.parametrize("bad", ["0", "1,,2", "x", "2000"])
def test_a_bad_worker_list_is_refused(bad):
    r = sweep(1, "--workers-list", bad, "--duration", "0.05")
    assert r.returncode == 2
    assert "--workers-list" in r.stderr and "not a worker count" in r.stderr


@pytest.mark.parametrize("rounds", ["0", "x", "2000"])
def test_a_bad_round_count_is_refused(rounds):
    r = run_beside("warpath-pipeline-bench", "--engines", "cpu", "--sweep", rounds)
    assert r.returncode == 2
    assert "--sweep" in r.stderr and "not a round count" in r.stderr


def test_sweep_options_without_sweep_are_refused():
    r = run_beside("warpath-pipeline-bench", "--engines", "cpu", "--cases", "router:ipv6+min")
    assert r.returncode == 2
    assert "belong to --sweep" in r.stderr


def test_offload_policies_run_on_the_cpu_offload_device_with_an_emulated_round_trip():
    """--offload-device cpu runs the gpu policy's points through the offload master on CPU
    engines, and --offload-delay-us holds each launch as a device's round trip: the sweep's
    machinery and the workers' frames (`frames.*`) tried where there is no GPU."""
    r = run_beside("warpath-pipeline-bench", "--engines", "cpu,gpu", "--offload-device", "cpu",
                   "--offload-delay-us", "300", "--sweep", 1, "--workers-list", "1",
                   "--duration", "0.1", "--cases", "router+acl:imix")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["offload_device"] == "cpu" and doc["offload_delay_us"] == 300
    rows = {p["engine"]: p for p in doc["results"]}
    assert set(rows) == {"cpu", "gpu"}
    cpu, gpu = rows["cpu"], rows["gpu"]
    assert cpu["anchor"] and not gpu["anchor"] and gpu["ratio"] > 0
    assert cpu["gpu_launches"] == 0 and gpu["gpu_launches"] > 0
    for p in (cpu, gpu):
        assert p["rx"] == p["tx"] + p["dropped"] + p["slow_path"] > 0
    # Batch 1024: the cap is 4 frames in flight + 1, which the worker fills; the round trip
    # it measured is at least the emulated one.
    assert gpu["frames"]["cap"] == 5 and gpu["frames"]["most"] == 5, gpu["frames"]
    f = gpu["frames"]
    assert f["round_trip_us"] >= 300 and f["interval_us"] > 0, f
    # needed = a quarter more than the round trip in frames (rounded up), + the one filling and
    # the one finishing (frame_window.hpp); the report rounds both estimates to the nanosecond.
    want = -(-1.25 * f["round_trip_us"] // f["interval_us"]) + 2
    assert abs(f["needed"] - want) <= 1, (f, want)
    assert cpu["frames"]["round_trip_us"] == 0 and cpu["frames"]["needed"] == 0


@pytest.mark.parametrize("args", [["--offload-delay-us", "10"],
                                  ["--offload-device", "tpu"]])
def test_offload_device_flags_are_checked(args):
    r = run_beside("warpath-pipeline-bench", *args, "--sweep", 1, "--workers-list", "1",
                   "--duration", "0.05")
    assert r.returncode == 2 and "--offload-de" in r.stderr, r.stderr
