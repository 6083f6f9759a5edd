#!/usr/bin/env bash
# scripts/gpu-check.sh: the GPU checks, on a machine with an NVIDIA GPU and only the CUDA
# toolkit, CMake, ninja and Python (no Debian packages).
#
#   scripts/gpu-check.sh [STAGE...]      stages: versions build selftest bench pipeline e2e
#                                        (default: all of them, in that order)
#
# Each stage runs under its own `timeout` and writes its own file, so one call can run them all
# within a 10-minute command and a run cut short still tells what it reached:
#   versions  nvidia-smi, driver, nvcc and CMake versions      -> <stamp>-versions.txt
#   build     the dependency-free "gpu" preset (sm_90)         -> <stamp>-build.log
#   selftest  every CUDA engine against its CPU reference, each in its own process
#                                                  -> <stamp>-selftest-<engine>.json/.log/.exit
#             (one line per engine printed as it completes)
#   bench     warpath-gpu-bench                                 -> <stamp>-bench.json
#   pipeline  warpath-pipeline-bench, cpu / gpu / auto offload   -> <stamp>-pipeline.json
#   e2e       warpath-pipeline-bench --sweep: Mpps against workers per chain and traffic, every
#             engine beside cpu at each worker count, 3 rounds  -> <stamp>-e2e.json (.log: each
#             point as it ends, which the gathered JSON falls back to when the stage was cut short)
# and, at the end, one JSON file gathering whatever the stages wrote:
#   ${OUT:-bench/results}/gpu-check-<stamp>.json
# Stage limits (seconds) can be changed: GPU_CHECK_BUILD_S, _SELFTEST_S (the whole self-test
# stage: a job started late gets only what is left), _SELFTEST_JOB_S (one engine's check),
# _BENCH_S, _PIPELINE_S, _E2E_S; GPU_CHECK_PIPELINE_ARGS (default "--duration 1 --workers 4")
# and GPU_CHECK_E2E_ARGS (default "--sweep 3 --duration 0.5") are the pipeline bench's arguments
# in those stages.
# GPU_CHECK_BIN (default build-gpu) names the folder the stages run the programs from: one built
# elsewhere and carried (`cmake --preset gpu` on a machine of the same architecture, then leave
# out the build stage) saves the GPU machine the build's minutes. GPU_CHECK_BENCH_ARGS are
# passed to warpath-gpu-bench (e.g. "--repeat 5" or "--only esp,stream").
# Exit status: non-zero if any stage that ran failed or timed out (124).
set -uo pipefail
cd "$(dirname "$0")/.."
out_dir=${OUT:-bench/results}
mkdir -p "$out_dir"
stamp=${GPU_CHECK_STAMP:-$(date -u +%Y%m%dT%H%M%SZ)}
base="$out_dir/gpu-check-$stamp"
stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(versions build selftest bench pipeline e2e)
declare -A rc=()
bin=${GPU_CHECK_BIN:-build-gpu}
[[ $bin == /* ]] || bin=./$bin
# The PCRE2 that scripts/gpu-data.sh fetched, for programs built against it (WARPATH_PCRE2_ROOT).
if [[ -d .gpu-data/pcre2/usr/lib/x86_64-linux-gnu ]]; then
  export LD_LIBRARY_PATH="$PWD/.gpu-data/pcre2/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# ClassBench sets (bench's classification rows, e2e's acl1_10K): $WARPATH_DATA, else a carried
# copy in .gpu-data/ (GPU machines have no ../shared: docs/gpu.md), else ../shared/data.
data=${WARPATH_DATA:-}
if [[ -z $data ]]; then
  if [[ -d .gpu-data ]]; then data=.gpu-data; else data=../shared/data; fi
fi

want() { local s; for s in "${stages[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }
for s in "${stages[@]}"; do
  case $s in versions|build|selftest|bench|pipeline|e2e) ;; *)
    echo "gpu-check: unknown stage '$s' (stages: versions build selftest bench pipeline e2e)" >&2; exit 2;;
  esac
done
stage() {  # stage NAME: prints a header with the time
  echo "gpu-check: == $1 ($(date -u +%H:%M:%S))" >&2
}

if want versions; then
  stage versions
  {
    echo "== nvidia-smi"; timeout 30 nvidia-smi 2>&1 || true
    echo "== gpu"; timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true
    echo "== nvcc"; nvcc --version 2>&1 || true
    echo "== cmake"; cmake --version 2>&1 | head -1 || true
    echo "== ninja"; ninja --version 2>&1 || true
    echo "== cpu"; nproc; grep -m1 'model name' /proc/cpuinfo || true
    echo "== commit"; git rev-parse HEAD 2>/dev/null || echo unknown
  } > "$base-versions.txt" 2>&1
  rc[versions]=0
  cat "$base-versions.txt" >&2
fi

if want build; then
  stage build
  # PCRE2 for the NIDS (cuda.nids): the packages scripts/gpu-data.sh fetched, unpacked here.
  pcre2=()
  if compgen -G ".gpu-data/debs/libpcre2-*.deb" > /dev/null; then
    rm -rf .gpu-data/pcre2 && mkdir -p .gpu-data/pcre2
    for deb in .gpu-data/debs/libpcre2-*.deb; do dpkg -x "$deb" .gpu-data/pcre2; done
    pcre2=(-DWARPATH_PCRE2_ROOT="$PWD/.gpu-data/pcre2")
  fi
  { cmake --preset gpu "${pcre2[@]}" && timeout "${GPU_CHECK_BUILD_S:-480}" cmake --build build-gpu -j "$(nproc)"; } \
    > "$base-build.log" 2>&1
  rc[build]=$?
  if [[ ${rc[build]} -ne 0 ]]; then
    echo "gpu-check: build failed (exit ${rc[build]}); the end of $base-build.log:" >&2
    tail -30 "$base-build.log" >&2
  fi
fi

if want selftest; then
  stage selftest
  # Every CUDA engine against its CPU reference, 1M items asked (the small burst sizes run over
  # a bounded prefix, the full size once; some modules' checks size themselves), each engine in
  # its own process (one engine's crash or sticky CUDA error cannot hide the others),
  # GPU_CHECK_JOBS (default 4) at a time, none past the stage's deadline; then cuda.tuple/bloom
  # again with their global-memory kernels (tables too big for shared memory: rare, so forced).
  # One line per engine as it completes; each job's exit status in <stamp>-selftest-<job>.exit.
  # The gpu preset's warpath-selftest, else the full build's `warpath selftest` (the bundle of
  # scripts/gpu-bundle.sh): the same options.
  if [[ -x $bin/warpath-selftest ]]; then selftest_cmd="$bin/warpath-selftest"; else selftest_cmd="$bin/warpath selftest"; fi
  jobs=()
  # shellcheck disable=SC2086  # the command is words
  while read -r e; do jobs+=("$e"); done < <($selftest_cmd --list)
  jobs+=("global:cuda.tuple" "global:cuda.bloom")
  echo "gpu-check: ${#jobs[@]} self-test jobs: ${jobs[*]}" >&2
  selftest_one() {  # selftest_one [global:]ENGINE
    local job=$1 engine=${1#global:} items=1000000 envs=()
    if [[ $job == global:* ]]; then items=100000; envs=(WARPATH_CUDA_TUPLE_SHARED_LIMIT=0); fi
    local name=${job//:/-} code
    local left=$((deadline - $(date +%s))) limit=${GPU_CHECK_SELFTEST_JOB_S:-240}
    if ((left <= 0)); then
      echo "[$job] not run: the stage's time is spent" >&2
      echo 124 > "$base-selftest-$name.exit"
      return 124
    fi
    ((limit > left)) && limit=$left
    # shellcheck disable=SC2086
    env "${envs[@]}" timeout "$limit" $selftest_cmd \
      --require-gpu --items $items --engine "$engine" --exact \
      --json "$base-selftest-$name.json" > "$base-selftest-$name.log" 2>&1
    code=$?
    echo $code > "$base-selftest-$name.exit"
    grep -E "^  (PASS|FAIL|SKIP)" "$base-selftest-$name.log" | sed "s/^/[$job] /" >&2
    # 1 is a failed check (its line above); anything else a crash or the time limit.
    [[ $code -le 1 ]] || { echo "[$job] exit $code; the end of its log:" >&2; tail -5 "$base-selftest-$name.log" >&2; }
    return $code
  }
  export -f selftest_one
  deadline=$(($(date +%s) + ${GPU_CHECK_SELFTEST_S:-300}))
  export bin base deadline selftest_cmd
  printf '%s\n' "${jobs[@]}" | xargs -P "${GPU_CHECK_JOBS:-4}" -I{} bash -c 'selftest_one "$1"' _ {}
  rc[selftest]=$?
fi

if want bench; then
  stage bench
  # ClassBench sets for the classification rows: $WARPATH_DATA, else a carried copy in
  # .gpu-data/ (GPU machines have no ../shared: README "GPU checks"), else ../shared/data.
  timeout "${GPU_CHECK_BENCH_S:-240}" "$bin/warpath-gpu-bench" --data "$data" ${GPU_CHECK_BENCH_ARGS:-} \
    > "$base-bench.json" 2> >(tee "$base-bench.log" >&2)
  rc[bench]=$?
fi

if want pipeline; then
  stage pipeline
  # The pipeline (warpath run's engine) with cpu, gpu and auto offload: throughput vs batch
  # size, latency vs delay bound, on built-in data (generator -> router+acl -> null).
  # shellcheck disable=SC2086  # the arguments are words
  timeout "${GPU_CHECK_PIPELINE_S:-150}" "$bin/warpath-pipeline-bench" --engines cpu,gpu,auto \
    ${GPU_CHECK_PIPELINE_ARGS:---duration 1 --workers 4} > "$base-pipeline.json" \
    2> >(tee "$base-pipeline.log" >&2)
  rc[pipeline]=$?
fi

if want e2e; then
  stage e2e
  # Issue 60's sweep: Mpps against workers (1 .. cores-2) for router+acl over IPv4 64 B and
  # IMIX, the router over IPv6 64 B and the acl app over acl1_10K, cpu / gpu / auto at each
  # worker count in the same round; a table of the medians and ratios to cpu closes its log.
  # shellcheck disable=SC2086
  timeout "${GPU_CHECK_E2E_S:-300}" "$bin/warpath-pipeline-bench" --engines cpu,gpu,auto \
    ${GPU_CHECK_E2E_ARGS:---sweep 3 --duration 0.5} --data "$data" > "$base-e2e.json" \
    2> >(tee "$base-e2e.log" >&2)
  rc[e2e]=$?
fi

codes=""
for s in "${!rc[@]}"; do codes+="$s=${rc[$s]} "; done
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
python3 - "$base" "$commit" "$codes" <<'PY'
import glob, json, sys, platform, subprocess, os
base, commit, codes = sys.argv[1:]
exits = dict(kv.split("=") for kv in codes.split())
def load(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    try:
        return json.load(open(path))
    except Exception as e:
        return {"error": f"{path}: {e}"}
def partial_e2e(log):
    # A sweep cut short wrote no JSON: its points as the log has them, one a line.
    if not os.path.exists(log):
        return None
    # (The harness's rows, bench/harness/report.hpp's row_line; before, "points" of their own.)
    rows = []
    for line in open(log):
        if line.lstrip().startswith('{"workload": ') and '"sweep": "workers"' in line:
            try:
                rows.append(json.loads(line.strip()))
            except ValueError:
                pass
    return {"bench": "pipeline-sweep", "partial": True, "results": rows}
try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                          "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip()
except (OSError, subprocess.SubprocessError):
    smi = ""
doc = {"commit": commit, "host": platform.node(), "gpu": smi, "command": "scripts/gpu-check.sh",
       "exits": {k: int(v) for k, v in exits.items()},
       # Per job: its exit status (124: the time limit; none: never started) and its report
       # (none when it crashed before writing one).
       "selftest": {p[len(base) + len("-selftest-"):-len(".exit")]: {
                        "exit": int(open(p).read().strip() or -1),
                        "report": load(p[:-len(".exit")] + ".json")}
                    for p in sorted(glob.glob(base + "-selftest-*.exit"))},
       "bench": load(base + "-bench.json"),
       "pipeline": load(base + "-pipeline.json"),
       "e2e": load(base + "-e2e.json") or partial_e2e(base + "-e2e.log")}
json.dump(doc, open(base + ".json", "w"), indent=2)
print(f"gpu-check: wrote {base}.json (exits: {doc['exits']})", file=sys.stderr)
PY
for s in "${!rc[@]}"; do [[ ${rc[$s]} -eq 0 ]] || exit 1; done
exit 0
