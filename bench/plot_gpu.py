#!/usr/bin/env python3
"""bench/plot_gpu.py GPU_CHECK.json [OUT_PREFIX]

Draws the figures of a scripts/gpu-check.sh result (bench/results/gpu-check-*.json) beside the
papers' (run it on any machine with matplotlib; GPU machines may not have it):
  OUT_PREFIX-classify.png  GSwitch Figures 5(b), 6(c), 7(a-c) and 8: end-to-end Mpps of
                           cuda.linear/tuple/bloom against batch size, N, C, F, Cm and f
  OUT_PREFIX-classbench.png  Mpps of every CUDA classifier on the WUSTL 10K sets against batch
                           size, end to end (solid), kernel-only (dashed) and resident calls
                           (dotted: keys and answers on the device, launch and wait included),
                           with the issue's 1 billion/s kernel-only target
  OUT_PREFIX-parse-lookup.png  parse and IPv4/IPv6 lookup, kernel-only and end to end, against
                           batch size, with the 10 billion/s IPv4 kernel-only target
  OUT_PREFIX-engines.png   every other benchmark row (flow keying, pattern matching, NIDS, ESP,
                           OpenFlow tables, stream chains) the same way
  OUT_PREFIX-pipeline.png  the pipeline (warpath run) with cpu, gpu and auto offload: throughput
                           and p99 latency against batch size, and p50/p99 latency against the
                           delay bound, with the 100 us p99 goal
OUT_PREFIX defaults to the JSON's path without .json. Sections the file lacks are skipped."""
import json
import sys

# GSwitch section 7: each sweep varies one parameter from the defaults N=1K C=F=128 Cm=1 f=12.
SWEEPS = [("batch", "batch", "tuples per batch", "Fig. 5(b)"),
          ("rules", "N", "rules N (full classes of 256)", "Fig. 6(c)"),
          ("classes", "C", "classes C (N = 32K)", "Fig. 7(a)"),
          ("full", "F", "full classes F", "Fig. 7(b)"),
          ("matching", "Cm", "classes a tuple matches Cm", "Fig. 7(c)"),
          ("fields", "f", "fields f", "Fig. 8")]


PARSE_LOOKUP = ("parse", "lookup4", "lookup6")


def save(fig, title, out):
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot_gpu: wrote {out}")


def plot_classify(plt, rows, title, out):
    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    for ax, (sweep, key, label, fig_name) in zip(axes.flat, SWEEPS):
        for engine in sorted({r["engine"] for r in rows}):
            pts = sorted((r[key], r["end_to_end_mpps"]) for r in rows
                         if r["sweep"] == sweep and r["engine"] == engine)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=engine)
        if sweep != "fields":
            ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("Mpps, end to end")
        ax.set_title(f"GSwitch {fig_name}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save(fig, title, out)


def plot_classbench(plt, rows, title, out):
    sets = sorted({r["set"] for r in rows if r["kind"] in ("end_to_end", "kernel", "resident")})
    if not sets:
        return
    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 4.5), squeeze=False)
    for ax, s in zip(axes[0], sets):
        engines = sorted({r["engine"] for r in rows if r["set"] == s and "mpps" in r})
        for engine in engines:
            for kind, style in (("end_to_end", "-"), ("kernel", "--"), ("resident", ":")):
                pts = sorted((r["batch"], r["mpps"]) for r in rows
                             if r["set"] == s and r["engine"] == engine and r["kind"] == kind)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                            label=f"{engine} {'e2e' if kind == 'end_to_end' else kind}")
        ax.axhline(1000, color="grey", linestyle=":", label="1 billion/s target")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("batch (keys)")
        ax.set_ylabel("Mpps")
        ax.set_title(s)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    save(fig, title, out)


def rates(r):
    """(kernel, end-to-end) M items/s of a row, from its times where it has them (the Mpps
    columns carry one decimal, too few for the slow rows)."""
    def rate(us, mpps):
        return r["batch"] / us if us > 0 else mpps
    return rate(r["kernel_us"], r["kernel_mpps"]), rate(r["end_to_end_us"], r["end_to_end_mpps"])


def draw_rows(ax, rows, benches):
    for b in benches:
        pts = sorted((r["batch"], *rates(r)) for r in rows if r["bench"] == b)
        kernel = [p for p in pts if p[1] > 0]  # end-to-end-only rows (nids.*) have no kernel time
        e2e = [p for p in pts if p[2] > 0]  # kernel-only rows (esp.*.mixed) have no end to end
        color = None
        if e2e:
            color = ax.plot([p[0] for p in e2e], [p[2] for p in e2e], "--", marker="x",
                            label=f"{b} end to end")[0].get_color()
        if kernel:
            ax.plot([p[0] for p in kernel], [p[1] for p in kernel], marker="o", color=color,
                    label=f"{b} kernel")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def plot_parse_lookup(plt, rows, title, out):
    benches = sorted({r["bench"] for r in rows if r["bench"] in PARSE_LOOKUP})
    if not benches:
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    draw_rows(ax, rows, benches)
    ax.axhline(10000, color="grey", linestyle=":", label="10 billion/s (IPv4 kernel target)")
    ax.set_ylabel("M packets or lookups / s")
    ax.legend(fontsize=8)
    save(fig, title, out)


def plot_engines(plt, rows, title, out):
    """The other rows, one panel per family (the name's first part: flow, pattern, nids, esp,
    flowtable, stream)."""
    families = {}
    for r in rows:
        if r["bench"] not in PARSE_LOOKUP:
            families.setdefault(r["bench"].split(".")[0], set()).add(r["bench"])
    if not families:
        return
    cols = min(3, len(families))
    nrows = (len(families) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 4.5 * nrows), squeeze=False)
    for ax, (family, benches) in zip(axes.flat, sorted(families.items())):
        draw_rows(ax, rows, sorted(benches))
        ax.set_title(family)
        ax.set_ylabel("M items / s")
    for ax in list(axes.flat)[len(families):]:
        ax.set_visible(False)
    save(fig, title, out)


def main():
    path = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else path.rsplit(".", 1)[0]
    doc = json.load(open(path))
    bench = doc.get("bench") or {}  # null when the bench stage wrote nothing
    if "results" not in bench:
        sys.exit(f"plot_gpu: {path} has no benchmark rows ({bench.get('error', 'bench missing')})")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_gpu: matplotlib is not installed")
    title = f"{doc.get('gpu') or bench.get('device', 'GPU')}, commit {doc.get('commit', '?')[:12]}"
    if bench.get("classify"):
        plot_classify(plt, bench["classify"], title, prefix + "-classify.png")
    if bench.get("classbench"):
        plot_classbench(plt, bench["classbench"], title, prefix + "-classbench.png")
    plot_parse_lookup(plt, bench["results"], title, prefix + "-parse-lookup.png")
    plot_engines(plt, bench["results"], title, prefix + "-engines.png")
    pipeline = doc.get("pipeline") or {}
    from plot_pipeline import draw_pipeline, points_of  # beside this file: its own figure
    if points_of(pipeline):
        draw_pipeline(plt, points_of(pipeline), title, p99_goal_us=100).savefig(
            prefix + "-pipeline.png", dpi=110)
        print(f"plot_gpu: wrote {prefix}-pipeline.png")


if __name__ == "__main__":
    main()
