#!/usr/bin/env python3
"""bench/plot_classify.py RESULT.json [OUT.png]

Plots a scripts/bench-classify.sh result (bench/results/classify-cpu-*.json): per rule set,
each warpath engine's Mpps against the best rte_acl variant's, and the image memory and build
time of each (log scales), so that the speed, memory and build-time trade-offs of every
engine sit side by side. Engines that did not build (RFC/TIC out of memory on the 100K sets)
are marked with an x at the bottom of the panel. Writes RESULT.png unless OUT is given."""
import json
import sys


def rows(run):
    """(warpath engines, best rte_acl row) of one set's run. Rows of the harness's schema
    (bench/harness/report.hpp: rate in keys/s) and of the older one (mpps) alike."""
    for x in run["results"]:
        if "rate" in x and "mpps" not in x:
            x["mpps"] = x["rate"] / 1e6
    engines = [x for x in run["results"] if x.get("kind") == "warpath"
               and x["engine"] not in ("cpu.linear", "ref.linear")]
    acl = [x for x in run["results"] if x.get("kind") != "warpath" and "mpps" in x]
    best = max(acl, key=lambda x: x["mpps"]) if acl else None
    return engines, best


def main():
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else path.rsplit(".", 1)[0] + ".png"
    doc = json.load(open(path))
    runs = doc["runs"]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_classify: no matplotlib: no plot")
        return
    sets = [r["dataset"]["name"].replace(".gz", "") for r in runs]
    names = []
    for r in runs:
        for x in rows(r)[0]:
            if x["engine"] not in names:
                names.append(x["engine"])
    names.append("rte_acl (best)")
    metrics = [("mpps", "Mpps (one core, bursts of 64)", False),
               ("memory_bytes", "image memory (MiB, log)", True),
               ("build_ms", "build time (ms, log)", True)]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(12, 10), sharex=True)
    width = 0.8 / len(names)
    for ax, (key, label, log) in zip(axes, metrics):
        for k, name in enumerate(names):
            xs, ys, missing = [], [], []
            for i, r in enumerate(runs):
                engines, best = rows(r)
                x = best if name == "rte_acl (best)" else next(
                    (e for e in engines if e["engine"] == name), None)
                pos = i - 0.4 + width * (k + 0.5)
                if x is None or "skipped" in x or key not in x:
                    missing.append(pos)
                    continue
                v = x[key] / 2**20 if key == "memory_bytes" else x[key]
                xs.append(pos)
                ys.append(v)
            color = "black" if name.startswith("rte_acl") else None
            bars = ax.bar(xs, ys, width, label=name, color=color)
            if key == "mpps":
                for b, y in zip(bars, ys):
                    ax.annotate(f"{y:.0f}", (b.get_x() + b.get_width() / 2, y), ha="center",
                                va="bottom", fontsize=6)
            if missing:
                ax.scatter(missing, [ax.get_ylim()[0] if not log else 0.01] * len(missing),
                           marker="x", color=bars.patches[0].get_facecolor() if bars.patches
                           else "grey", zorder=3)
        if log:
            ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    top = axes[0].get_ylim()[1]
    axes[0].set_ylim(0, top * 1.3)  # room for the legend above the bars
    axes[0].legend(ncol=len(names), fontsize=8, loc="upper center")
    axes[-1].set_xticks(range(len(sets)))
    axes[-1].set_xticklabels(sets)
    m = runs[0]["machine"]
    fig.suptitle(f"Packet classification beside DPDK rte_acl: {m['cpu']}, one pinned core, "
                 f"commit {doc['commit']} (x: engine could not build the set)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot_classify: wrote {out}")


if __name__ == "__main__":
    main()
