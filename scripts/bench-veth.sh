#!/usr/bin/env bash
# scripts/bench-veth.sh: `warpath run` forwarding over veth (AF_PACKET and AF_XDP), throughput
# against the maximum batch and RX-to-TX latency against the delay bound (GSwitch Figures 9-10
# style), for every offload policy this machine can run (cpu here; cpu, gpu and auto when
# `warpath info --json` reports a CUDA device). The generator-source twin of this benchmark is
# scripts/bench-pipeline.sh.
#
#   [source: warpath run --app acl, gen:RATE -> afpacket:srcA]  srcA <--veth--> wA  [DUT port a]
#   [DUT: warpath run --app router+acl, everything routed to port b]  wB <--veth--> dstB  (kernel
#   drops what arrives: no address, IPv6 off, foreign destination MAC)
#
# One network namespace (deleted on exit, also on errors and Ctrl-C) holds both veth pairs; no
# interface has an address and IPv6 is off, so the kernel puts nothing of its own on the wires
# (as tests/cli/test_run_netns.py does). Needs root.
#
# Writes bench/results/veth-<cpu|gpu>-<UTC date>-<commit>.json (every point: the DUT's report
# essentials, the source's counters, the veth counters, the checks; commit, machine, command), a
# .md table and a .png plot (with matplotlib from .venv) beside it. Extra arguments go to
# bench/veth_bench.py (--duration S, --kinds afpacket,afxdp, --engines cpu,gpu,auto,
# --delay-rate PPS, --quick; see its --help). Run it on a quiet machine: the source and the DUT
# share its cores (bench/veth_bench.py pins them apart; see its docstring).
#
# Environment: PRESET (CMake preset, default "default"), BUILD_DIR (build directory; default the
# preset's), JOBS (build parallelism), COMMIT (overrides `git rev-parse --short=12 HEAD`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then
  echo "bench-veth.sh: needs root (network namespace, veth, AF_PACKET and AF_XDP)" >&2
  exit 1
fi
for tool in ip sysctl taskset; do
  command -v "$tool" >/dev/null || { echo "bench-veth.sh: '$tool' is not installed" >&2; exit 1; }
done
PRESET=${PRESET:-default}
if [[ -z ${BUILD_DIR:-} ]]; then
  case $PRESET in default) BUILD_DIR=build ;; *) BUILD_DIR=build-$PRESET ;; esac
  [[ -f $BUILD_DIR/build.ninja ]] || cmake --preset "$PRESET"
fi
cmake --build "$BUILD_DIR" --target warpath -j "${JOBS:-$(nproc)}"
BIN=$(realpath "$BUILD_DIR/warpath")
commit=${COMMIT:-$(git rev-parse --short=12 HEAD)}

NS=wpveth$$
tmp=$(mktemp -d)
cleanup() {
  # Deleting the namespace destroys the veth pairs in it (and detaches any XDP program).
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$NS"
# New interfaces in the namespace start with IPv6 off (no link-local address, no DAD, no MLD).
ip netns exec "$NS" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
# One queue each way: one RX queue for the DUT's single worker (and AF_XDP queue 0).
for pair in srcA:wA wB:dstB; do
  ip -n "$NS" link add "${pair%%:*}" numtxqueues 1 numrxqueues 1 type veth \
    peer name "${pair#*:}" numtxqueues 1 numrxqueues 1
done
for pair in srcA=02:aa:00:00:00:0a wA=02:aa:00:00:00:1a \
  wB=02:aa:00:00:00:1b dstB=02:aa:00:00:00:0b; do
  ifname=${pair%%=*}
  ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$ifname.disable_ipv6=1" || true
  ip -n "$NS" link set dev "$ifname" address "${pair#*=}"
  ip -n "$NS" link set dev "$ifname" up
done
ip -n "$NS" link set dev lo up

PY=python3
[[ -x .venv/bin/python ]] && PY=.venv/bin/python
mkdir -p bench/results
$PY bench/veth_bench.py --warpath "$BIN" --ns "$NS" --work "$tmp" --commit "$commit" \
  --results bench/results --command "scripts/bench-veth.sh${*:+ $*}" "$@"
