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
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for eng in sorted({p["engine"] for p in pts}):
        t = [p for p in pts if p["sweep"] == "throughput" and p["engine"] == eng]
        a.plot([p["batch"] for p in t], [p["mpps"] for p in t], marker="o", label=eng)
        d = [p for p in pts if p["sweep"] == "delay" and p["engine"] == eng]
        b.plot([p["delay_us"] for p in d], [p["latency_us"]["p50"] for p in d], marker="o",
               label=f"{eng} p50")
        b.plot([p["delay_us"] for p in d], [p["latency_us"]["p99"] for p in d], marker="x",
               linestyle="--", label=f"{eng} p99")
    a.set_xscale("log", base=2)
    a.set_xlabel("maximum batch (packets)")
    a.set_ylabel("Mpps (generator at full speed)")
    a.set_title("Throughput vs batch size")
    a.legend()
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("delay bound (us)")
    b.set_ylabel("RX-to-TX latency (us)")
    off = next((p["offered_pps"] for p in pts if p["sweep"] == "delay"), 0)
    b.set_title(f"Latency vs delay bound ({off / 1e6:.2f} Mpps offered)")
    b.legend()
    fig.suptitle(f"warpath run pipeline, {doc['app']}, commit {commit}")
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=110)
    print(f"wrote {prefix}.json, .md and .png")


if __name__ == "__main__":
    main()
