#!/usr/bin/env bash
# scripts/gpu-e2e-cli.sh: on a GPU machine, what the gpu preset cannot run, from the bundle
# scripts/gpu-bundle.sh made (the default preset's `warpath` and its libraries):
#   selftest  `warpath selftest --require-gpu` (every engine, CUDA ones against their CPU
#             references; --items GPU_E2E_SELFTEST_ITEMS, default 100000)
#   esp       ESP through `warpath run`: esp-out -> wire (examples/ipsec/sa.toml, AES-128-GCM) over
#             1,518-byte generated frames -> null, cpu and gpu policy at each worker count in
#             the same round (GPU_E2E_WORKERS, default "1 4 8 14"; GPU_E2E_ROUNDS, default 2)
#   sweep     warpath-pipeline-bench --sweep (router+acl IPv4 64 B and IMIX, IPv6 router, acl1_10K)
#   depth     the asynchronous master against one launch a lane at a time: the sweep's
#             router+acl IPv4 64 B case, gpu policy, --offload-depth 1 then 4
#             (GPU_E2E_DEPTHS), workers GPU_E2E_DEPTH_WORKERS (default 4,12), 3 rounds each
# Writes $OUT (default bench/results)/gpu-e2e-<stamp>-*.json and a summary table on stdout.
#
#   scripts/gpu-e2e-cli.sh [STAGE...]     (default: selftest esp sweep depth)
# GPU_E2E_BUNDLE (default .gpu-data/bundle.tar.xz) is unpacked into /tmp/wp unless
# GPU_E2E_BIN names a folder of programs already there (this machine's build/, to try it
# without a GPU: GPU_E2E_BIN=build GPU_E2E_ENGINES=cpu). Stage limits: GPU_E2E_<STAGE>_S.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp=${GPU_E2E_STAMP:-$(date -u +%Y%m%dT%H%M%SZ)}
base="$out/gpu-e2e-$stamp"
stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(selftest esp sweep depth)
engines=${GPU_E2E_ENGINES:-cpu gpu}
data=${WARPATH_DATA:-.gpu-data}
bin=${GPU_E2E_BIN:-}
if [[ -z $bin ]]; then
  python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall('/tmp/wp')" \
    "${GPU_E2E_BUNDLE:-.gpu-data/bundle.tar.xz}" || exit 1
  bin=/tmp/wp/bin
  export LD_LIBRARY_PATH=/tmp/wp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "gpu-e2e: bundle of commit $(cat /tmp/wp/commit)" >&2
fi
[[ $bin == /* ]] || bin=$PWD/$bin
rc=0
want() { local s; for s in "${stages[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }

if want selftest; then
  echo "gpu-e2e: == selftest ($(date -u +%T))" >&2
  timeout "${GPU_E2E_SELFTEST_S:-240}" "$bin/warpath" selftest --require-gpu \
    --items "${GPU_E2E_SELFTEST_ITEMS:-100000}" --json "$base-selftest.json" > "$base-selftest.log" 2>&1
  code=$?
  grep -E "^  (FAIL|SKIP)|passed, " "$base-selftest.log"
  [[ $code -eq 0 ]] || { echo "gpu-e2e: selftest exit $code" >&2; rc=1; }
fi

if want esp; then
  echo "gpu-e2e: == esp ($(date -u +%T))" >&2
  deadline=$(($(date +%s) + ${GPU_E2E_ESP_S:-200}))
  for round in $(seq "${GPU_E2E_ROUNDS:-2}"); do
    for w in ${GPU_E2E_WORKERS:-1 4 8 14}; do
      for e in $engines; do
        (($(date +%s) < deadline)) || { echo "gpu-e2e: esp: the stage's time is spent" >&2; rc=1; break 3; }
        j="$base-esp-$e-w$w-r$round.json"
        (cd examples && timeout 60 "$bin/warpath" run --chain "esp-out(sa=ipsec/sa.toml) -> wire" \
          --port gen=gen:max --port sink=null --gen-profile ipv4+udp+max --workers "$w" \
          --batch 1024 --duration 2 --engine "$e" --json "$j" > /dev/null 2>&1) ||
          { echo "gpu-e2e: esp $e $w workers failed" >&2; rc=1; }
      done
    done
  done
  python3 - "$base" <<'PY'
import glob, json, re, sys
rows = {}
for p in sorted(glob.glob(sys.argv[1] + "-esp-*.json")):
    m = re.search(r"-esp-(\w+)-w(\d+)-r(\d+)\.json$", p)
    try:
        d = json.load(open(p))
    except ValueError:  # a run cut short by its limit
        print(f"  {p}: no report", file=sys.stderr)
        continue
    rows.setdefault((int(m[2]), m[1]), []).append((d["mpps"], d["gbps"]))
print("esp-out (AES-128-GCM, 1,518-byte frames), Mpps / Gbit/s in, each round")
for (w, e), v in sorted(rows.items()):
    print(f"  {w:3d} workers {e:4s} " + "  ".join(f"{m:7.2f} / {g:7.1f}" for m, g in v))
PY
fi

if want sweep; then
  echo "gpu-e2e: == sweep ($(date -u +%T))" >&2
  # shellcheck disable=SC2086
  sweep_engines=${engines// /,}
  [[ $sweep_engines == *gpu* ]] && sweep_engines+=",auto"
  timeout "${GPU_E2E_SWEEP_S:-240}" "$bin/warpath-pipeline-bench" --engines "$sweep_engines" \
    ${GPU_E2E_SWEEP_ARGS:---sweep 2 --duration 0.5 --workers-list 1,8,14} --data "$data" \
    > "$base-sweep.json" 2> "$base-sweep.log"
  code=$?
  sed -n '/^chain /,$p' "$base-sweep.log"
  [[ $code -eq 0 ]] || { echo "gpu-e2e: sweep exit $code" >&2; rc=1; }
fi

if want depth; then
  for d in ${GPU_E2E_DEPTHS:-1 4}; do
    echo "gpu-e2e: == depth $d ($(date -u +%T))" >&2
    timeout "${GPU_E2E_DEPTH_S:-120}" "$bin/warpath-pipeline-bench" --engines gpu \
      --offload-depth "$d" --sweep 3 --duration 0.5 \
      --workers-list "${GPU_E2E_DEPTH_WORKERS:-4,12}" --cases router+acl:ipv4+min \
      > "$base-depth$d.json" 2> "$base-depth$d.log"
    code=$?
    echo "offload depth $d:"
    sed -n '/^chain /,$p' "$base-depth$d.log"
    [[ $code -eq 0 ]] || { echo "gpu-e2e: depth $d exit $code" >&2; rc=1; }
  done
fi
exit $rc
