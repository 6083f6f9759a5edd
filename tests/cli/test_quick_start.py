"""The README's quick start on real interfaces, run word for word (but for the interface names:
eth0 -> wA, eth1 -> wB) in a network namespace (test_run_netns.py's topology: srcA <-> wA,
wB <-> dstB, whose MACs are the next hops' of the README): its set-up commands through bash,
then its `warpath run` line. Frames injected on srcA: SSH into 10.3.0.0/16 is routed out of
eth1 to the LAN router's MAC with its TTL decremented; web traffic and IPv6 are denied and
counted. Skips (with the reason) where namespaces cannot be made (not root)."""

import json
import re
import shlex
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from test_run_netns import check_report_adds_up, nu, topo  # noqa: F401 (the fixture)
from warpath_cli import REPO, WARPATH_BIN, skip_without_binary

skip_without_binary()


def quick_start():
    """(set-up shell text, the warpath run arguments) of the README's quick start."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("### Quick start on real interfaces", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    block = block.replace("eth0", "wA").replace("eth1", "wB")
    setup, run = block.split("\nwarpath run ", 1)
    return setup + "\n", shlex.split(run.replace("\\\n", " "))


def tcp_frame(src, dst, dport, ttl=64):
    tcp = struct.pack("!HHIIBBHHH", 40000, dport, 1, 0, 5 << 4, 0x02, 65535, 0, 0)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, ttl, 6, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", nu.csum(hdr)) + hdr[12:]
    return nu.mac(nu.Topology.MACS["wA"]) + nu.mac(nu.Topology.MACS["srcA"]) + b"\x08\x00" + \
        hdr + tcp


def ipv6_frame():
    ip6 = struct.pack("!IHBB", 6 << 28, 8, 17, 64) + b"\x20\x01\x0d\xb8" + bytes(11) + \
        b"\x01" + b"\x20\x01\x0d\xb8" + bytes(11) + b"\x05"
    return nu.mac(nu.Topology.MACS["wA"]) + nu.mac(nu.Topology.MACS["srcA"]) + b"\x86\xdd" + \
        ip6 + struct.pack("!HHHH", 1, 2, 8, 0)


def test_run_help_gives_the_quick_start():
    from warpath_cli import run
    _, args = quick_start()
    text = " ".join(run("run", "--help").stdout.split())
    line = "warpath run " + " ".join(a for a in args if "metrics" not in a and "9100" not in a)
    assert line.replace("wA", "eth0").replace("wB", "eth1") in text, text


def test_the_readme_quick_start_routes_and_filters(tmp_path, topo):  # noqa: F811
    setup, args = quick_start()
    assert args[:2] == ["--app", "router+acl"], args
    r = subprocess.run(["ip", "netns", "exec", topo.ns, "bash", "-e", "-c", setup], cwd=tmp_path,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    ssh = [tcp_frame("198.51.100.7", f"10.3.0.{k}", 22) for k in range(1, 11)]
    web = [tcp_frame("198.51.100.7", "10.3.0.1", 80)] * 5
    v6 = [ipv6_frame()] * 3
    nu.write_pcap(tmp_path / "in.pcap", ssh + web + v6)
    report = tmp_path / "run.json"
    proc = subprocess.Popen(["ip", "netns", "exec", topo.ns, str(WARPATH_BIN), "run", *args,
                             "--no-progress", "--json", str(report)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        res = nu.run_agent(topo, {"inject": "srcA", "pcap": str(tmp_path / "in.pcap"),
                                  "capture": ["dstB"], "probe_on": "dstB",
                                  "probe_src": "10.3.0.77", "probe_dst": "10.3.0.78",
                                  "expect": len(ssh)}, tmp_path)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "error" not in res, res
    j = json.loads(report.read_text())
    check_report_adds_up(j)
    out = nu.read_pcap(tmp_path / "cap_dstB.pcap")
    assert len(out) == len(ssh), (len(out), j["drops_by_reason"])
    for sent, got in zip(ssh, out):
        assert got[:6] == nu.mac("02:aa:00:00:00:0b")  # the LAN router's MAC, from neighbors.txt
        assert got[14 + 16:14 + 20] == sent[14 + 16:14 + 20] and got[14 + 8] == 63  # TTL - 1
    d = j["drops_by_reason"]
    assert d.get("acl_deny") == len(web) and d.get("acl_ipv6") == len(v6), d
