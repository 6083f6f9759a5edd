#!/usr/bin/env bash
# scripts/bench-pipeline.sh: the forwarding pipeline's throughput and latency against batch
# size and delay bound (GSwitch Figures 9-10 style), warpath-pipeline-bench on built-in data
# (router+acl: 240K-route synthetic FIB, 1,000-rule ACL, generator -> null sink), for every
# offload policy this machine can run (cpu here; cpu, gpu and auto on a GPU machine).
#
# Writes bench/results/pipeline-<cpu|gpu>-<UTC date>-<commit>.json (the benchmark's report plus
# commit, machine and command), a .md table and a .png plot beside it. Extra arguments go to
# warpath-pipeline-bench (--duration S, --workers N, --engines ..., --quick).
# Run it on a quiet machine: the generator, the worker and the sink share its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET=${PRESET:-default}
if [[ -z ${BUILD_DIR:-} ]]; then
  case $PRESET in default) BUILD_DIR=build ;; *) BUILD_DIR=build-$PRESET ;; esac
  [[ -f $BUILD_DIR/build.ninja ]] || cmake --preset "$PRESET"
fi
cmake --build "$BUILD_DIR" --target warpath-pipeline-bench -j "${JOBS:-$(nproc)}"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$BUILD_DIR/warpath-pipeline-bench" "$@" >"$tmp"
commit=$(git rev-parse --short=12 HEAD)
kind=$(python3 -c 'import json,sys; print("gpu" if json.load(open(sys.argv[1]))["gpu"] else "cpu")' "$tmp")
out=bench/results/pipeline-$kind-$(date -u +%F)-$commit
mkdir -p bench/results
PY=python3
[[ -x .venv/bin/python ]] && PY=.venv/bin/python
$PY bench/plot_pipeline.py "$tmp" "$out" "$commit" "scripts/bench-pipeline.sh $*"
