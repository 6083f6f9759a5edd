#!/usr/bin/env python3
"""bench/plot_pipeline.py REPORT.json OUT_PREFIX COMMIT COMMAND

Adds commit, machine and command to warpath-pipeline-bench's report and writes OUT_PREFIX.json,
OUT_PREFIX.md (tables) and OUT_PREFIX.png (throughput against batch size; latency against the
delay bound), as GSwitch's Figures 9-10 plot them."""
import json
import os
import platform
import sys

from machine_info import cpu_model


def draw_pipeline(plt, pts, title, p99_goal_us=None):
    """The report's points as GSwitch's Figures 9-10 show them: throughput and p99 latency
    against batch size, and p50/p99 latency against the delay bound, a line per engine (with
    the p99 goal, if given). Returns the figure (bench/plot_gpu.py draws the GPU run's too)."""
    fig, (a, l, b) = plt.subplots(1, 3, figsize=(15, 4.5))
    for eng in sorted({p["engine"] for p in pts}):
        t = sorted((p["batch"], p["mpps"], p["latency_us"]["p99"]) for p in pts
                   if p["sweep"] == "throughput" and p["engine"] == eng)
        a.plot([x[0] for x in t], [x[1] for x in t], marker="o", label=eng)
        l.plot([x[0] for x in t], [x[2] for x in t], marker="o", label=eng)
        d = sorted((p["delay_us"], p["latency_us"]["p50"], p["latency_us"]["p99"]) for p in pts
                   if p["sweep"] == "delay" and p["engine"] == eng)
        line = b.plot([x[0] for x in d], [x[2] for x in d], marker="o", label=f"{eng} p99")[0]
        b.plot([x[0] for x in d], [x[1] for x in d], marker="x", linestyle="--",
               color=line.get_color(), label=f"{eng} p50")
    for ax in (a, l):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("maximum batch (packets)")
    a.set_ylabel("Mpps (generator at full speed)")
    a.set_title("Throughput vs batch size")
    l.set_ylabel("RX-to-TX p99 latency (us)")
    l.set_title("p99 latency vs batch size")
    b.set_xscale("log")
    b.set_xlabel("delay bound (us)")
    b.set_ylabel("RX-to-TX latency (us)")
    off = next((p["offered_pps"] for p in pts if p["sweep"] == "delay"), 0)
    b.set_title(f"Latency vs delay bound ({off / 1e6:.2f} Mpps offered)")
    for ax in (l, b):
        ax.set_yscale("log")
        if p99_goal_us:
            ax.axhline(p99_goal_us, color="grey", linestyle=":", label=f"{p99_goal_us} us p99 goal")
    for ax in (a, l, b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def main():
    report_path, prefix, commit, command = sys.argv[1:5]
    doc = json.load(open(report_path))
    doc["commit"] = commit
    doc["machine"] = {"cpu": cpu_model(), "cores": os.cpu_count(), "host": platform.node()}
    doc["command"] = command
    json.dump(doc, open(prefix + ".json", "w"), indent=1)

    pts = doc["points"]
    lines = [f"# Pipeline benchmark ({doc['app']}, {doc['workers']} worker(s))", "",
             f"commit `{commit}`, {doc['machine']['cpu']} ({doc['machine']['cores']} cores), "
             f"{doc['duration_s']} s per point, command `{command}`", "",
             f"data: {doc['data']}", "",
             "| sweep | engine | batch | delay us | offered Mpps | Mpps | Gbps | fill | gpu share "
             "| rx-queue drops | p50 us | p99 us | p99.9 us |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in pts:
        lat = p["latency_us"]
        lines.append(f"| {p['sweep']} | {p['engine']} | {p['batch']} | {p['delay_us']} | "
                     f"{p['offered_pps'] / 1e6:.2f} | {p['mpps']:.2f} | {p['gbps']:.2f} | "
                     f"{p['batch_fill']:.2f} | {p['gpu_share']:.2f} | {p['rx_queue_full']} | "
                     f"{lat['p50']:.0f} | {lat['p99']:.0f} | {lat['p999']:.0f} |")
    open(prefix + ".md", "w").write("\n".join(lines) + "\n")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"wrote {prefix}.json and .md (no matplotlib: no plot)")
        return
    fig = draw_pipeline(plt, pts, f"warpath run pipeline, {doc['app']}, commit {commit}")
    fig.savefig(prefix + ".png", dpi=110)
    print(f"wrote {prefix}.json, .md and .png")


if __name__ == "__main__":
    main()
