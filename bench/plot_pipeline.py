#!/usr/bin/env python3
"""bench/plot_pipeline.py REPORT.json OUT_PREFIX COMMIT COMMAND
   bench/plot_pipeline.py SWEEP.json [OUT_PREFIX]

Adds commit, machine and command to warpath-pipeline-bench's report and writes OUT_PREFIX.json,
OUT_PREFIX.md (tables) and OUT_PREFIX.png (throughput against batch size; latency against the
delay bound), as GSwitch's Figures 9-10 plot them.

Given a --sweep report (bench "pipeline-sweep", which carries its own commit, machine and
command), writes OUT_PREFIX.md (default: beside it, same name): per chain, traffic and worker
count each engine's median Mpps, its ratio to the cpu policy and to the better of cpu and gpu
(auto's goal), latency and the workers' stage costs; and OUT_PREFIX.png: Mpps against workers,
a panel per chain and traffic, a line per engine."""
import json
import os
import platform
import statistics
import sys
from collections import defaultdict

from machine_info import cpu_model


def points_of(doc):
    """A pipeline report's points: its rows under "results" (the harness's result file,
    bench/harness/report.hpp: rate in packets a second, the offload policy as "policy"), or an
    older report's "points"; each with "mpps" and "engine" (the policy) as the older points had
    them."""
    if "points" in doc:
        return doc["points"]
    return [{**r, "mpps": r.get("rate", 0) / 1e6, "engine": r.get("policy", r["engine"])}
            for r in doc.get("results", [])]


def frames_of(p):
    """A point's workers' frames (the report's `frames`: cap, most, needed, round_trip_us, ...),
    or None where no offloaded frame came back (the cpu policy, reports before 2026-11-29)."""
    f = p.get("frames")
    return f if f and f.get("needed", 0) > 0 else None


def draw_pipeline(plt, pts, title, p99_goal_us=None):
    """The report's points as GSwitch's Figures 9-10 show them: throughput and p99 latency
    against batch size, and p50/p99 latency against the delay bound, a line per engine (with
    the p99 goal, if given); where offloaded frames came back, a fourth panel: the frames a
    worker needed (its rate times the launches' round trip) and had, against batch size.
    Returns the figure (bench/plot_gpu.py draws the GPU run's too)."""
    framed = [p for p in pts if p["sweep"] == "throughput" and frames_of(p)]
    fig, axes = plt.subplots(1, 4 if framed else 3, figsize=(20 if framed else 15, 4.5))
    a, l, b = axes[:3]
    if framed:
        f = axes[3]
        for eng in sorted({p["engine"] for p in framed}):
            t = sorted((p["batch"], frames_of(p)) for p in framed if p["engine"] == eng)
            line = f.plot([x[0] for x in t], [x[1]["needed"] for x in t], marker="o",
                          label=f"{eng} needed")[0]
            f.plot([x[0] for x in t], [x[1]["most"] for x in t], marker="x", linestyle="--",
                   color=line.get_color(), label=f"{eng} had")
        caps = sorted({(p["batch"], p["frames"]["cap"]) for p in framed})
        f.plot([c[0] for c in caps], [c[1] for c in caps], color="grey", linestyle=":",
               label="cap")
        f.set_xscale("log", base=2)
        f.set_yscale("log")
        f.set_xlabel("maximum batch (packets)")
        f.set_ylabel("frames a worker")
        f.set_title("Frames: rate x round trip, and had")
        f.grid(alpha=0.3)
        f.legend(fontsize=8)
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


def sweep_cells(pts):
    """{(app, profile): {workers: {engine: [points]}}} of a sweep's points."""
    cells = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for p in pts:
        cells[(p["app"], p["profile"])][p["workers"]][p["engine"]].append(p)
    return cells


def median_of(points, get):
    return statistics.median(get(p) for p in points) if points else float("nan")


def sweep_table(doc):
    """The sweep's markdown: a row per chain, traffic and worker count."""
    cells = sweep_cells(points_of(doc))
    engines = sorted({p["engine"] for p in points_of(doc)}, key=["cpu", "gpu", "auto"].index)
    lines = ["| chain | traffic | workers | " + " | ".join(f"{e} Mpps" for e in engines) +
             " | gpu/cpu | auto/best | gpu p50/p99 us | cpu p50/p99 us "
             "| cpu ns/pkt rx+parse+modules+tx | gpu ns/pkt rx+parse+modules+tx | rounds |",
             "|---|---|---:|" + "---:|" * len(engines) + "---:|---:|---:|---:|---|---|---:|"]
    for (app, profile), by_w in cells.items():
        for w in sorted(by_w):
            e = {k: v for k, v in by_w[w].items() if v}  # an engine with no point: "-"
            mpps = {k: median_of(e[k], lambda p: p["mpps"]) for k in e}
            best = max(mpps.get("cpu", 0), mpps.get("gpu", 0))

            def lat(k):
                return (f"{median_of(e[k], lambda p: p['latency_us']['p50']):.0f}/"
                        f"{median_of(e[k], lambda p: p['latency_us']['p99']):.0f}")

            def stages(k):
                return "+".join(f"{median_of(e[k], lambda p, f=f: p['stages_ns_per_packet'][f]):.0f}"
                                for f in ("rx", "parse", "modules", "tx"))
            ratio = (f"{mpps['gpu'] / mpps['cpu']:.2f}" if "gpu" in mpps and mpps.get("cpu")
                     else "-")
            auto = f"{mpps['auto'] / best:.2f}" if "auto" in mpps and best else "-"
            lines.append(f"| {app} | {profile} | {w} | " +
                         " | ".join(f"{mpps[k]:.1f}" if k in mpps else "-" for k in engines) +
                         f" | {ratio} | {auto} | {lat('gpu') if 'gpu' in e else '-'} | "
                         f"{lat('cpu') if 'cpu' in e else '-'} | "
                         f"{stages('cpu') if 'cpu' in e else '-'} | "
                         f"{stages('gpu') if 'gpu' in e else '-'} | "
                         f"{min((len(v) for v in e.values()), default=0)} |")
    return lines


def draw_sweep(plt, doc, title):
    """Mpps against workers, a panel per chain and traffic, a line per engine (median of the
    rounds, each round a dot)."""
    cells = sweep_cells(points_of(doc))
    fig, axes = plt.subplots(1, len(cells), figsize=(4.2 * len(cells), 4), squeeze=False)
    for ax, ((app, profile), by_w) in zip(axes[0], cells.items()):
        for eng in ("cpu", "gpu", "auto"):
            ws = [w for w in sorted(by_w) if by_w[w][eng]]
            if not ws:
                continue
            line = ax.plot(ws, [median_of(by_w[w][eng], lambda p: p["mpps"]) for w in ws],
                           marker="o", label=eng)[0]
            for w in ws:
                ax.scatter([w] * len(by_w[w][eng]), [p["mpps"] for p in by_w[w][eng]], s=8,
                           color=line.get_color(), alpha=0.4)
        ax.set_title(f"{app}, {profile}")
        ax.set_xlabel("workers")
        ax.set_ylabel("Mpps")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def sweep_main(path, prefix):
    doc = json.load(open(path))
    prefix = prefix or os.path.splitext(path)[0]
    machine = doc.get("machine", "machine not given")
    if isinstance(machine, dict):  # the harness's provenance (bench/harness/report.hpp)
        machine = f"{machine.get('cpu', '?')}, {machine.get('logical_cores', '?')} logical cores"
    head = [f"# Pipeline sweep: Mpps against workers ({machine})",
            "", f"commits: {json.dumps(doc.get('commits', doc.get('commit', 'not given')))}",
            "", f"commands: {json.dumps(doc.get('commands', doc.get('command', 'not given')))}",
            "", f"batch {doc['batch']}, delay bound {doc['delay_us']} us, {doc['duration_s']} s "
            f"a point, {doc['rounds']} rounds (engines' order rotated); medians of the rounds",
            "", f"data: {doc['data']}; acl1_10K: {doc.get('acl1_10K', '-')}", ""]
    open(prefix + ".md", "w").write("\n".join(head + sweep_table(doc)) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"wrote {prefix}.md (no matplotlib: no plot)")
        return
    draw_sweep(plt, doc, "warpath run pipeline: Mpps against workers").savefig(prefix + ".png",
                                                                               dpi=110)
    print(f"wrote {prefix}.md and .png")


def main():
    if len(sys.argv) in (2, 3):
        path = sys.argv[1]
        if json.load(open(path)).get("bench") != "pipeline-sweep":
            sys.exit(f"plot_pipeline: {path} is not a --sweep report: give OUT_PREFIX COMMIT "
                     "COMMAND too")
        sweep_main(path, sys.argv[2] if len(sys.argv) == 3 else None)
        return
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    report_path, prefix, commit, command = sys.argv[1:5]
    doc = json.load(open(report_path))
    doc["commit"] = commit
    doc.setdefault("machine", {"cpu": cpu_model(), "cores": os.cpu_count(),
                               "host": platform.node()})
    doc["machine"].setdefault("cores", doc["machine"].get("logical_cores", os.cpu_count()))
    doc["command"] = command
    json.dump(doc, open(prefix + ".json", "w"), indent=1)

    pts = points_of(doc)
    lines = [f"# Pipeline benchmark ({doc['app']}, {doc['workers']} worker(s))", "",
             f"commit `{commit}`, {doc['machine']['cpu']} ({doc['machine']['cores']} cores), "
             f"{doc['duration_s']} s per point, command `{command}`", "",
             f"data: {doc['data']}", "",
             "| sweep | engine | batch | delay us | offered Mpps | Mpps | Gbps | fill | gpu share "
             "| rx-queue drops | p50 us | p99 us | p99.9 us | frames had/needed/cap "
             "| round trip us |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in pts:
        lat = p["latency_us"]
        f = frames_of(p)
        frames = f"{f['most']}/{f['needed']}/{f['cap']} | {f['round_trip_us']:.1f}" if f else \
            "- | -"
        lines.append(f"| {p['sweep']} | {p['engine']} | {p['batch']} | {p['delay_us']} | "
                     f"{p['offered_pps'] / 1e6:.2f} | {p['mpps']:.2f} | {p['gbps']:.2f} | "
                     f"{p['batch_fill']:.2f} | {p['gpu_share']:.2f} | {p['rx_queue_full']} | "
                     f"{lat['p50']:.0f} | {lat['p99']:.0f} | {lat['p999']:.0f} | {frames} |")
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
