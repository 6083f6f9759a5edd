"""bench/plot_gpu.py and bench/plot_classify.py on small reports of the shape their producers
write (scripts/gpu-check.sh, scripts/bench-classify.sh): every figure is drawn, a PNG, and a
report without benchmark rows is a clear error, not a traceback."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"


def gpu_report():
    classify = []
    for engine in ("cuda.linear", "cuda.tuple", "cuda.bloom"):
        base = {"engine": engine, "N": 1024, "C": 128, "F": 128, "Cm": 1, "f": 12, "batch": 65536}
        for sweep, key, values in (("batch", "batch", [256, 4096, 65536]),
                                   ("rules", "N", [256, 1024, 4096]),
                                   ("classes", "C", [128, 256, 512]),
                                   ("full", "F", [4, 16, 64]),
                                   ("matching", "Cm", [1, 8, 32]),
                                   ("fields", "f", [5, 12])):
            for v in values:
                classify.append({**base, "sweep": sweep, key: v, "end_to_end_us": 100.0,
                                 "end_to_end_mpps": v / 10 + 1})
    classbench = [{"set": "acl1_10K", "engine": e, "kind": k, "batch": b, "us": 1.0,
                   "mpps": b / 100, "build_ms": 1.0, "memory_bytes": 1, "detail": ""}
                  for e in ("cuda.rfc", "cuda.split") for k in ("end_to_end", "kernel", "resident")
                  for b in (65536, 262144, 1048576)]
    classbench.append({"set": "fw1_10K", "engine": "cuda.tic", "kind": "skipped", "batch": 0,
                       "us": 0, "mpps": 0, "build_ms": 0, "memory_bytes": 0, "detail": "too big"})
    results = [{"bench": b, "batch": n, "kernel_us": 1.0, "kernel_mpps": n / 10,
                "end_to_end_us": 2.0, "end_to_end_mpps": n / 20}
               for b in ("parse", "lookup4", "lookup6", "flow.key") for n in (256, 4096, 65536)]
    points = [{"sweep": sweep, "engine": e, "batch": b, "delay_us": d, "mpps": b / 100,
               "offered_pps": 4e6 if sweep == "delay" else 0,
               "latency_us": {"p50": d / 2, "p99": d, "p999": d * 2, "max": d * 3}}
              for e in ("cpu", "gpu", "auto")
              for sweep, b, d in (("throughput", 32, 1000), ("throughput", 512, 1000),
                                  ("delay", 8192, 10), ("delay", 8192, 1000))]
    return {"commit": "0123456789abcdef", "gpu": "NVIDIA H200, 570.00, 143771 MiB",
            "bench": {"device": "NVIDIA H200", "results": results, "classify": classify,
                      "classbench": classbench},
            "pipeline": {"bench": "pipeline", "points": points}}


def run(*args):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)


def test_plot_gpu_draws_every_figure(tmp_path):
    report = tmp_path / "gpu-check-x.json"
    report.write_text(json.dumps(gpu_report()))
    r = run(ROOT / "bench/plot_gpu.py", report)
    assert r.returncode == 0, r.stderr
    for name in ("classify", "classbench", "parse-lookup", "engines", "pipeline"):
        png = tmp_path / f"gpu-check-x-{name}.png"
        assert png.read_bytes()[:8] == PNG, name


def test_plot_gpu_without_rows_is_a_clear_error(tmp_path):
    report = tmp_path / "gpu-check-y.json"
    for bench in ({"error": "no such file"}, None):  # None: the bench stage wrote nothing
        report.write_text(json.dumps({"commit": "c", "bench": bench}))
        r = run(ROOT / "bench/plot_gpu.py", report)
        assert r.returncode != 0 and "no benchmark rows" in r.stderr and "Traceback" not in r.stderr


def test_plot_classify_on_a_committed_result(tmp_path):
    results = sorted((ROOT / "bench/results").glob("classify-cpu-*.json"))
    assert results, "no classification result committed"
    out = tmp_path / "classify.png"
    r = run(ROOT / "bench/plot_classify.py", results[-1], out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == PNG


def sweep_report():
    points = []
    for app, profile in (("router+acl", "ipv4+min"), ("router", "ipv6+min")):
        for w in (1, 4):
            for rnd in (1, 2, 3):
                for engine, base in (("cpu", 10.0), ("gpu", 20.0), ("auto", 19.0)):
                    points.append({
                        "sweep": "workers", "engine": engine, "app": app, "profile": profile,
                        "workers": w, "round": rnd, "batch": 1024, "delay_us": 1000,
                        "mpps": base * w + rnd,  # rounds 1..3: the median is round 2's
                        "latency_us": {"p50": 50.0, "p99": 90.0, "p999": 100.0, "max": 120.0},
                        "stages_ns_per_packet": {"rx": 20.0, "parse": 15.0, "modules": 40.0,
                                                 "tx": 5.0, "other": 1.0}})
    return {"bench": "pipeline-sweep", "duration_s": 0.5, "rounds": 3, "batch": 1024,
            "delay_us": 1000, "gpu": True, "acl1_10K": "no --data", "data": "built-in",
            "machine": "test machine", "commits": {"run1": "abc"}, "commands": {"run1": "x"},
            "points": points}


def test_plot_pipeline_tabulates_and_draws_a_sweep(tmp_path):
    report = tmp_path / "sweep.json"
    report.write_text(json.dumps(sweep_report()))
    r = run(ROOT / "bench/plot_pipeline.py", report)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "sweep.png").read_bytes().startswith(PNG)
    table = (tmp_path / "sweep.md").read_text()
    # 4 workers: cpu 10*4+2 = 42, gpu 82, auto 78 (medians); gpu/cpu 1.95, auto/best 0.95.
    assert "| router+acl | ipv4+min | 4 | 42.0 | 82.0 | 78.0 | 1.95 | 0.95 | 50/90 | 50/90 " \
           "| 20+15+40+5 | 20+15+40+5 | 3 |" in table
    assert table.count("\n| router | ipv6+min |") == 2


def test_plot_pipeline_reads_the_harness_rows_alike(tmp_path):
    # The bench writes the harness's result file (bench/harness/report.hpp): its points as rows
    # under "results", the rate in packets a second and the offload policy as "policy".
    doc = sweep_report()
    doc["results"] = [{**{k: v for k, v in p.items() if k not in ("mpps", "engine")},
                       "workload": f'{p["app"]} {p["profile"]} {p["workers"]} workers',
                       "engine": p["engine"], "policy": p["engine"], "anchor": p["engine"] == "cpu",
                       "unit": "packets", "rate": p["mpps"] * 1e6}
                      for p in doc.pop("points")]
    report = tmp_path / "rows.json"
    report.write_text(json.dumps(doc))
    r = run(ROOT / "bench/plot_pipeline.py", report)
    assert r.returncode == 0, r.stderr
    assert "| router+acl | ipv4+min | 4 | 42.0 | 82.0 | 78.0 | 1.95 | 0.95 | 50/90 | 50/90 " \
           "| 20+15+40+5 | 20+15+40+5 | 3 |" in (tmp_path / "rows.md").read_text()


def test_plot_pipeline_tabulates_a_sweep_with_an_engine_missing(tmp_path):
    doc = sweep_report()
    # A cut-short sweep: no gpu point at 4 workers of the IPv6 router.
    doc["points"] = [p for p in doc["points"] if not (
        p["app"] == "router" and p["workers"] == 4 and p["engine"] == "gpu")]
    report = tmp_path / "cut.json"
    report.write_text(json.dumps(doc))
    r = run(ROOT / "bench/plot_pipeline.py", report)
    assert r.returncode == 0, r.stderr
    table = (tmp_path / "cut.md").read_text()
    # No gpu figure, no gpu/cpu ratio; auto against the cpu (the better one left): 78/42.
    assert "| router | ipv6+min | 4 | 42.0 | - | 78.0 | - | 1.86 | - | 50/90 " in table
    assert "nan" not in table


def test_plot_pipeline_refuses_a_report_that_is_not_a_sweep_given_alone(tmp_path):
    report = tmp_path / "pipeline.json"
    report.write_text(json.dumps({"bench": "pipeline", "points": []}))
    r = run(ROOT / "bench/plot_pipeline.py", report)
    assert r.returncode != 0
    assert "not a --sweep report" in r.stderr and "Traceback" not in r.stderr


def test_plot_pipeline_shows_the_workers_frames_where_offloaded_frames_came_back(tmp_path):
    """A throughput/delay report (warpath-pipeline-bench without --sweep, as scripts/gpu-check.sh
    runs it): the table gains each point's frames had/needed/cap and round trip, and the figure a
    fourth panel, where the offloaded policy's frames came back; the cpu policy's say '-'."""
    rows = []
    for engine in ("cpu", "gpu"):
        for sweep, batch, delay in (("throughput", 32, 1000), ("throughput", 1024, 1000),
                                    ("delay", 8192, 50)):
            frames = {"cap": 5, "most": 5, "needed": 0, "round_trip_us": 0, "interval_us": 0,
                      "waits": 0}
            if engine == "gpu":
                cap = 65 if batch == 32 else 5
                frames = {"cap": cap, "most": min(cap, 40), "needed": 40 if batch == 32 else 6,
                          "round_trip_us": 250.5, "interval_us": 6.5, "waits": 7}
            rows.append({"workload": f"batch {batch}", "engine": engine, "anchor": engine == "cpu",
                         "unit": "packets", "rate": batch * 1e4, "sweep": sweep, "policy": engine,
                         "batch": batch, "delay_us": delay, "offered_pps": 0, "gbps": 1.0,
                         "batch_fill": 1.0, "gpu_share": 1.0 if engine == "gpu" else 0.0,
                         "rx_queue_full": 0, "frames": frames,
                         "latency_us": {"p50": 10, "p99": 20, "p999": 30, "max": 40}})
    report = tmp_path / "pipeline.json"
    report.write_text(json.dumps({"bench": "pipeline", "app": "router+acl", "workers": 1,
                                  "duration_s": 1, "data": "built-in", "results": rows}))
    r = run(ROOT / "bench/plot_pipeline.py", report, tmp_path / "out", "abc1234", "bench")
    assert r.returncode == 0, r.stderr
    table = (tmp_path / "out.md").read_text()
    assert "| frames had/needed/cap | round trip us |" in table
    assert "| throughput | gpu | 32 | 1000 |" in table and "| 40/40/65 | 250.5 |" in table
    assert "| 5/6/5 | 250.5 |" in table, "needed above the cap shows as such"
    assert table.count("| - | - |") == 3, "the cpu policy's points have no round trip"
    assert (tmp_path / "out.png").read_bytes().startswith(PNG)
