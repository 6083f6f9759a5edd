#!/usr/bin/env python3
"""Golden `warpath parse --format csv` rows derived from tshark (stdlib only).

Usage:
    python3 scripts/tshark_golden.py CAPTURE > out.csv
    python3 scripts/tshark_golden.py --all DATA_PCAP_DIR OUT_DIR

The first form writes one golden CSV to stdout. The second regenerates every
capture under DATA_PCAP_DIR (one level of folders: tcpdump/, zeek/, ...) as
OUT_DIR/<folder>__<name>.csv and writes OUT_DIR/disputed.txt.

Output header (the `status` column of `warpath parse` is left out, it is the
parser's own verdict and has no tshark equivalent):

    frame,vlan,ip_version,src,dst,proto,sport,dport,frag

How tshark is run
-----------------
    tshark -r CAPTURE -n -T json \
        -o ip.defragment:FALSE -o ipv6.defragment:FALSE \
        -o tcp.desegment_tcp_streams:FALSE

With reassembly off every frame is dissected on its own (a first fragment
still gets its TCP/UDP header dissected, later fragments show up as `data`).
The JSON is read with duplicate keys *kept and in order* (json
object_pairs_hook), which is the same information as `--no-duplicate-keys`
but keeps the interleaving of the layers: tshark lists the top-level
protocols of a frame in the order it dissected them, so e.g. GRE, VXLAN,
Geneve and IP-in-IP inner headers are simply later layers, and the IP header
quoted by an ICMP/ICMPv6 error is nested inside the `icmp`/`icmpv6` layer.

Outermost logic
---------------
Walk the top-level layers strictly in order and stop at the first thing
warpath does not parse:

    eth -> (vlan | ieee8021ad){0,2} -> ip | ipv6 -> [tcp | udp | sctp]

* each step must be reached through the right ethertype (0x8100 / 0x88a8 for
  tags, 0x0800 / 0x86dd for IP); any other ethertype (ARP, MPLS, PPPoE,
  loopback, an 802.3 length field + LLC, ...) ends the walk: the IP columns
  are empty;
* vlan is the VID of the first tag;
* IPv4: version, src, dst, proto from that header; frag = MF or offset != 0;
* IPv6: proto = follow the Next Header chain through the extension headers
  0/43/44/60 nested in the `ipv6` layer (in order); frag = 1 if a Fragment
  header (44) is in that chain; a chain cut off by the capture leaves proto
  empty;
* ports only for proto 6/17/132, only for the first fragment (offset 0), and
  only if the transport layer directly follows the IP layer and tshark got
  both port fields (a transport header with fewer than 4 bytes captured has
  no ports);
* a field tshark could not read because the header is cut off is left empty.

Rows where the golden is a judgement call rather than a plain reading of the
bytes are listed in disputed.txt (`file,frame,reason`); see
tests/golden/pcap/README.md.
"""

import argparse
import csv
import io
import ipaddress
import json
import os
import subprocess
import sys

COLUMNS = ["frame", "vlan", "ip_version", "src", "dst", "proto", "sport", "dport", "frag"]

TSHARK_PREFS = [
    "-o", "ip.defragment:FALSE",
    "-o", "ipv6.defragment:FALSE",
    "-o", "tcp.desegment_tcp_streams:FALSE",
]

ETH_VLAN = 0x8100
ETH_QINQ = 0x88A8
ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
MAX_TAGS = 2

IPV6_EXT = {0: "ipv6.hopopts", 43: "ipv6.routing", 44: "ipv6.fraghdr", 60: "ipv6.dstopts"}
PORT_PROTOS = {6: "tcp", 17: "udp", 132: "sctp"}

# Rows whose golden was decided by hand (see tests/golden/pcap/README.md).
# key: (capture name as "<folder>/<file>", frame) -> reason.  The test only
# checks that such a frame exists; the other columns are not compared.
MANUAL_DISPUTES = {
    ("tcpdump/bad-ipv4-version-pgm-heapoverflow.pcap", 1):
        "golden is tshark's IPv6 view of the 20 captured bytes: version 6 and no addresses"
        " (40-byte header cut at 20) and no proto (next header 0 = Hop-by-Hop not captured);"
        " read as IPv4 the bytes give src 48.48.48.48 dst 48.48.48.48 proto 113 MF 0 offset 0",
    ("tcpdump/ipv4_invalid_hdr_length.pcap", 1):
        "golden is tshark's view (version only); the bytes hold a full 20-byte header: src"
        " 140.211.9.206 dst 45.33.127.156 proto 17 MF 0 offset 0 and UDP 39095->53 at offset 20",
    ("tcpdump/ipv4_invalid_total_length_2.pcap", 1):
        "IPv4 total length 19 < IHL 20: tshark stops at the length field (Bogus IP length) so the"
        " golden has version 4 only; the bytes hold a full header: src 140.211.9.206 dst"
        " 45.33.127.156 proto 17 MF 0 offset 0 and UDP 39095->53",
    ("tcpdump/ipv6-bad-version.pcap", 2):
        "golden is tshark's view (version 0 only); the rest reads as IPv6: src"
        " fe80::20c:29ff:fe76:6c14 dst ff02::1 next header 58 (ICMPv6 NA)",
    ("tcpdump/ipv6-bad-version.pcap", 4):
        "golden is tshark's view (version 0 only); the rest reads as IPv6: src"
        " 1111:2222:3333:4444:20c:29ff:fe76:6c14 dst ff02::1 next header 58 (ICMPv6 NA)",
    ("tcpdump/ipv6_frag6_negative_len.pcap", 1):
        "IPv6 payload length 0 without a Jumbo option: tshark throws on the Fragment header"
        " (outside the 0-byte payload) so proto is empty; the captured Fragment header says next"
        " header 2 (IGMP) offset 160 (1280 bytes) M 0 i.e. a non-first fragment (no ports)",
}


class Obj(list):
    """A JSON object as an ordered list of (key, value) pairs, duplicates kept."""

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def sub(self, key):
        v = self.get(key)
        return v if isinstance(v, Obj) else Obj()


def run_tshark(path, tshark="tshark"):
    cmd = [tshark, "-r", path, "-n", "-T", "json"] + TSHARK_PREFS
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), proc.returncode,
                                                   proc.stderr.decode(errors="replace")))
    return json.loads(proc.stdout.decode("utf-8", errors="replace"), object_pairs_hook=Obj)


def to_int(v):
    if v is None or isinstance(v, Obj):
        return None
    s = str(v).strip()
    try:
        return int(s, 16) if s.lower().startswith("0x") else int(s, 10)
    except ValueError:
        return None


def norm_ip(v, version):
    if not isinstance(v, str) or not v:
        return ""
    if version == 4:
        return str(ipaddress.IPv4Address(v))
    return ipaddress.IPv6Address(v).compressed


def packet_row(pkt):
    """Return (row dict, list of dispute reasons) for one tshark JSON packet."""
    layers_obj = pkt.sub("_source").sub("layers")
    frame = layers_obj.sub("frame")
    row = {c: "" for c in COLUMNS}
    row["frame"] = str(to_int(frame.get("frame.number")))
    disputes = []
    # Top-level protocol layers in dissection order; `_ws.*` entries are
    # expert annotations (malformed, short, unreassembled), not protocols.
    layers = [(k, v) for k, v in layers_obj
              if k != "frame" and not k.startswith("_ws.") and isinstance(v, Obj)]
    if not layers or layers[0][0] != "eth":
        raise RuntimeError("frame %s: first layer is not Ethernet: %r"
                           % (row["frame"], [k for k, _ in layers[:3]]))
    eth = layers[0][1]
    etype = to_int(eth.get("eth.type"))  # None for an 802.3 length field (eth.len)
    i = 1
    tags = 0
    while i < len(layers) and layers[i][0] in ("vlan", "ieee8021ad") and etype in (ETH_VLAN, ETH_QINQ):
        name, tag = layers[i]
        if tags == 0:
            vid = to_int(tag.get(name + ".id"))
            row["vlan"] = "" if vid is None else str(vid)
        tags += 1
        # 802.1Q shows its inner ethertype as vlan.etype (or vlan.len for an
        # 802.3 length); the 802.1ad dissector calls it ieee8021ah.etype.
        etype = to_int(tag.get("vlan.etype" if name == "vlan" else "ieee8021ah.etype"))
        i += 1
    if tags > MAX_TAGS or i >= len(layers):
        return row, disputes
    name, ip = layers[i]
    if name == "ip" and etype == ETH_IPV4:
        version = to_int(ip.get("ip.version"))
        if version != 4 and i + 1 < len(layers) and layers[i + 1][0] == "ipv6":
            # Ethertype IPv4 but version nibble 6: tshark hands the bytes to
            # its IPv6 dissector; report what it shows, but do not trust it.
            disputes.append("IPv4 ethertype with IP version %s (tshark dissects as IPv6)" % version)
            return ipv6_fields(row, layers, i + 1, disputes)
        return ipv4_fields(row, layers, i, disputes)
    if name == "ipv6" and etype == ETH_IPV6:
        return ipv6_fields(row, layers, i, disputes)
    return row, disputes


def ports(row, layers, i, proto):
    """Fill sport/dport from the transport layer at layers[i], if it matches proto."""
    want = PORT_PROTOS.get(proto)
    if want is None or i >= len(layers) or layers[i][0] != want:
        return
    t = layers[i][1]
    sp = to_int(t.get(want + ".srcport"))
    dp = to_int(t.get(want + ".dstport"))
    if sp is not None and dp is not None:
        row["sport"], row["dport"] = str(sp), str(dp)


def ipv4_fields(row, layers, i, disputes):
    ip = layers[i][1]
    version = to_int(ip.get("ip.version"))
    row["ip_version"] = "" if version is None else str(version)
    if version != 4:
        disputes.append("IPv4 ethertype with IP version %s" % version)
    hdr_len = to_int(ip.get("ip.hdr_len"))
    if hdr_len is not None and hdr_len < 20:
        disputes.append("IPv4 IHL %d bytes (< 20): tshark stops after the header length" % hdr_len)
    row["src"] = norm_ip(ip.get("ip.src"), 4)
    row["dst"] = norm_ip(ip.get("ip.dst"), 4)
    proto = to_int(ip.get("ip.proto"))
    row["proto"] = "" if proto is None else str(proto)
    mf = to_int(ip.sub("ip.flags_tree").get("ip.flags.mf"))
    off = to_int(ip.get("ip.frag_offset"))
    if mf is not None and off is not None:
        row["frag"] = "1" if (mf or off) else "0"
        if off == 0 and proto is not None:
            ports(row, layers, i + 1, proto)
    return row, disputes


def ipv6_fields(row, layers, i, disputes):
    ip = layers[i][1]
    version = to_int(ip.get("ipv6.version"))
    row["ip_version"] = "" if version is None else str(version)
    if version != 6 and not disputes:
        disputes.append("IPv6 ethertype with IP version %s" % version)
    row["src"] = norm_ip(ip.get("ipv6.src"), 6)
    row["dst"] = norm_ip(ip.get("ipv6.dst"), 6)
    nxt = to_int(ip.get("ipv6.nxt"))
    if nxt is None:
        return row, disputes
    # Extension headers are subtrees of the ipv6 layer, in header order.
    exts = [(k, v) for k, v in ip if k in IPV6_EXT.values() and isinstance(v, Obj)]
    frag = False
    first = True
    e = 0
    while nxt in IPV6_EXT:
        if nxt == 44:
            frag = True
        if e >= len(exts) or exts[e][0] != IPV6_EXT[nxt]:
            nxt = None  # header cut off by the capture: tshark has no subtree
            break
        k, ext = exts[e]
        e += 1
        if k == "ipv6.fraghdr":
            off = to_int(ext.get("ipv6.fraghdr.offset"))
            if off is None:
                first = False
            elif off != 0:
                first = False
        nxt = to_int(ext.get(k + ".nxt"))
    if version == 6:
        row["frag"] = "1" if frag else "0"
    if nxt is not None:
        row["proto"] = str(nxt)
        if first:
            ports(row, layers, i + 1, nxt)
    return row, disputes


def golden_rows(path, name=None, tshark="tshark"):
    """Return (rows as lists of strings, disputes as [(frame, reason)])."""
    name = name or os.path.basename(path)
    rows, disputes = [], []
    for pkt in run_tshark(path, tshark):
        row, why = packet_row(pkt)
        rows.append([row[c] for c in COLUMNS])
        frame = int(row["frame"])
        manual = MANUAL_DISPUTES.get((name, frame))
        if manual:
            why.append(manual)
        if why:
            # one line per frame; no commas so that the file splits on the first two
            disputes.append((frame, "; ".join(why).replace(",", ";")))
    return rows, disputes


def write_csv(rows, out):
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(rows)


def golden_name(folder, fname):
    return "%s__%s.csv" % (folder, fname)


def captures(data_dir):
    for folder in sorted(os.listdir(data_dir)):
        d = os.path.join(data_dir, folder)
        if not os.path.isdir(d):
            continue
        for fname in sorted(os.listdir(d)):
            if fname.endswith((".pcap", ".pcapng", ".cap")):
                yield folder, fname, os.path.join(d, fname)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", nargs=2, metavar=("DATA_PCAP_DIR", "OUT_DIR"),
                    help="regenerate OUT_DIR/<folder>__<name>.csv for every capture, and disputed.txt")
    ap.add_argument("--tshark", default=os.environ.get("TSHARK", "tshark"))
    ap.add_argument("--name", help="capture name (<folder>/<file>) for manual disputes; "
                    "default: the last two path components")
    ap.add_argument("--disputed", action="store_true",
                    help="single-file mode: print the disputed rows to stderr")
    ap.add_argument("capture", nargs="?")
    args = ap.parse_args(argv)

    if args.all:
        data_dir, out_dir = args.all
        os.makedirs(out_dir, exist_ok=True)
        all_disputes = []
        n = 0
        for folder, fname, path in captures(data_dir):
            name = "%s/%s" % (folder, fname)
            rows, disputes = golden_rows(path, name, args.tshark)
            gname = golden_name(folder, fname)
            with open(os.path.join(out_dir, gname), "w", newline="") as f:
                write_csv(rows, f)
            for frame, reason in disputes:
                all_disputes.append((name, frame, reason))
            n += 1
        with open(os.path.join(out_dir, "disputed.txt"), "w", newline="") as f:
            f.write("# file,frame,reason  (file = capture path under the pcap data dir;"
                    " reason has no commas)\n"
                    "# generated by scripts/tshark_golden.py --all; see README.md\n")
            for name, frame, reason in all_disputes:
                f.write("%s,%d,%s\n" % (name, frame, reason))
        print("wrote %d golden files and %d disputed rows to %s" % (n, len(all_disputes), out_dir),
              file=sys.stderr)
        return 0

    if not args.capture:
        ap.error("CAPTURE or --all is required")
    path = args.capture
    name = args.name or "/".join(os.path.normpath(os.path.abspath(path)).split(os.sep)[-2:])
    rows, disputes = golden_rows(path, name, args.tshark)
    buf = io.StringIO()
    write_csv(rows, buf)
    sys.stdout.write(buf.getvalue())
    if args.disputed:
        for frame, reason in disputes:
            print("%s,%d,%s" % (name, frame, reason), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
