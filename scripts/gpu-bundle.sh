#!/usr/bin/env bash
# scripts/gpu-bundle.sh: the full build's programs and the shared libraries they link, for a
# GPU machine that has none of Debian's packages (the device tool's machines: CUDA, Python and
# little else). The `gpu` preset's programs need nothing but there is no `warpath` CLI among
# them, so `warpath run` with ESP or the NIDS, `warpath selftest` and `warpath bench` cannot run
# there; this carries the default preset's instead.
#
#   scripts/gpu-bundle.sh [BUILD_DIR [OUT]]     (default: build, .gpu-data/bundle.tar.xz)
#
# Strips warpath, warpath-pipeline-bench, warpath-gpu-bench and warpath-esp-bench (those that
# were built), copies every library `ldd` names except the C runtime's own (libc, libm,
# libgcc_s, libstdc++, the loader: the GPU machine's newer ones serve), and packs them as
# bin/ and lib/ in one xz tarball (about 25 MB; the device tool carries 64 MiB). On the GPU
# machine, with Python's tarfile (no xz tool needed there):
#   python3 -c "import tarfile; tarfile.open('.gpu-data/bundle.tar.xz').extractall('/tmp/wp')"
#   LD_LIBRARY_PATH=/tmp/wp/lib /tmp/wp/bin/warpath selftest --require-gpu
# DPDK's drivers are libraries `ldd` lists only where they are linked (net_null is not): the
# dpdk: ports that need a dlopen'ed driver do not run from the bundle; gen, null and pcap do.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.gpu-data/bundle.tar.xz}
[[ -x $build/warpath ]] || { echo "gpu-bundle: $build/warpath not built (make build)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for p in warpath warpath-pipeline-bench warpath-gpu-bench warpath-esp-bench; do
  [[ -x $build/$p ]] || continue
  strip -o "$stage/bin/$p" "$build/$p"
  if ldd "$build/$p" | grep -q 'not found'; then
    echo "gpu-bundle: $build/$p links libraries this machine lacks:" >&2
    ldd "$build/$p" | grep 'not found' >&2
    exit 1
  fi
  ldd "$build/$p" | awk '$3 ~ /^\// {print $3}' >> "$stage/libs"
done
sort -u "$stage/libs" | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libgcc_s.so.*|libstdc++.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
rm "$stage/libs"
git rev-parse HEAD > "$stage/commit" 2>/dev/null || echo unknown > "$stage/commit"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - bin lib commit | xz -T0 -6 > "$out"
echo "gpu-bundle: $(ls "$stage/bin" | wc -l) programs, $(ls "$stage/lib" | wc -l) libraries," \
     "$(du -h "$out" | cut -f1) in $out (commit $(cat "$stage/commit"))" >&2
