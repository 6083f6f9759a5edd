#!/usr/bin/env python3
"""The summary of scripts/bench-lookup.sh: reads the `warpath bench lookup` reports (run*.json in
a folder, or one combined bench/results/lookup-*.json) and writes bench/results/lookup-cpu-<date>-
<commit>.{json,md}. Each family's anchor is its best DPDK variant in the same run (rte_lpm,
rte_fib's variants, rte_lpm6, rte_fib6's); ratios are best pass against best pass and the median
of the rounds' paired passes, on which the goal (1.5x) is judged."""
import glob, json, os, sys, datetime
tmp, status = sys.argv[1], int(sys.argv[2])
combined = os.path.isfile(tmp)  # a combined report written before: summarised again, kept as is
if combined:
    runs = json.load(open(tmp))["runs"]
else:
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(tmp, "run*.json")))]
if not runs:
    sys.exit("bench-lookup: no run produced a report")
for r in runs:  # the harness's rows (bench/harness/report.hpp) in the older rows' names
    for x in r["results"]:
        if "rate" in x and "mlookups_per_s" not in x:
            x["mlookups_per_s"], x["ns_per_lookup"] = x["rate"] / 1e6, x["ns"]
commit = runs[0].get("commit") or "unknown"
date = runs[0]["date"][:10] if runs[0].get("date") else datetime.datetime.utcnow().strftime("%Y-%m-%d")
base = f"bench/results/lookup-cpu-{date}-{commit}"
if not combined:
    with open(base + ".json", "w") as f:
        json.dump({"tool": "scripts/bench-lookup.sh", "commit": commit, "date": runs[0]["date"],
                   "passed": status == 0 and all(r["check"]["passed"] for r in runs),
                   "runs": runs}, f, indent=2)
m = runs[0]["machine"]
out = [f"# IP lookup, {date}, commit {commit}", "",
       f"{m['cpu']}, {m['logical_cores']} logical cores, pinned to cpu {m['pinned_cpu']}; "
       f"load average at start: {m.get('loadavg_start', m.get('loadavg'))}.", ""]
if runs[0].get("note"):
    out += [f"Note: {runs[0]['note']}", ""]
d = runs[0]["dpdk"]
out += [f"DPDK {d.get('version', '-')}: " + ("EAL `" + d.get("eal_args", "") + "`" +
        (f" ({d['pages']})" if d.get("pages") else "") if d["available"]
        else "unavailable: " + d.get("why_not", "")), ""]
def paired(base, row):
    # Median over rounds of base's pass time / row's: the passes of one round ran back to back
    # (round-robin), so the VM's drift between rounds cancels; best-of ratios move 20-40%.
    q = sorted(b / x for b, x in zip(base["pass_s"], row["pass_s"]) if x > 0)
    if not q:
        return 0.0
    h = len(q) // 2
    return q[h] if len(q) % 2 else (q[h - 1] + q[h]) / 2

for r in runs:
    a, p = r["addresses"], r["params"]
    for fam in ("ipv4", "ipv6"):
        rows = [x for x in r["results"] if x["family"] == fam]
        if not rows:
            continue
        routes = r["dataset"]["routes4" if fam == "ipv4" else "routes6"]
        count = a["count4" if fam == "ipv4" else "count6"]
        # The anchor: the best DPDK variant of the family in this run (by its best pass), the
        # goal 1.5x it for IPv4 and IPv6 alike, judged on the paired median.
        target = 1.5
        base_row = max((x for x in rows if x["engine"].startswith("rte_") and "skipped" not in x),
                       key=lambda x: x["mlookups_per_s"], default=None)
        anchor = base_row["engine"] if base_row else "DPDK"
        out += [f"## {r['dataset']['name']} ({fam}, {routes:,} routes)", "",
                f"{count:,} addresses ({a['mix']}, seed {a['seed']}), batch {p['batch']}, "
                f"best of {p['repeat']}. `{r['command']}`", ""]
        best = max((x for x in rows if "skipped" not in x and not x["engine"].startswith(("rte_", "cuda."))),
                   key=lambda x: x["mlookups_per_s"], default=None)
        if best and base_row:
            ratio = best["mlookups_per_s"] / base_row["mlookups_per_s"]
            pr = paired(base_row, best)
            out += [f"Best warpath CPU engine {best['engine']}: {ratio:.2f}x {anchor} best pass "
                    f"against best pass, {pr:.2f}x as the median of the {len(best['pass_s'])} "
                    f"rounds' paired passes (target {target}x, judged on the paired median: "
                    f"{'met' if pr >= target else 'not met'} in this run).", ""]
        out += [f"| engine | M lookups/s | ns/lookup | vs {anchor} | paired vs {anchor} | build ms | image MiB | total MiB | check |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for x in rows:
            if "skipped" in x:
                out.append(f"| {x['engine']} | skipped: {x['skipped']} | | | | | | | |")
                continue
            check = "reference" if x["reference"] else ("ok" if x["mismatches"] == 0
                                                         else f"{x['mismatches']} MISMATCHES")
            vs = (f"{x['mlookups_per_s'] / base_row['mlookups_per_s']:.2f}x" if base_row else "-")
            pv = f"{paired(base_row, x):.2f}x" if base_row else "-"
            out.append(f"| {x['engine']} | {x['mlookups_per_s']:.1f} | {x['ns_per_lookup']:.2f} | "
                       f"{vs} | {pv} | {x['build_ms']:.0f} | {x['image_bytes'] / 2**20:.1f} | "
                       f"{x['memory_bytes'] / 2**20:.1f} | {check} |")
        out.append("")
out += ["image: lookup tables only (warpath FibStats::memory_bytes; DPDK tbl24 + tbl8 as "
        "configured). total: warpath images + RIB estimate; DPDK heap growth across the build "
        "(rules, RIB, mempools included).", ""]
open(base + ".md", "w").write("\n".join(out))
print(f"bench-lookup: wrote {base}.md" if combined else f"bench-lookup: wrote {base}.json and {base}.md")
