"""Classic pcap files and Ethernet/IP frame helpers for the CLI tests, independent of warpath
(so the tests never judge warpath's output with warpath's own code)."""
import struct
from pathlib import Path

PCAP_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<",   # micro, nano
               b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}


def read_records(path):
    """[((sec, frac), caplen, wire_len, bytes)] of a classic pcap (micro or nano, either byte
    order); frac in the file's unit."""
    b = Path(path).read_bytes()
    if b[:4] not in PCAP_MAGICS:
        raise ValueError(f"{path}: not a classic pcap")
    e = PCAP_MAGICS[b[:4]]
    recs, at = [], 24
    while at < len(b):
        sec, frac, caplen, wire = struct.unpack(e + "IIII", b[at:at + 16])
        recs.append(((sec, frac), caplen, wire, b[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    if at != len(b):
        raise ValueError(f"{path}: truncated record")
    return recs


def read_pcap(path):
    """The frames (bytes) of a classic pcap."""
    return [r[3] for r in read_records(path)]


def write_pcap(path, frames):
    """A microsecond pcap, Ethernet, one record per frame (1 us apart, unique timestamps)."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, f in enumerate(frames):
        out.append(struct.pack("<IIII", 1_700_000_000 + i // 1_000_000, i % 1_000_000, len(f),
                               len(f)))
        out.append(f)
    Path(path).write_bytes(b"".join(out))


def csum(data):
    """The Internet checksum (RFC 1071) of `data`."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac(text):
    return bytes(int(x, 16) for x in text.split(":"))


def l3(frame):
    """(offset of the IP header, ethertype) after any 802.1Q / 802.1ad / QinQ tags."""
    off = 12
    while struct.unpack("!H", frame[off:off + 2])[0] in (0x8100, 0x88A8, 0x9100):
        off += 4
    return off + 2, struct.unpack("!H", frame[off:off + 2])[0]


def ipv4(src, dst, payload, ttl=64, proto=17, options=b"", bad_checksum=False):
    """IPv4 header (checksum valid unless bad_checksum) + payload; addresses as 4 bytes."""
    ihl = 5 + len(options) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(options) + len(payload), 0x1234,
                      0x4000, ttl, proto, 0, bytes(src), bytes(dst)) + options
    c = csum(hdr) ^ (0x5A5A if bad_checksum else 0)
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def ipv6(src, dst, payload, hlim=64, nxt=17):
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), nxt, hlim, bytes(src),
                       bytes(dst)) + payload


def eth(payload, ethertype=0x0800, dst="00:11:22:33:44:55", src="66:77:88:99:aa:bb"):
    return mac(dst) + mac(src) + struct.pack("!H", ethertype) + payload


def udp(sport=1234, dport=53, data=b"x" * 40):
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
