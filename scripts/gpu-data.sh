#!/usr/bin/env bash
# Gathers what the GPU checks read from the data directory into .gpu-data/ (git ignores it), so
# that a GPU machine, which has no ../shared, gets it with the command (the device tool's
# `carry: [".gpu-data"]`; about 15 MB of its 64 MiB):
#   scripts/gpu-data.sh [OUT_DIR]        (default .gpu-data; reads $WARPATH_DATA or ../shared/data)
# The ClassBench rows need the WUSTL acl1/fw1/ipc1 10K sets and traces; the pattern rows ET
# Open's fast-pattern literals, ANMLZoo's dotstar trace and PowerEN's regexes and trace; the
# NIDS rows ET Open's rules. It also fetches Debian's libpcre2-dev and libpcre2-8-0 packages
# into OUT_DIR/debs (best effort: without them the GPU build has no NIDS, so no cuda.nids):
# scripts/gpu-check.sh unpacks them there and builds against them (WARPATH_PCRE2_ROOT).
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
dirs=(patterns/et-open/rules)
missing=0
for f in "${files[@]}"; do
  if [[ ! -f $data/$f ]]; then
    echo "gpu-data: $data/$f is missing" >&2
    missing=1
  fi
done
for d in "${dirs[@]}"; do
  if [[ ! -d $data/$d ]]; then
    echo "gpu-data: $data/$d is missing" >&2
    missing=1
  fi
done
[[ $missing -eq 0 ]] || exit 1
for f in "${files[@]}"; do
  mkdir -p "$out/$(dirname "$f")"
  cp -f "$data/$f" "$out/$f"
  chmod u+w "$out/$f"
done
for d in "${dirs[@]}"; do
  mkdir -p "$out/$d"
  cp -f "$data/$d"/* "$out/$d/"
  chmod -R u+w "$out/$d"
done
mkdir -p "$out/debs"
if ! (cd "$out/debs" && apt-get download libpcre2-dev libpcre2-8-0 >/dev/null 2>&1); then
  echo "gpu-data: warning: could not fetch libpcre2-dev and libpcre2-8-0: the GPU build will have no NIDS" >&2
fi
echo "gpu-data: ${#files[@]} files and ${#dirs[@]} folders, $(du -sh "$out" | cut -f1) in $out" >&2
