#!/usr/bin/env bash
# TCP flow tracking + reassembly, warpath beside libnids, one core, alternating per round:
#   [WORKLOADS="inorder small ..."] bench/stream/run_stream_bench.sh [BUILD_DIR] [CPU] [ROUNDS] > results.jsonl
# WORKLOADS defaults to the four (inorder small short reorder); small20 and small200 put
# the same packets over fewer flows (warpath-stream-bench's usage).
# Each line is one process's best of 5 runs, for every engine (libnids starts each run from a
# fresh nids_init). Run on a quiet machine: no build or test running.
# Where the build has warpath-stream-bench-nids-best (cmake -DWARPATH_LIBNIDS_BEST=libnids.a
# built -O3 -march=native: bench/README.md), its libnids runs too, as engine "libnids-best".
# flowstream is cpu.flowstream (tracking and reassembly in one pass) after the same parse.
# floor is warpath-stream-bench's yardstick (stream_floor.hpp): the least work the job allows.
set -euo pipefail
build=${1:-build}
cpu=${2:-1}
rounds=${3:-3}
workloads=${WORKLOADS:-inorder small short reorder}
bin="$build/warpath-stream-bench"
best="$build/warpath-stream-bench-nids-best"
for round in $(seq "$rounds"); do
  for workload in $workloads; do
    for engine in warpath flowstream libnids floor; do
      taskset -c "$cpu" "$bin" --workload "$workload" --engine "$engine" --repeat 5 --json |
        sed "s/^{/{\"round\": $round, /"
    done
    if [[ -x "$best" ]]; then
      taskset -c "$cpu" "$best" --workload "$workload" --engine libnids --repeat 5 --json |
        sed "s/^{/{\"round\": $round, /; s/\"engine\": \"libnids\"/\"engine\": \"libnids-best\"/"
    fi
  done
done
