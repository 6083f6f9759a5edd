#!/usr/bin/env python3
"""warpath cluster against the single process: the NIDS and flow tracking over a corpus of
captures with 1 and 2 local Ray workers, beside `warpath nids` / `warpath flows` run file by
file in one process, on the same machine in one run; and the costs docs/cluster.md's scaling
estimate rests on: starting Ray, cutting a large capture into parts (every part reads the
whole file), merging the shards' outputs.

    bench/python/cluster_scaling.py [--files 8] [--packets 200000] [--rules FILE|DIR ...]
                                    [--out bench/results]

The corpus is written by `warpath gen traffic` (many flows, imix sizes) under a temporary
directory; the rules are ET Open's (the shared data's et-open/rules) where present, else the
demo's. Needs the CLI and the package built (build/warpath, build/python) and Ray.
Writes <out>/cluster-scaling-<date>-<commit>.md and .json (commit, machine, data, command).
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("WARPATH_BIN", REPO / "build" / "warpath"))
sys.path.insert(0, str(BIN.parent / "python"))
import warpath  # noqa: E402
from warpath import dist  # noqa: E402

DATA = Path(os.environ.get("WARPATH_DATA", REPO.parent / "shared" / "data"))
sys.path.insert(0, str(REPO / "bench"))
from machine_info import cpu_model  # noqa: E402


def run(args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True,
                          **kw)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def machine():
    return {"cpu": cpu_model(), "cpus": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "ray": __import__("ray").__version__}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--packets", type=int, default=200000, help="packets per file")
    ap.add_argument("--rules", action="append")
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    a = ap.parse_args()
    et = DATA / "patterns" / "et-open" / "rules"
    rules = a.rules or ([str(et)] if et.is_dir() else [str(REPO / "examples/nids/demo.rules")])
    work = Path(tempfile.mkdtemp(prefix="warpath-cluster-bench-"))
    try:
        corpus = work / "corpus"
        corpus.mkdir()
        files = []
        for i in range(a.files):
            p = corpus / f"gen-{i:02d}.pcap"
            run([BIN, "gen", "traffic", "--out", p, "--count", a.packets, "--flows", 20000,
                 "--seed", 100 + i, "--gap-ns", 20000])
            files.append(p)
        corpus_bytes = sum(p.stat().st_size for p in files)
        packets = a.packets * a.files
        rows = []

        def row(what, seconds, note=""):
            rows.append({"what": what, "seconds": round(seconds, 3),
                         "mpps": round(packets / seconds / 1e6, 3),
                         "mb_per_s": round(corpus_bytes / seconds / 1e6, 1), "note": note})
            print(f"{what:55s} {seconds:8.2f} s {packets / seconds / 1e3:9.1f} Kpps", flush=True)

        # The single process: the CLI, file by file (what a user runs on one machine).
        nids_args = [x for r in rules for x in ("--rules", r)] + ["--skip-bad-rules"]
        t, _ = timed(lambda: [run([BIN, "nids", *nids_args, "--in", p, "--eve", work / "e.json"])
                              for p in files])
        row("nids: warpath nids, one process, file by file", t)
        t, _ = timed(lambda: [run([BIN, "flows", "--in", p, "--format", "json",
                                   "--out", work / "f.json"]) for p in files])
        row("flows: warpath flows, one process, file by file", t)

        # The same in one Python process: rules compiled once for all files (what a worker
        # does), so the cluster's rows compare with the engine's own rate.
        t, _ = timed(lambda: [sum(1 for _ in warpath.nids(rules, str(p), skip_bad_rules=True))
                              for p in files])
        row("nids: warpath.nids, one process, rules compiled once", t)
        t, _ = timed(lambda: [warpath.flows(str(p)) for p in files])
        row("flows: warpath.flows, one process", t)

        t_ray, _ = timed(lambda: dist.connect("local", workers=2))
        import ray

        ray.shutdown()
        for workers in (1, 2):
            dist.connect("local", workers=workers)
            t, s = timed(lambda: dist.run("nids", [str(corpus)], str(work / f"n{workers}"),
                                          rules=rules, skip_bad_rules=True, quiet=True))
            assert s["shards"]["done"] == a.files and s["check"]["adds_up"], s
            row(f"nids: warpath cluster, {workers} local worker(s)", t,
                "Ray started before; merge included")
            t, s = timed(lambda: dist.run("flows", [str(corpus)], str(work / f"f{workers}"),
                                          quiet=True))
            assert s["shards"]["done"] == a.files and s["check"]["adds_up"], s
            row(f"flows: warpath cluster, {workers} local worker(s)", t,
                "Ray started before; merge included")
            ray.shutdown()

        # The cut: one large capture (the corpus's files one after another) read whole, and
        # cut into 4 parts, each part reading all of it; the flows command.
        big = work / "big.pcap"
        run([BIN, "gen", "traffic", "--out", big, "--count", min(1000000, packets),
             "--flows", 100000, "--seed", 7, "--gap-ns", 20000])
        t_whole, whole = timed(lambda: warpath.flows(str(big)))
        t_parts = []
        for k in range(4):
            t, _ = timed(lambda: warpath.flows(str(big), shard=(k, 4)))
            t_parts.append(t)
        # Merging: the nids job's shards merged again (reading and writing every record).
        m = dist.Manifest.open(str(work / "n2"), "nids", {}, [], restart=True)
        m.shards = dist.plan(dist.find_captures([str(corpus)]))
        for sh in m.shards:
            sh.state = "done"
            sh.output = f"shards/{sh.id}.eve.json"
        t_merge, merged = timed(lambda: dist.merge("nids", m))
        costs = {"ray_start_s": round(t_ray, 2),
                 "flows_whole_big_s": round(t_whole, 3),
                 "flows_parts_of_4_s": [round(t, 3) for t in t_parts],
                 "part_over_whole": round(max(t_parts) / t_whole, 3),
                 "cut_overhead": round(sum(t_parts) / t_whole, 3),
                 "merge_s": round(t_merge, 3), "merged_records": merged,
                 "big_packets": len(whole) and whole.read["records"]}
        print(json.dumps(costs), flush=True)

        commit = run(["git", "-C", REPO, "rev-parse", "HEAD"]).stdout.strip()
        stamp = datetime.now(timezone.utc)
        doc = {"benchmark": "cluster-scaling", "date": stamp.isoformat(timespec="seconds"),
               "commit": commit, "machine": machine(),
               "data": {"files": a.files, "packets_per_file": a.packets,
                        "corpus_bytes": corpus_bytes, "rules": rules,
                        "generator": "warpath gen traffic --flows 20000 --gap-ns 20000"},
               "command": " ".join([sys.argv[0]] + sys.argv[1:]), "rows": rows,
               "costs": costs}
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        base = out / f"cluster-scaling-{stamp:%Y-%m-%d}-{commit[:12]}"
        base.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
        lines = [f"# warpath cluster against one process ({stamp:%Y-%m-%d}, {commit[:12]})", "",
                 f"Machine: {doc['machine']['cpu']}, {doc['machine']['cpus']} CPUs, "
                 f"Linux {doc['machine']['kernel']}, Python {doc['machine']['python']}, "
                 f"Ray {doc['machine']['ray']}. Not pinned (Ray's workers are processes of "
                 "their own).", "",
                 f"Data: {a.files} captures of {a.packets} packets ({corpus_bytes / 1e6:.0f} MB "
                 f"in all) from `{doc['data']['generator']}`; rules: "
                 f"{', '.join(rules)}.", "", f"Command: `{doc['command']}`", "",
                 "| run | seconds | Mpps | MB/s | note |", "|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['what']} | {r['seconds']} | {r['mpps']} | {r['mb_per_s']} | "
                         f"{r['note']} |")
        lines += ["", "Costs (docs/cluster.md's estimate):", "",
                  f"- starting a local Ray of 2 workers: {costs['ray_start_s']} s",
                  f"- flows over one capture of {costs['big_packets']} packets: "
                  f"{costs['flows_whole_big_s']} s whole; each of 4 parts "
                  f"{costs['flows_parts_of_4_s']} s (a part over the whole: "
                  f"{costs['part_over_whole']}; the 4 parts together: {costs['cut_overhead']}x "
                  "the whole's work)",
                  f"- merging the nids job's {sum(merged.values())} EVE records: "
                  f"{costs['merge_s']} s", ""]
        base.with_suffix(".md").write_text("\n".join(lines))
        print(f"wrote {base}.md and .json")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
