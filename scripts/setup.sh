#!/usr/bin/env bash
# scripts/setup.sh: everything warpath needs on a fresh Debian 12 machine, idempotent.
#   - system packages (apt-get, when run as root and something is missing)
#   - the Python virtual environment .venv (pytest, numpy, matplotlib, nanobind: python/requirements.txt)
# `make demo` and `make test` call it through the .setup-done stamp, so it runs once per
# version of this file.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ pkg-config git xz-utils
  libpcap-dev libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev
  zlib1g-dev liblzma-dev
  libtomlplusplus-dev               # warpath run's TOML configuration
  libcpp-httplib-dev                # warpath run --metrics (Prometheus over HTTP)
  libxdp-dev libbpf-dev             # AF_XDP ports (warpath run --port NAME=afxdp:IFACE)
  iproute2 tcpreplay                # end-to-end tests over veth pairs in network namespaces
  clang libclang-rt-14-dev          # libFuzzer for the parser fuzz test
  python3 python3-venv python3-pip
  python3-dev                       # the Python package's extension (Python.h)
  tshark                            # optional truth for the capture golden files
  libdpdk-dev dpdk-dev              # optional anchors: rte_lpm/rte_fib (warpath bench lookup)
  libnids-dev                       # optional anchor: libnids beside warpath-stream-bench
  tcpflow                           # optional peer: `warpath reassemble` beside tcpflow (bytes and time)
  chromium                          # optional: the tests render `warpath report`'s page headless
  libvectorscan-dev                 # pattern matching: the cpu.hs engine and the anchor
  libpcre2-dev                      # pattern matching: cpu.pcre2 (back-references, look-around)
  libhtp-dev                        # NIDS: the HTTP app layer (OISF's libhtp, as Suricata)
  libldns-dev                       # NIDS: the DNS app layer
  libipsec-mb-dev                   # IPsec ESP: the cpu.esp engine and its anchor
  user-mode-linux kmod iputils-ping # IPsec ESP: the Linux kernel (in user-mode Linux) as the interop peer
  libssl-dev                        # IPsec ESP: the OpenSSL EVP reference engine
  openvswitch-switch openvswitch-common  # OpenFlow switch: OVS as the oracle (ofproto/trace), ovs-ofctl
  python3-os-ken                    # OpenFlow switch: a real controller (os-ken) in the tests
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # tshark asks whether non-root users may capture; the default answer (no) is fine.
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: run as root, or install them: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements.txt
echo "setup: done"
