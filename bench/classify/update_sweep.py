#!/usr/bin/env python3
"""Lookup rate against update rate: `warpath classify --updates` at several paced rates.

    update_sweep.py --rules R --trace T --updates U [--rates 0,1e4,1e5,3e5,1e6,max]
                    [--engine ID] [--reader-cpu 1 --updater-cpu 0] --out PREFIX

For each rate (0: no updates, the reader alone; max: as fast as they go) one run of
`warpath classify --updates U' --update-rate RATE --stats`, U' being the first
max(2,000, --seconds x RATE) updates of U (a prefix of a valid file is valid); writes PREFIX.json (every run's
stats), PREFIX.md (a table) and PREFIX.png (reader Mpps against achieved updates/s, with the
reader's rate before the updates and 80 % of it).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--updates", required=True)
    ap.add_argument("--rates", default="0,1e4,1e5,3e5,1e6,max")
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--batch", default="64")
    ap.add_argument("--seconds", type=float, default=2.0, help="updates per run: this many seconds' worth")
    ap.add_argument("--reader-cpu", default="1")
    ap.add_argument("--updater-cpu", default="0")
    ap.add_argument("--warpath", default=os.environ.get("WARPATH_BIN", "build/warpath"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    runs = []
    lines = [l for l in open(a.updates) if l.strip() and not l.startswith("#")]
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "none")
        open(empty, "w").close()
        for rate in a.rates.split(","):
            part = os.path.join(tmp, f"u-{rate}")
            n = len(lines) if rate == "max" else max(2000, int(float(rate) * a.seconds))
            open(part, "w").writelines(lines[:n])
            stats = os.path.join(tmp, "s.json")
            cmd = [a.warpath, "classify", "--rules", a.rules, "--trace", a.trace, "--engine",
                   a.engine, "--batch", a.batch, "--reader-cpu", a.reader_cpu, "--updater-cpu",
                   a.updater_cpu, "--out", os.devnull, "--stats", stats,
                   "--updates", empty if rate == "0" else part]
            if rate not in ("0", "max"):
                cmd += ["--update-rate", rate]
            print("update_sweep:", " ".join(cmd), file=sys.stderr)
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"update_sweep: {r.stderr.strip()}")
            j = json.load(open(stats))
            j["target_rate"] = rate
            runs.append(j)
    json.dump({"tool": "bench/classify/update_sweep.py", "runs": runs}, open(a.out + ".json", "w"),
              indent=2)
    lines = [f"# Lookup rate against update rate: {runs[0]['engine']}, {os.path.basename(a.rules)}",
             "", f"commit {runs[0]['commit']}; updates from {os.path.basename(a.updates)}; "
             f"reader on cpu {a.reader_cpu}, updater on cpu {a.updater_cpu}, batch {a.batch}", "",
             "| target rate | updates/s | p50 us | p99 us | max us | reader Mpps alone | reader Mpps during | ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for j in runs:
        before, during = j["mpps_before_updates"], j["mpps_during_updates"]
        lines.append(f"| {j['target_rate']} | {j['updates_per_s']:,.0f} | {j['update_p50_us']:.2f} | "
                     f"{j['update_p99_us']:.2f} | {j['update_max_us']:.0f} | {before:.2f} | "
                     f"{during:.2f} | {during / before if before else 0:.2f}x |")
    open(a.out + ".md", "w").write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("update_sweep: no matplotlib, no plot", file=sys.stderr)
        return
    xs = [max(j["updates_per_s"], 1) for j in runs]  # the run without updates at x = 1
    ys = [j["mpps_during_updates"] for j in runs]
    base = runs[0]["mpps_before_updates"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, ys, "o-", label=f"{runs[0]['engine']} reader during updates")
    ax.axhline(base, color="gray", ls="--", label="reader alone")
    ax.axhline(0.8 * base, color="gray", ls=":", label="80 % of alone")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.annotate("no updates", (xs[0], ys[0]), textcoords="offset points", xytext=(4, -12), fontsize=7)
    ax.set_xlabel("updates per second (achieved)")
    ax.set_ylabel("lookups, Mpps (one core)")
    ax.set_title(os.path.basename(a.rules))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=120)
    print(f"update_sweep: wrote {a.out}.json, .md and .png", file=sys.stderr)


if __name__ == "__main__":
    main()
