#!/usr/bin/env bash
# scripts/bench-lookup.sh: the standard IP lookup benchmark (`warpath bench lookup`).
#
# Builds warpath (preset $PRESET, default `default`; or an existing build in $BUILD_DIR) and runs
# every lookup engine beside DPDK's rte_lpm / rte_lpm6 / rte_fib / rte_fib6 on:
#   IPv4  routing/ipv4_fulltable_2024-03_iprbench.txt.xz      (901,899 prefixes)
#   IPv6  routing/ipv6_fulltable_2024-03_iprbench.txt.xz      (160,147 prefixes)
#   IPv6  routing/ipv6_routeviews_2021-01_as19653_nh.txt.xz   (105,957 prefixes, real next hops)
# from $WARPATH_DATA (default ../shared/data), with the default addresses (2M IPv4 / 1M IPv6,
# half uniform, half inside the table's prefixes, seed 1), pinned to $CPU (default: current).
# Writes bench/results/lookup-cpu-<UTC date>-<commit>.json (every run's full report) and a
# .md summary beside it (bench/lookup_report.py: ratios to each family's best DPDK variant,
# best pass and paired). Extra arguments go to every run, e.g. --repeat 3 --note "idle machine".
# DPDK runs on 2 MB hugepages when a hugetlbfs is mounted and enough are free (`echo 1024 >
# /proc/sys/vm/nr_hugepages`), as it runs at its best; else on 4 KB pages, with a hint.
# rte_lpm's build of the IPv4 table takes about 2 minutes (DPDK scans its rule array on each add).
set -euo pipefail
cd "$(dirname "$0")/.."

PRESET=${PRESET:-default}
DATA=${WARPATH_DATA:-../shared/data}
if [[ -z ${BUILD_DIR:-} ]]; then
  case $PRESET in default) BUILD_DIR=build ;; *) BUILD_DIR=build-$PRESET ;; esac
  [[ -f $BUILD_DIR/build.ninja ]] || cmake --preset "$PRESET"
fi
cmake --build "$BUILD_DIR" --target warpath -j "${JOBS:-$(nproc)}"
WARPATH=$BUILD_DIR/warpath

TABLES=(
  routing/ipv4_fulltable_2024-03_iprbench.txt.xz
  routing/ipv6_fulltable_2024-03_iprbench.txt.xz
  routing/ipv6_routeviews_2021-01_as19653_nh.txt.xz
)
cpu_args=()
[[ -n ${CPU:-} ]] && cpu_args=(--cpu "$CPU")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
i=0
for t in "${TABLES[@]}"; do
  f=$DATA/$t
  if [[ ! -f $f ]]; then
    echo "bench-lookup: $f not found (set WARPATH_DATA)" >&2
    exit 1
  fi
  i=$((i + 1))
  echo "bench-lookup: $t" >&2
  "$WARPATH" bench lookup --fib "$f" "${cpu_args[@]}" --json "$tmp/run$i.json" "$@" || status=1
done

mkdir -p bench/results
python3 bench/lookup_report.py "$tmp" "$status"
exit $status
