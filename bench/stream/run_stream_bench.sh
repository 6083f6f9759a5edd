#!/usr/bin/env bash
# TCP flow tracking + reassembly, warpath beside libnids, one core, alternating per round:
#   bench/stream/run_stream_bench.sh [BUILD_DIR] [CPU] [ROUNDS] > results.jsonl
# Each line is one process's best of 5 runs (warpath) or its single run (libnids keeps global
# state, so one run per process). Run on a quiet machine: no build or test running.
set -euo pipefail
build=${1:-build}
cpu=${2:-1}
rounds=${3:-3}
bin="$build/warpath-stream-bench"
for round in $(seq "$rounds"); do
  for workload in inorder small short reorder; do
    for engine in warpath libnids; do
      taskset -c "$cpu" "$bin" --workload "$workload" --engine "$engine" --repeat 5 --json |
        sed "s/^{/{\"round\": $round, /"
    done
  done
done
