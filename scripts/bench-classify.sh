#!/usr/bin/env bash
# scripts/bench-classify.sh: the standard classification benchmark (`warpath bench classify`).
#
# Builds warpath (preset $PRESET, default `default`; or an existing build in $BUILD_DIR) and runs
# every classifier engine beside DPDK rte_acl (each classify function this CPU has) on the
# ClassBench sets of $WARPATH_DATA (default ../shared/data), each with its own trace:
#   classbench/wustl_5tuple/{acl1,fw1,ipc1}_10K           WUSTL traces (first-match column checked)
#   classbench/generated_100k/{acl1,ipc1}_100K.gz          ClassBench trace_generator traces
#   classbench/generated_100k/fw1_100K.gz                  only with --big: rte_acl's build of it
#                                                          takes ~40 s and ~10.6 GB (ANCHORS.md)
# pinned to $CPU (default: the current one). Each run caps rte_acl's build memory at --max-acl-mb
# (default 12000 MB) and at MemAvailable - 1 GB, and reports the anchor as skipped beyond that.
# Writes bench/results/classify-cpu-<UTC date>-<commit>.json (every run's full report), a .md
# summary and a .png plot (bench/plot_classify.py) beside it. Other arguments go to every run,
# e.g. --repeat 3 --note "idle machine".
set -euo pipefail
cd "$(dirname "$0")/.."

big=0
args=()
for a in "$@"; do
  if [[ $a == --big ]]; then big=1; else args+=("$a"); fi
done

PRESET=${PRESET:-default}
DATA=${WARPATH_DATA:-../shared/data}
if [[ -z ${BUILD_DIR:-} ]]; then
  case $PRESET in default) BUILD_DIR=build ;; *) BUILD_DIR=build-$PRESET ;; esac
  [[ -f $BUILD_DIR/build.ninja ]] || cmake --preset "$PRESET"
fi
cmake --build "$BUILD_DIR" --target warpath -j "${JOBS:-$(nproc)}"
WARPATH=$BUILD_DIR/warpath

SETS=(
  "classbench/wustl_5tuple/acl1_10K classbench/wustl_5tuple/acl1_10K_trace"
  "classbench/wustl_5tuple/fw1_10K classbench/wustl_5tuple/fw1_10K_trace"
  "classbench/wustl_5tuple/ipc1_10K classbench/wustl_5tuple/ipc1_10K_trace"
  "classbench/generated_100k/acl1_100K.gz classbench/generated_100k/acl1_100K_trace.gz"
  "classbench/generated_100k/ipc1_100K.gz classbench/generated_100k/ipc1_100K_trace.gz"
)
if ((big)); then
  SETS+=("classbench/generated_100k/fw1_100K.gz classbench/generated_100k/fw1_100K_trace.gz")
else
  echo "bench-classify: fw1_100K left out (rte_acl builds it in ~40 s with ~10.6 GB); pass --big" >&2
fi
cpu_args=()
[[ -n ${CPU:-} ]] && cpu_args=(--cpu "$CPU")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
i=0
for s in "${SETS[@]}"; do
  read -r rules trace <<<"$s"
  for f in "$DATA/$rules" "$DATA/$trace"; do
    if [[ ! -f $f ]]; then
      echo "bench-classify: $f not found (set WARPATH_DATA)" >&2
      exit 1
    fi
  done
  i=$((i + 1))
  echo "bench-classify: $rules" >&2
  "$WARPATH" bench classify --rules "$DATA/$rules" --trace "$DATA/$trace" "${cpu_args[@]}" \
    --json "$tmp/run$(printf %02d $i).json" "${args[@]}" || status=1
done

mkdir -p bench/results
python3 - "$tmp" "$status" "$big" <<'PY'
import glob, json, os, sys, datetime
tmp, status, big = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(tmp, "run*.json")))]
if not runs:
    sys.exit("bench-classify: no run produced a report")
commit = runs[0].get("commit") or "unknown"
date = datetime.datetime.utcnow().strftime("%Y-%m-%d")
base = f"bench/results/classify-cpu-{date}-{commit}"
with open(base + ".json", "w") as f:
    json.dump({"tool": "scripts/bench-classify.sh", "commit": commit, "date": runs[0]["date"],
               "big": big, "passed": status == 0 and all(r["check"]["passed"] for r in runs),
               "runs": runs}, f, indent=2)
m = runs[0]["machine"]
out = [f"# Packet classification, {date}, commit {commit}", "",
       f"{m['cpu']}, {m['logical_cores']} logical cores, {m['mem_total_mb']:,} MB, pinned to cpu "
       f"{m['pinned_cpu']}. Load average at the start of each run: "
       + "; ".join(f"{r['dataset']['name']} {r['machine'].get('loadavg_start', r['machine'].get('loadavg')).split()[0]}"
                   for r in runs) + ".", ""]
if runs[0].get("note"):
    out += [f"Note: {runs[0]['note']}", ""]
d = runs[0]["dpdk"]
if d["available"]:
    have = [v["name"] for v in d["variants"] if v["available"]]
    out += [f"DPDK {d.get('version', '-')} rte_acl ({', '.join(have)}). EAL per set (pages differ "
            f"where too few hugepages were free):", ""]
    out += [f"- {r['dataset']['name']}: `{r['dpdk'].get('eal_args', '')}`"
            + (f" ({r['dpdk']['pages']})" if r["dpdk"].get("pages") else "") for r in runs]
    out += [""]
else:
    out += ["DPDK rte_acl unavailable: " + d.get("why_not", ""), ""]
if not big:
    out += ["fw1_100K is not in this run (rte_acl needs ~40 s and ~10.6 GB to build it; "
            "`scripts/bench-classify.sh --big`).", ""]
for r in runs:
    ds, p = r["dataset"], r["params"]
    for x in r["results"]:  # the harness's rows (bench/harness/report.hpp) in the older names
        if "rate" in x and "mpps" not in x:
            x["mpps"], x["ns_per_key"], x["ratio_to_best_acl"] = x["rate"] / 1e6, x["ns"], x.get("ratio")
    out += [f"## {ds['name']} ({ds['rules']:,} rules)", "",
            f"{ds['keys_timed']:,} keys ({ds['keys_distinct']:,} distinct from "
            f"{os.path.basename(ds.get('trace_file', '-'))}), batch {p['batch']}, best of "
            f"{p['repeat']} x {p.get('rounds', 1)} rounds; load {r['machine'].get('loadavg_start', r['machine'].get('loadavg'))} -> {r['machine']['loadavg_end']}. "
            f"Check: {'passed' if r['check']['passed'] else 'FAILED'}"
            + (" (and equal to the trace's first match)" if ds.get("first_match_check") else "")
            + ".", "",
            "| engine | Mpps | ns/key | vs best rte_acl | build ms | memory MiB | build peak MiB | classes | entries | check |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for x in r["results"]:
        if "skipped" in x:
            out.append(f"| {x['engine']} | skipped: {x['skipped']} | | | | | | | | |")
            continue
        ratio = f"{x['ratio_to_best_acl']:.2f}x" if x.get("ratio_to_best_acl") else "-"
        check = "reference" if x["reference"] else ("ok" if x["mismatches"] == 0
                                                     else f"{x['mismatches']} MISMATCHES")
        if x.get("trace_mismatches"):
            check += f", {x['trace_mismatches']} vs trace"
        cls = x.get("classes", "-")
        ent = f"{x['entries']:,}" if "entries" in x else "-"
        out.append(f"| {x['engine']} | {x['mpps']:.2f} | {x['ns_per_key']:.1f} | {ratio} | "
                   f"{x['build_ms']:.0f} | {x['memory_bytes'] / 2**20:.1f} | "
                   f"{x['build_peak_rss_bytes'] / 2**20:.1f} | {cls} | {ent} | {check} |")
    upd = [x for x in r["results"] if "updates_per_s" in x.get("updates", {})]
    if upd:
        out += ["", f"Updates ({upd[0]['updates']['pairs']:,} erase + insert pairs of random "
                "rules; alone, then beside a thread classifying on the other core):", "",
                "| engine | updates/s alone | p50 us | p99 us | max us | updates/s beside a reader "
                "| reader Mpps | answers after |",
                "|---|---:|---:|---:|---:|---:|---:|---|"]
        for x in upd:
            u = x["updates"]
            after = ("same as before" if u["after_mismatches"] == 0
                     else f"{u['after_mismatches']} DIFFER")
            out.append(f"| {x['engine']} | {u['updates_per_s']:,.0f} | {u['p50_us']:.1f} | "
                       f"{u['p99_us']:.1f} | {u['max_us']:.0f} | "
                       f"{u['concurrent_updates_per_s']:,.0f} | {u['reader_mpps']:.2f} | {after} |")
        acl = [x for x in r["results"] if x["engine"].startswith("rte_acl") and x.get("build_ms")]
        if acl:  # the anchor updates only by rebuilding: one update per build
            b = acl[0]["build_ms"]
            out.append(f"| rte_acl (every update a rebuild) | {1000 / b:,.1f} | {b * 1000:,.0f} | "
                       f"{b * 1000:,.0f} | {b * 1000:,.0f} | - | - | - |")
    for n in r.get("notes", []):
        out.append(f"\nNote: {n}")
    out.append("")
out += ["memory: warpath `ClassifierStats::memory_bytes` (the image); rte_acl: DPDK heap growth "
        "across create + add + build (rules and tries). build peak: growth of the process's "
        "peak RSS during the build (rte_acl builds its tries with the C heap).", ""]
open(base + ".md", "w").write("\n".join(out))
print(f"bench-classify: wrote {base}.json and {base}.md")
PY
# The plot (Mpps, memory and build time of every engine and rte_acl, per set) beside them.
PY=python3
[[ -x .venv/bin/python ]] && PY=.venv/bin/python
latest=$(ls -t bench/results/classify-cpu-*.json | head -1)
$PY bench/plot_classify.py "$latest" || echo "bench-classify: no plot" >&2
exit $status
