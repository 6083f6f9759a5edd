"""Helpers for the `warpath run` network tests (test_run_netns.py): pcap files, frames, a
network namespace with two veth pairs, and the agent that injects and captures frames inside it.

Everything here is independent of warpath: Python's standard library, `ip` and `sysctl`.

Run as a script inside the namespace (`ip netns exec NS python3 netns_util.py agent JOB.json`),
the module is the agent: it opens AF_PACKET capture sockets, sends probe frames until one comes
out of warpath (so the whole data path is known to be live), injects a capture (from Python, or
with tcpreplay), captures until the interfaces have been quiet for a while and writes what it
saw as pcaps plus a JSON summary.
"""

import json
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pcap_frames import csum, l3, mac, read_pcap, write_pcap  # noqa: E402,F401

# --- frames (pcap files, checksums, MACs and tags: pcap_frames.py) ------------------------------

def ipv4_frame(src, dst, payload, ttl=64, ident=0, sport=7777, dport=7777,
               dst_mac="02:aa:00:00:00:1a", src_mac="02:bb:00:00:00:02"):
    """Ethernet + IPv4 (valid header checksum) + UDP (checksum 0) around `payload`; by default
    to wA's MAC (Topology.MACS), as a host would address the router."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0x4000, ttl, 17, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return mac(dst_mac) + mac(src_mac) + b"\x08\x00" + hdr + udp


PROBE_MARK = b"WARPATH-E2E-PROBE"


def probe_frame(k, src="192.0.2.77", dst="198.51.100.77"):
    """The k-th probe: IPv4/UDP src -> dst (by default 192.0.2.77 -> 198.51.100.77), port 7777,
    marked payload."""
    return ipv4_frame(src, dst, PROBE_MARK + struct.pack("!I", k) + bytes(20))


def is_probe(frame):
    return PROBE_MARK in frame


# --- the namespace ------------------------------------------------------------------------------

def sh(*args, ns=None, check=True, timeout=30):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


class Topology:
    """Namespace NS with srcA <-> wA and wB <-> dstB, all up, no addresses, IPv6 off.

    The test injects on srcA and captures on dstB (and srcA); warpath owns wA (port 0) and wB
    (port 1). With IPv6 disabled and no IPv4 address the kernel sends nothing on its own (no
    ND, MLD, ARP or IGMP), so every frame on the wires is ours or warpath's.
    """

    MACS = {"srcA": "02:aa:00:00:00:0a", "wA": "02:aa:00:00:00:1a",
            "wB": "02:aa:00:00:00:1b", "dstB": "02:aa:00:00:00:0b"}

    def __init__(self, name):
        self.ns = name
        self.created = False

    def create(self):
        sh("ip", "netns", "add", self.ns)
        self.created = True
        # New interfaces in the namespace start with IPv6 off (no link-local address, no DAD).
        sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=self.ns, check=False)
        sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=self.ns, check=False)
        for a, b in (("srcA", "wA"), ("wB", "dstB")):
            # One queue each way: one RX queue for warpath's single worker (and AF_XDP queue 0).
            sh("ip", "-n", self.ns, "link", "add", a, "numtxqueues", 1, "numrxqueues", 1, "type",
               "veth", "peer", "name", b, "numtxqueues", 1, "numrxqueues", 1)
        for ifname, m in self.MACS.items():
            sh("sysctl", "-qw", f"net.ipv6.conf.{ifname}.disable_ipv6=1", ns=self.ns, check=False)
            sh("ip", "-n", self.ns, "link", "set", "dev", ifname, "address", m)
            sh("ip", "-n", self.ns, "link", "set", "dev", ifname, "up")
        sh("ip", "-n", self.ns, "link", "set", "dev", "lo", "up")

    def destroy(self):
        if self.created:
            # Deleting the namespace destroys the veth pairs in it.
            sh("ip", "netns", "del", self.ns, check=False)
            self.created = False

    def link_stats(self, ifname):
        r = sh("ip", "-n", self.ns, "-s", "-j", "link", "show", "dev", ifname)
        return json.loads(r.stdout)[0]["stats64"]

    def link_details(self, ifname):
        return sh("ip", "-n", self.ns, "-d", "link", "show", "dev", ifname).stdout


# --- the agent (runs inside the namespace) ------------------------------------------------------

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
AUXDATA = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata


class Capture:
    """An AF_PACKET socket on one interface: frames that arrive there, VLAN tags put back."""

    def __init__(self, ifname, rcvbuf):
        self.ifname = ifname
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            self.s.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)  # SO_RCVBUFFORCE (root)
        except OSError:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        self.s.bind((ifname, ETH_P_ALL))
        self.s.setblocking(False)
        self.frames = []      # arrived frames, in order
        self.outgoing = 0     # frames sent from this interface (ours), not kept
        self.cmsg = socket.CMSG_SPACE(AUXDATA.size)

    def drain(self, limit=1 << 30):
        n = 0
        while n < limit:
            try:
                data, anc, _, addr = self.s.recvmsg(65536, self.cmsg)
            except BlockingIOError:
                break
            n += 1
            if addr[2] == PACKET_OUTGOING:
                # The kernel reports transmissions on the interface to its packet sockets too.
                self.outgoing += 1
                continue
            for level, kind, value in anc:
                if level == SOL_PACKET and kind == PACKET_AUXDATA:
                    status, _, _, _, _, tci, tpid = AUXDATA.unpack(value[:AUXDATA.size])
                    if status & TP_STATUS_VLAN_VALID:
                        # The receive path strips an 802.1Q tag into metadata; this is what was
                        # on the wire.
                        if not (status & TP_STATUS_VLAN_TPID_VALID) or tpid == 0:
                            tpid = 0x8100
                        data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
            self.frames.append(data)
        return n

    def stats(self):
        raw = self.s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        packets, drops = struct.unpack("II", raw)
        return {"packets": packets, "drops": drops}


def read_counter(ifname, name):
    return int(Path(f"/sys/class/net/{ifname}/statistics/{name}").read_text())


def agent(job):
    """Probe, inject, capture; see the module docstring. `job` is a dict (see run_agent)."""
    caps = {i: Capture(i, job.get("rcvbuf", 256 << 20)) for i in job["capture"]}
    watch = caps[job["probe_on"]]
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # protocol 0: receives nothing
    tx.bind((job["inject"], 0))
    result = {"probes_sent": 0}

    def drain_all():
        return sum(c.drain() for c in caps.values())

    def wait(timeout):
        select.select([c.s for c in caps.values()], [], [], timeout)

    # 1. Probes until one comes back: warpath's ports are open and its workers are running.
    deadline = time.monotonic() + job.get("probe_timeout_s", 15)
    k = 0
    while not any(is_probe(f) for f in watch.frames):
        if time.monotonic() > deadline:
            result["error"] = f"no probe came out on {job['probe_on']} within the timeout"
            break
        tx.send(probe_frame(k, job.get("probe_src", "192.0.2.77"),
                            job.get("probe_dst", "198.51.100.77")))
        k += 1
        t_end = time.monotonic() + 0.05
        while time.monotonic() < t_end and not any(is_probe(f) for f in watch.frames):
            wait(0.01)
            drain_all()
    result["probes_sent"] = k
    # Probes still inside warpath come out before the first injected frame (one worker, one
    # queue); they are told apart by their payload mark anyway.
    counters_at_start = {i: {n: read_counter(i, n) for n in ("rx_packets", "tx_packets",
                                                              "tx_dropped", "rx_dropped")}
                         for i in job.get("counters", [])}

    # 2. Injection.
    frames = read_pcap(job["pcap"]) if "error" not in result else []
    t0 = time.monotonic()
    injected = 0
    if "error" in result:
        pass
    elif job.get("replay") == "tcpreplay":
        rate = ["--pps", str(job["replay_pps"])] if job.get("replay_pps") else ["--topspeed"]
        p = subprocess.Popen(["tcpreplay", "-q", *rate, "-i", job["inject"], job["pcap"]],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        while p.poll() is None:
            wait(0.005)
            drain_all()
        result["tcpreplay"] = p.stdout.read()
        result["tcpreplay_rc"] = p.returncode
        injected = len(frames)
    else:
        for i, f in enumerate(frames):
            while True:
                try:
                    tx.send(f)
                    break
                except OSError as e:  # ENOBUFS: the device queue is full; try again
                    if e.errno not in (105, 11):
                        raise
                    time.sleep(0.0005)
            injected += 1
            if i % 256 == 255:
                drain_all()
    result["inject_s"] = time.monotonic() - t0
    result["injected"] = injected

    # 3. Capture until quiet: `idle_s` without a frame (warpath holds packets at most a few ms).
    expect = job.get("expect")
    quiet_since = time.monotonic()
    end = time.monotonic() + job.get("max_wait_s", 10)
    while time.monotonic() < end:
        wait(0.02)
        if drain_all():
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > job.get("idle_s", 0.5):
            break
        if expect is not None and len([f for f in watch.frames if not is_probe(f)]) >= expect:
            # Everything expected is here; a short grace period catches anything extra.
            time.sleep(0.1)
            drain_all()
            break
    result["counters_at_start"] = counters_at_start
    result["counters_at_end"] = {i: {n: read_counter(i, n) for n in ("rx_packets", "tx_packets",
                                                                      "tx_dropped", "rx_dropped")}
                                 for i in job.get("counters", [])}
    out = Path(job["out_dir"])
    result["captures"] = {}
    for i, c in caps.items():
        probes = [f for f in c.frames if is_probe(f)]
        rest = [f for f in c.frames if not is_probe(f)]
        write_pcap(out / f"cap_{i}.pcap", rest)
        result["captures"][i] = {"frames": len(rest), "probes": len(probes),
                                 "outgoing": c.outgoing, "socket": c.stats()}
    return result


def run_agent(topo, job, out_dir, timeout=60):
    """Runs the agent in the namespace; returns its result (dict)."""
    job = dict(job, out_dir=str(out_dir))
    path = Path(out_dir) / "agent_job.json"
    path.write_text(json.dumps(job))
    r = subprocess.run(["ip", "netns", "exec", topo.ns, sys.executable, __file__, "agent",
                        str(path)], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"agent failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    return json.loads((Path(out_dir) / "agent_result.json").read_text())


def main(argv):
    if len(argv) == 3 and argv[1] == "agent":
        job = json.loads(Path(argv[2]).read_text())
        result = agent(job)
        (Path(job["out_dir"]) / "agent_result.json").write_text(json.dumps(result, indent=1))
        return 0
    print(f"usage: {argv[0]} agent JOB.json", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
