"""`warpath run` over DPDK ports (dpdk:VDEV[,ARGS], src/runtime/system/dpdk_port.cpp).

A router run whose ports are DPDK net_pcap virtual devices (the input port reads the capture
through rx_pcap, every port writes through tx_pcap) must write, per output port, exactly the
packets `warpath route` writes for the same capture and FIB, as the pcap-to-pcap run of
test_run.py does (its helpers are reused), and end by itself when the capture is read: with
zero copy (the default: frames hold the received mbufs and send them), with --copy, and with
frames offloaded (the CPU offload device: they copy their packets into their own cells). Bad
dpdk specs are usage errors whatever the build.

Skips (with the reason) when `warpath info --json` says the build has no DPDK ports or the run
answers that DPDK ports are not built or that DPDK's EAL cannot start here.
Environment: WARPATH_BIN (default <repo>/build/warpath); the module skips without it.
"""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_run as tr  # noqa: E402  (skips this module too when there is no binary)

NOT_HERE = ("dpdk ports need DPDK", "DPDK EAL did not start")


def skip_without_dpdk_ports():
    r = tr.assert_ok(tr.run("info", "--json"))
    build = json.loads(r.stdout).get("build", {})
    if build.get("dpdk_ports") is False:
        pytest.skip("warpath info: built without DPDK ports")


def run_dpdk_router(d, pcap, *extra):
    """The router of test_run.run_router with DPDK net_pcap ports: (process, report)."""
    skip_without_dpdk_ports()
    ports = ["--port", f"p0=dpdk:net_pcap0,rx_pcap={pcap},tx_pcap={d / 'o0.pcap'}"]
    for p in (1, 2, 3):
        ports += ["--port", f"p{p}=dpdk:net_pcap{p},tx_pcap={d / f'o{p}.pcap'}"]
    out = d / "run.json"
    r = tr.run("run", "--app", "router", "--fib", d / "fib.txt", "--neighbors", d / "n.txt",
               "--slow-path", d / "slow.pcap", "--no-progress", *ports, *extra, "--json", out,
               timeout=60)
    tr.assert_no_crash(r)
    for why in NOT_HERE:
        if r.returncode != 0 and why in r.stderr:
            pytest.skip(r.stderr.strip().splitlines()[-1])
    tr.assert_ok(r)
    j = json.loads(out.read_text())
    tr.check_report(j)
    return r, j


@pytest.mark.parametrize("workers, mode", [
    (1, ()), (2, ()),                                  # zero copy: frames hold the mbufs
    (1, ("--copy",)),                                  # copied in and out
    (1, ("--engine", "gpu", "--offload-device", "cpu")),  # offloaded frames own their bytes
])
def test_router_over_dpdk_pcap_equals_warpath_route(tmp_path, workers, mode):
    pcap = tmp_path / "gen.pcap"
    tr.assert_ok(tr.run("gen", "traffic", "--out", pcap, "--count", 3000, "--seed", 11,
                        "--ipv6-share", 0.3, "--vlan-share", 0.2))
    c = tr.route_reference(tmp_path, pcap)
    _, j = run_dpdk_router(tmp_path, pcap, "--workers", workers, *mode)
    zero_copy = "--copy" not in mode
    assert ("zero copy" in j["ports"][0]["description"]) == zero_copy, j["ports"][0]
    t = j["totals"]
    assert t["rx"] == c["rx"] == 3000
    assert (t["tx"], t["dropped"], t["slow_path"]) == (c["tx"], c["dropped"], c["slow_path"])
    assert tr.nonzero(j["drops_by_reason"]) == tr.nonzero(c["drop_reasons"])
    assert tr.nonzero(j["slow_path_by_reason"]) == tr.nonzero(c["slow_path_reasons"])
    for port in range(4):
        assert "dpdk net_pcap" in j["ports"][port]["description"], j["ports"][port]
        ref = tmp_path / "route" / f"port{port}.pcap"
        want = tr.read_pcap(ref) if ref.exists() else []
        got = tr.read_pcap(tmp_path / f"o{port}.pcap")
        if workers == 1:  # one RX queue, one worker: in order
            assert got == want, f"port {port}: {len(got)} packets, route wrote {len(want)}"
        else:  # net_pcap has one RX queue; the same packets either way
            assert sorted(got) == sorted(want), f"port {port}"
        assert j["ports"][port]["tx"] == len(want)
        assert j["ports"][port]["tx_errors"] == 0
    assert j["ports"][0]["rx"] == 3000
    assert all(j["ports"][p]["rx"] == 0 for p in (1, 2, 3))  # send-only devices
    assert c["tx"] > 1500


@pytest.mark.parametrize("spec, says", [
    ("dpdk:", "missing virtual device"),
    ("dpdk:0", "bad virtual device name '0'"),
    ("dpdk:net-pcap0", "bad virtual device name"),
])
def test_bad_dpdk_specs_are_errors(tmp_path, spec, says):
    (tmp_path / "fib.txt").write_text(tr.FIB)
    r = tr.run("run", "--app", "router", "--fib", tmp_path / "fib.txt", "--port", f"a={spec}",
               "--no-progress")
    tr.assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert says in r.stderr, r.stderr
    assert "a: dpdk: " in r.stderr, r.stderr


def test_unknown_dpdk_driver_names_the_port(tmp_path):
    skip_without_dpdk_ports()
    (tmp_path / "fib.txt").write_text(tr.FIB)
    r = tr.run("run", "--app", "router", "--fib", tmp_path / "fib.txt", "--port",
               "a=dpdk:net_nosuchdriver0", "--no-progress")
    tr.assert_no_crash(r)
    for why in NOT_HERE:
        if why in r.stderr:
            pytest.skip(r.stderr.strip().splitlines()[-1])
    assert r.returncode == 1, r.stderr
    assert "port a: dpdk: cannot create device 'net_nosuchdriver0'" in r.stderr, r.stderr
