#!/usr/bin/env bash
# A fuzzing campaign over every libFuzzer target of the build: each file reader of
# readers_fuzz.cpp, the packet parser and the stateful (defrag + reassembly) target, SECONDS
# each, one after another on one core, each from its seeds (make_seeds.py) and the corpus a
# previous campaign left in BUILD/fuzz/campaign/<target>/corpus. Prints a Markdown table row
# per target (runs, coverage, corpus, findings) for fuzz/README.md; crashes go to
# BUILD/fuzz/campaign/<target>/ as libFuzzer's crash-*/leak-*/timeout-* files.
#   fuzz/campaign.sh [SECONDS=240] [BUILD=build] [TARGET...]
set -euo pipefail
secs=${1:-240}
build=${2:-build}
shift $(( $# > 2 ? 2 : $# ))
here=$(cd "$(dirname "$0")" && pwd)
fz=$build/fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(classbench trace routes updates neighbors openflow chain toml pcap nidsrules sa http ofmsg
           parse stateful)
fi
echo "| target | seconds | inputs run | exec/s | coverage (cov / ft) | corpus (files) | findings |"
echo "|---|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
  dir=$fz/campaign/$t
  mkdir -p "$dir/corpus" "$dir/seeds"
  case $t in
    parse) bin=$fz/parse_fuzz.bin; extra=(-max_len=2048 "-dict=$here/parse.dict" "$dir/corpus"
                                          "$here/corpus") ;;
    stateful) bin=$fz/stateful_fuzz.bin; extra=(-max_len=4096 "$dir/corpus") ;;
    *) bin=$fz/readers_fuzz.bin
       python3 "$here/make_seeds.py" "$t" "$dir/seeds" >/dev/null
       extra=(-max_len=4096 "$dir/corpus" "$dir/seeds") ;;
  esac
  log=$dir/run.log
  set +e
  ASAN_OPTIONS=detect_leaks=1 WARPATH_FUZZ_READER=$t nice -n 10 "$bin" -max_total_time="$secs" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/" "${extra[@]}" \
    >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | sed 's/cov: \([0-9]*\) ft: \([0-9]*\)/\1 \/ \2/')
  files=$(ls "$dir/corpus" | wc -l)
  found=$(ls "$dir" | grep -c -E '^(crash|leak|timeout|oom|slow-unit)-' || true)
  what="none"
  [ "$rc" -ne 0 ] || [ "$found" -ne 0 ] && what="exit $rc, $found artifact(s) in $dir"
  echo "| $t | $secs | $runs | $eps | ${cov:-?} | $files | $what |"
done
