#!/bin/bash
cd /work/main
for r in 1 2 3 4 5 6 7; do for w in small long http; do
  if [ $((r % 2)) -eq 0 ]; then order="1 0"; else order="0 1"; fi
  for ss in $order; do
    out=$(WARPATH_NIDS_SINGLE_SCAN=$ss WARPATH_DATA=/work/shared/data taskset -c 1 ./build/warpath-nids-bench --workload $w --repeat 3 2>&1)
    nids=$(echo "$out" | grep -E "^\| nids \|" | awk -F'|' '{print $3}')
    hs=$(echo "$out" | grep -E "^\| hs.block \|" | awk -F'|' '{print $3}')
    ratio=$(echo "$out" | grep -oE "nids / hs.block = [0-9.]+x" | grep -oE "[0-9.]+x")
    echo "$r $w $ss $nids $hs $ratio"
  done
done; done
echo done
