#!/usr/bin/env bash
# Gathers what the GPU checks read from the data directory into .gpu-data/ (git ignores it), so
# that a GPU machine, which has no ../shared, gets it with the command (the device tool's
# `carry: [".gpu-data"]`; about 15 MB of its 64 MiB):
#   scripts/gpu-data.sh [OUT_DIR]        (default .gpu-data; reads $WARPATH_DATA or ../shared/data)
# The ClassBench rows need the WUSTL acl1/fw1/ipc1 10K sets and traces; the pattern rows ET
# Open's fast-pattern literals, ANMLZoo's dotstar trace and PowerEN's regexes and trace.
# scripts/gpu-check.sh reads $WARPATH_DATA, else .gpu-data/, else ../shared/data.
set -euo pipefail
data=${WARPATH_DATA:-../shared/data}
out=${1:-.gpu-data}
files=(
  classbench/wustl_5tuple/acl1_10K classbench/wustl_5tuple/acl1_10K_trace
  classbench/wustl_5tuple/fw1_10K classbench/wustl_5tuple/fw1_10K_trace
  classbench/wustl_5tuple/ipc1_10K classbench/wustl_5tuple/ipc1_10K_trace
  patterns/et-open/derived/et-open.mpm-literals.tsv
  patterns/anmlzoo/dotstar/backdoor_1MB.input
  patterns/anmlzoo/poweren/complx_01000_00123.1chip.regex
  patterns/anmlzoo/poweren/poweren_1MB.input
)
missing=0
for f in "${files[@]}"; do
  if [[ ! -f $data/$f ]]; then
    echo "gpu-data: $data/$f is missing" >&2
    missing=1
  fi
done
[[ $missing -eq 0 ]] || exit 1
for f in "${files[@]}"; do
  mkdir -p "$out/$(dirname "$f")"
  cp -f "$data/$f" "$out/$f"
  chmod u+w "$out/$f"
done
echo "gpu-data: ${#files[@]} files, $(du -sh "$out" | cut -f1) in $out" >&2
