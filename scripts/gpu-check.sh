#!/usr/bin/env bash
# scripts/gpu-check.sh: the GPU checks, on a machine with an NVIDIA GPU and only the CUDA
# toolkit, CMake, ninja and Python (no Debian packages). Builds the "gpu" preset (sm_90,
# dependency-free), runs the self-test (every CUDA engine against its CPU reference on fresh
# random data) and the GPU benchmarks, and writes one JSON file:
#   ${OUT:-bench/results}/gpu-check-<utc time>.json
# Fits in a 10-minute run. Exit status: non-zero if the build or any engine fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${OUT:-bench/results}
mkdir -p "$out_dir"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
result="$out_dir/gpu-check-$stamp.json"
log="$out_dir/gpu-check-$stamp.log"

{
  echo "== nvidia-smi"; nvidia-smi || true
  echo "== build"
  cmake --preset gpu
  cmake --build build-gpu -j "$(nproc)"
} >"$log" 2>&1 || { echo "gpu-check: build failed; see $log" >&2; tail -30 "$log" >&2; exit 1; }

selftest_rc=0
./build-gpu/warpath-selftest --require-gpu --items 1000000 --json "$out_dir/selftest.tmp.json" | tee -a "$log" || selftest_rc=$?
# ClassBench sets for the classification rows: $WARPATH_DATA, else a carried copy in .gpu-data/
# (GPU machines have no ../shared: README "GPU checks"), else ../shared/data.
data=${WARPATH_DATA:-}
if [[ -z $data ]]; then
  if [[ -d .gpu-data ]]; then data=.gpu-data; else data=../shared/data; fi
fi
bench_rc=0
./build-gpu/warpath-gpu-bench --data "$data" > "$out_dir/bench.tmp.json" 2>>"$log" || bench_rc=$?
# The pipeline (warpath run's engine) with cpu, gpu and auto offload: throughput vs batch size,
# latency vs delay bound, on built-in data (generator -> router+acl -> null).
pipeline_rc=0
./build-gpu/warpath-pipeline-bench --engines cpu,gpu,auto --duration 1 --workers 4 \
  > "$out_dir/pipeline.tmp.json" 2>>"$log" || pipeline_rc=$?

commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
python3 - "$out_dir/selftest.tmp.json" "$out_dir/bench.tmp.json" "$result" "$commit" "$selftest_rc" "$bench_rc" "$out_dir/pipeline.tmp.json" "$pipeline_rc" <<'PY'
import json, sys, platform, subprocess
selftest_path, bench_path, result_path, commit, st_rc, b_rc, pipeline_path, p_rc = sys.argv[1:]
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"error": str(e)}
try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except OSError:
    smi = ""
doc = {"commit": commit, "host": platform.node(), "gpu": smi,
       "command": "scripts/gpu-check.sh", "selftest_exit": int(st_rc), "bench_exit": int(b_rc),
       "pipeline_exit": int(p_rc),
       "selftest": load(selftest_path), "bench": load(bench_path), "pipeline": load(pipeline_path)}
json.dump(doc, open(result_path, "w"), indent=2)
print(f"gpu-check: wrote {result_path}")
PY
rm -f "$out_dir/selftest.tmp.json" "$out_dir/bench.tmp.json" "$out_dir/pipeline.tmp.json"
[[ $selftest_rc -eq 0 && $bench_rc -eq 0 && $pipeline_rc -eq 0 ]]
