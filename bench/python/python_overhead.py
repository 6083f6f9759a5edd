#!/usr/bin/env python3
"""What the Python package costs over the C++ engines: lookup and classify from Python
(warpath.Fib / warpath.Classifier over numpy arrays) against `warpath bench lookup` /
`warpath bench classify` (the C++ benchmark) on the same data, the same engine and the same
pinned core, in one run; and the per-call overhead at batch 1.

Goal (docs/python.md, issue "warpath from Python"): within 10% of the C++ benchmark at batches
of 64K and more.

    bench/python/python_overhead.py [--cpu N] [--out bench/results]

Needs the CLI and the package built (build/warpath, build/python) and the shared data
(WARPATH_DATA): the routeviews partial table and ClassBench acl1 10K with its trace.
Writes <out>/python-overhead-<date>-<commit>.md and .json (commit, machine, data, command).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("WARPATH_BIN", REPO / "build" / "warpath"))
sys.path.insert(0, str(BIN.parent / "python"))
import warpath  # noqa: E402

DATA = Path(os.environ.get("WARPATH_DATA", REPO.parent / "shared" / "data"))
BATCHES = [65536, 262144, 1048576]


def best_rate(call, items, passes=9):
    """Items per second of the fastest of `passes` timed calls, after one warm-up."""
    call()
    best = float("inf")
    for _ in range(passes):
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return items / best


def cli_json(args):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    subprocess.run([str(BIN), *map(str, args), "--json", path], check=True,
                   stdout=subprocess.DEVNULL)
    with open(path) as f:
        j = json.load(f)
    os.unlink(path)
    return j


def lookup_rows(cpu, tmp):
    routes = DATA / "routing" / "ipv4_routeviews_2019-08_as23367_partial_nh.txt.xz"
    rng = np.random.default_rng(1)
    addrs = rng.integers(0, 2**32, 1 << 21, dtype=np.uint32)
    path = Path(tmp) / "addrs.txt"
    path.write_text("\n".join(warpath.format_ipv4(addrs)) + "\n")
    engine = "cpu.lpm.compressed"
    fib = warpath.Fib(str(routes), engine=engine)
    out = np.empty_like(addrs)
    rows = []
    for batch in BATCHES:
        j = cli_json(["bench", "lookup", "--fib", routes, "--addrs", path, "--engines", engine,
                      "--batch", batch, "--cpu", cpu, "--repeat", 9])
        cxx = next(r for r in j["results"] if r["engine"] == engine)["rate"]

        def run(batch=batch):
            for off in range(0, len(addrs), batch):
                fib.lookup(addrs[off: off + batch], out=out[off: off + batch])

        py = best_rate(run, len(addrs))
        rows.append({"workload": "lookup ipv4 routeviews", "engine": engine, "batch": batch,
                     "cxx_per_s": cxx, "python_per_s": py, "ratio": py / cxx})
    one = addrs[:1]
    one_out = out[:1]
    n = 200000
    t0 = time.perf_counter()
    for _ in range(n):
        fib.lookup(one, out=one_out)
    per_call = (time.perf_counter() - t0) / n
    j = cli_json(["bench", "lookup", "--fib", routes, "--addrs", path, "--engines", engine,
                  "--batch", 1, "--cpu", cpu, "--repeat", 3])
    cxx1 = next(r for r in j["results"] if r["engine"] == engine)["ns"]
    return rows, {"engine": engine, "python_ns_per_call_batch1": per_call * 1e9,
                  "cxx_ns_per_lookup_batch1": cxx1}


def classify_rows(cpu):
    rules = DATA / "classbench" / "wustl_5tuple" / "acl1_10K"
    trace = DATA / "classbench" / "wustl_5tuple" / "acl1_10K_trace"
    keys = warpath.load_keys(str(trace))
    reps = max(1, (1 << 20) // len(keys))
    keys = np.asfortranarray(np.concatenate([keys] * reps))
    rows = []
    engine = "cpu.rfc"
    c = warpath.Classifier(str(rules), engine=engine)
    out = np.empty(len(keys), dtype=np.uint32)
    for batch in BATCHES:
        j = cli_json(["bench", "classify", "--rules", rules, "--trace", trace, "--engines", engine,
                      "--batch", batch, "--cpu", cpu, "--repeat", 9])
        r = next(r for r in j["results"] if r["engine"] == engine)
        cxx = r["rate"]  # keys a second (bench/harness/report.hpp)

        def run(batch=batch):
            c.classify(keys, out=out, batch=batch)

        py = best_rate(run, len(keys))
        rows.append({"workload": "classify acl1 10K", "engine": engine, "batch": batch,
                     "cxx_per_s": cxx, "python_per_s": py, "ratio": py / cxx if cxx else None})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpu", type=int, default=sorted(os.sched_getaffinity(0))[-1])
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    a = ap.parse_args()
    os.sched_setaffinity(0, {a.cpu})
    with tempfile.TemporaryDirectory() as tmp:
        rows, overhead = lookup_rows(a.cpu, tmp)
    rows += classify_rows(a.cpu)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                  if l.startswith("model name")), platform.processor())
    result = {"tool": "bench/python/python_overhead.py", "commit": commit,
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{model}, {os.cpu_count()} CPUs", "pinned_cpu": a.cpu,
              "command": " ".join(sys.argv), "build": warpath.build_info(),
              "results": rows, "batch1": overhead}
    stem = f"python-overhead-{datetime.now():%Y-%m-%d}-{commit}"
    out = Path(a.out)
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# Python package overhead ({commit})", "",
             f"Machine: {result['machine']}, pinned to CPU {a.cpu}. Date {result['date']}.",
             f"Command: `{result['command']}`", "",
             "| workload | engine | batch | C++ benchmark (M/s) | Python (M/s) | Python / C++ |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else "n/a"
        lines.append(f"| {r['workload']} | {r['engine']} | {r['batch']} | "
                     f"{r['cxx_per_s'] / 1e6:.1f} | {r['python_per_s'] / 1e6:.1f} | {ratio} |")
    lines += ["", f"Batch 1: one `Fib.lookup` call from Python takes "
              f"{overhead['python_ns_per_call_batch1']:.0f} ns; the C++ benchmark at batch 1 "
              f"{overhead['cxx_ns_per_lookup_batch1']:.1f} ns a lookup."]
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
