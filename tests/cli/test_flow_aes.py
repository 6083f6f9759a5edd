"""The flow-aes module (GASPP's AES application): each flow's payload under AES-CTR with a key
of its own, checked against a model written here from the module's definition with Python's
`cryptography` and `hmac` (key derivation, per-direction nonces, counters from TCP sequence
numbers and UDP byte counts, retransmissions, checksums), and undone by a second pass."""
import hashlib
import hmac
import json
import struct

import pytest
from pcap_frames import csum, eth, ipv4, read_pcap, udp, write_pcap
from warpath_cli import assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()
ciphers = pytest.importorskip("cryptography.hazmat.primitives.ciphers")

MASTER = bytes(range(16))
A, B, C = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), bytes([10, 0, 0, 9])


def tcp(sport, dport, seq, flags, data):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    return hdr + data


def with_l4_checksum(src, dst, proto, seg):
    pseudo = src + dst + struct.pack("!BBH", 0, proto, len(seg))
    off = 16 if proto == 6 else 6
    seg = seg[:off] + b"\0\0" + seg[off + 2:]
    c = csum(pseudo + seg)
    if proto == 17 and c == 0:
        c = 0xFFFF
    return seg[:off] + struct.pack("!H", c) + seg[off + 2:]


def frame(src, dst, proto, seg):
    return eth(ipv4(src, dst, with_l4_checksum(src, dst, proto, seg), proto=proto))


def flow_keystream(src, sport, dst, dport, proto, offset, n):
    """The model: HMAC-SHA256 key derivation, canonical 5-tuple, per-direction nonce."""
    lo, hi = sorted([(src, sport), (dst, dport)])
    d = 0 if (src, sport) == lo else 1
    key = bytes([4, proto]) + lo[0] + bytes(12) + hi[0] + bytes(12) + struct.pack("!HH", lo[1], hi[1]) + bytes(2)
    mac = hmac.new(MASTER, b"warpath flow-aes" + key, hashlib.sha256).digest()
    nonce = mac[16:23] + bytes([mac[23] ^ d])
    block = nonce + struct.pack("!Q", offset // 16)
    enc = ciphers.Cipher(ciphers.algorithms.AES(mac[:16]), ciphers.modes.CTR(block)).encryptor()
    return enc.update(bytes(offset % 16 + n))[offset % 16:]


ENGINES = ["auto", "ref.ctr", "cpu.ctr", "validate:cpu.ctr"]


@pytest.mark.parametrize("engine", ENGINES)
def test_flows_are_encrypted_as_the_model_says_and_restored(tmp_path, engine):
    p1, p2 = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 4, b"body" * 20
    frames, want = [], []

    def add(src, sport, dst, dport, proto, seg_payload, offset, make):
        frames.append(make(seg_payload))
        ks = flow_keystream(src, sport, dst, dport, proto, offset, len(seg_payload))
        want.append(bytes(a ^ b for a, b in zip(seg_payload, ks)))

    # TCP A:40000 -> B:80: SYN (seq 1000), two segments, a retransmission of the first, and
    # the reply direction after its own SYN.
    frames.append(frame(A, B, 6, tcp(40000, 80, 1000, 0x02, b"")))
    want.append(b"")
    # TCP: the keystream position is the sequence number itself.
    add(A, 40000, B, 80, 6, p1, 1001, lambda d: frame(A, B, 6, tcp(40000, 80, 1001, 0x18, d)))
    add(A, 40000, B, 80, 6, p2, 1001 + len(p1), lambda d: frame(A, B, 6, tcp(40000, 80, 1001 + len(p1), 0x18, d)))
    add(A, 40000, B, 80, 6, p1, 1001, lambda d: frame(A, B, 6, tcp(40000, 80, 1001, 0x18, d)))
    frames.append(frame(B, A, 6, tcp(80, 40000, 7000, 0x12, b"")))
    want.append(b"")
    add(B, 80, A, 40000, 6, b"HTTP/1.1 200 OK\r\n", 7001, lambda d: frame(B, A, 6, tcp(80, 40000, 7001, 0x18, d)))
    # UDP C:5353 -> B:53, three datagrams: offsets are the bytes before each.
    off = 0
    for n in (10, 33, 7):
        data = bytes([n]) * n
        add(C, 5353, B, 53, 17, data, off, lambda d: frame(C, B, 17, udp(5353, 53, d)))
        off += n
    write_pcap(tmp_path / "in.pcap", frames)
    chain = f"flow-aes(key=0x{MASTER.hex()}, engine={engine}) -> wire"
    for src, out in (("in.pcap", "once"), ("once-b.pcap", "twice")):
        j = tmp_path / f"{out}.json"
        assert_ok(run("run", "--chain", chain, "--no-progress", "--json", j,
                      "--port", f"a=pcap:{tmp_path / src}:{tmp_path / (out + '.pcap')}",
                      "--port", "b=pcap::" + str(tmp_path / f"{out}-b.pcap")))
        report = json.loads(j.read_text())
        mod = report["modules"][0]
        assert mod["stats"]["flows"] == 2 and mod["stats"]["packets"] == len(frames) - 2
    once = read_pcap(tmp_path / "once-b.pcap")
    assert len(once) == len(frames)
    for got, orig, payload in zip(once, frames, want):
        ihl = (got[14] & 15) * 4
        seg = got[14 + ihl:]
        proto = got[14 + 9]
        hdr = 20 if proto == 6 else 8
        assert seg[hdr:] == payload
        assert csum(got[26:34] + struct.pack("!BBH", 0, proto, len(seg)) + seg) == 0, "checksum"
        assert got[:14 + ihl] == orig[:14 + ihl]
    # Twice is the identity (CTR is its own inverse).
    assert read_pcap(tmp_path / "twice-b.pcap") == frames


def test_key_errors_are_one_line(tmp_path):
    write_pcap(tmp_path / "in.pcap", [])
    for key, why in (("0x0011", "2 bytes"), ("0011", "needs 0x"), ("0xzz" + "00" * 15, "'zz' is not hex")):
        r = run("run", "--chain", f"flow-aes(key={key}) -> wire", "--no-progress",
                "--port", f"a=pcap:{tmp_path / 'in.pcap'}:", "--port", "b=pcap::" + str(tmp_path / "o.pcap"))
        assert_no_crash(r)
        assert r.returncode == 1 and why in r.stderr, r.stderr


def test_fragments_and_a_full_table_are_dropped_not_sent_in_the_clear(tmp_path):
    """Fail closed: a fragment cannot be placed in its flow's keystream, and a UDP flow's byte
    count cannot be forgotten (its keystream would repeat), so with capacity=1 a second UDP
    flow is dropped; TCP entries are only a cache and make room."""
    frag = bytearray(frame(A, B, 17, udp(1, 2, b"x" * 30)))
    frag[20:22] = struct.pack("!H", 0x2000)
    frag[24:26] = b"\0\0"
    frag[24:26] = struct.pack("!H", csum(bytes(frag[14:34])))
    frames = [frame(A, C, 6, tcp(5, 6, 100, 0x18, b"c" * 9)), bytes(frag), frame(A, B, 17, udp(1, 2, b"a" * 9)),
              frame(C, B, 17, udp(3, 4, b"b" * 9)), frame(B, C, 6, tcp(7, 8, 100, 0x18, b"d" * 9))]
    write_pcap(tmp_path / "in.pcap", frames)
    out = tmp_path / "r.json"
    assert_ok(run("run", "--chain", f"flow-aes(key=0x{MASTER.hex()}, capacity=1) -> wire", "--no-progress",
                  "--json", out, "--port", f"a=pcap:{tmp_path / 'in.pcap'}:",
                  "--port", "b=pcap::" + str(tmp_path / "o.pcap")))
    j = json.loads(out.read_text())
    # The TCP flow's entry makes room for the UDP flow A->B, which then holds the only entry:
    # the UDP flow C->B and the next TCP flow find no room.
    drops = {k: v for k, v in j["drops_by_reason"].items() if v}
    assert drops == {"fragment": 1, "flow_table_full": 2}, drops
    assert j["modules"][0]["stats"]["evicted"] == 1


@pytest.mark.parametrize("engine", ["ref.ctr", "cpu.ctr"])
def test_flows_evicted_within_a_frame_keep_their_keys(tmp_path, engine):
    """capacity=1 and three TCP flows taking turns in one frame: each new flow evicts the last
    while the evicted flow's range is still waiting for the frame's one call to the engine, and
    a flow seen again is made afresh (its key is derived, not remembered). Every payload must
    still be under its own flow's keystream, as the model says."""
    frames, want = [], []
    flows = [(A, 41000, B, 80), (C, 42000, B, 443), (A, 41001, C, 22)]
    for k in range(9):
        src, sport, dst, dport = flows[k % 3]
        seq = 500 + 40 * k
        data = bytes([65 + k]) * (17 + k)
        frames.append(frame(src, dst, 6, tcp(sport, dport, seq, 0x18, data)))
        ks = flow_keystream(src, sport, dst, dport, 6, seq, len(data))
        want.append(bytes(a ^ b for a, b in zip(data, ks)))
    write_pcap(tmp_path / "in.pcap", frames)
    j = tmp_path / "r.json"
    assert_ok(run("run", "--chain", f"flow-aes(key=0x{MASTER.hex()}, capacity=1, engine={engine}) -> wire",
                  "--no-progress", "--json", j, "--port", f"a=pcap:{tmp_path / 'in.pcap'}:",
                  "--port", "b=pcap::" + str(tmp_path / "o.pcap")))
    report = json.loads(j.read_text())
    assert report["modules"][0]["stats"]["evicted"] == 8
    got = read_pcap(tmp_path / "o.pcap")
    assert [g[34 + 20:] for g in got] == want


def test_an_unknown_engine_is_one_line(tmp_path):
    write_pcap(tmp_path / "in.pcap", [])
    r = run("run", "--chain", f"flow-aes(key=0x{MASTER.hex()}, engine=gpu.nosuch) -> wire", "--no-progress",
            "--port", f"a=pcap:{tmp_path / 'in.pcap'}:", "--port", "b=pcap::" + str(tmp_path / "o.pcap"))
    assert_no_crash(r)
    assert r.returncode == 1 and "gpu.nosuch" in r.stderr, r.stderr
