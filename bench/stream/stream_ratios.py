#!/usr/bin/env python3
"""Summarises run_stream_bench.sh's JSON lines: per workload, each engine's median ns per packet
and warpath's speed-up over each libnids row as the median of the per-round ratios (the rows of
a round ran one after another, so a round's ratio shares that round's machine state).

    bench/stream/stream_ratios.py results.jsonl [--markdown]
"""
import json
import statistics
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rows = []
    with open(argv[1]) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                print(f"{argv[1]}:{n}: not JSON: {e}", file=sys.stderr)
                return 1
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    anchors = [e for e in dict.fromkeys(r["engine"] for r in rows) if e != "warpath"]
    key = lambda r: (r.get("run", 0), r["round"])
    md = "--markdown" in argv
    head = ["workload", "warpath ns/pkt"] + [f"{a} ns/pkt" for a in anchors]
    head += [f"vs {a}: median (range)" for a in anchors]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("  ".join(head))
    for w in workloads:
        by = {}
        for r in rows:
            if r["workload"] == w:
                # "ns": the harness's row (bench/harness/report.hpp); older files said
                # ns_per_packet.
                by.setdefault(r["engine"], {})[key(r)] = r.get("ns", r.get("ns_per_packet"))
        ours = by.get("warpath", {})
        cells = [w, f"{statistics.median(ours.values()):.1f}" if ours else "-"]
        ratios = []
        for a in anchors:
            theirs = by.get(a, {})
            cells.append(f"{statistics.median(theirs.values()):.1f}" if theirs else "-")
            paired = [theirs[k] / ours[k] for k in ours if k in theirs and ours[k] > 0]
            ratios.append(
                f"{statistics.median(paired):.2f}x ({min(paired):.2f} - {max(paired):.2f})" if paired else "-")
        cells += ratios
        print(("| " + " | ".join(cells) + " |") if md else "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
