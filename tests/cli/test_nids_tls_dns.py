"""`warpath nids` with TLS and DNS rules: a real TLS 1.2 and 1.3 handshake between OpenSSL
endpoints (Python's ssl module over memory BIOs, a certificate made by the openssl CLI) written
as a TCP conversation, its JA3/JA3S checked against tshark's and its certificate fields against
openssl x509's; DNS queries over UDP and TCP with dns.query, dotprefix and bsize; EVE's tls and
dns events; hostile TLS and DNS bounded and counted."""

import json
import shutil
import ssl
import subprocess

import pytest

from warpath_cli import assert_ok, run, skip_without_binary

skip_without_binary()
pytest.importorskip("scapy.all")
from scapy.all import DNS, DNSQR, IP, TCP, UDP, Ether, Raw  # noqa: E402
from test_nids import CLIENT, MAC, SERVER, Session, rules, write  # noqa: E402

if not shutil.which("openssl"):
    pytest.skip("openssl (the CLI) makes the test certificate", allow_module_level=True)


def certificate(tmp_path):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", tmp_path / "k.pem",
                    "-out", tmp_path / "c.pem", "-days", "2", "-subj", "/C=US/O=Warpath Test/CN=www.example.test",
                    "-set_serial", "0x0A1B2C"], check=True, capture_output=True)
    return tmp_path / "c.pem", tmp_path / "k.pem"


def handshake(tmp_path, version, sni="evil.example.test", after=b""):
    """A real handshake between OpenSSL endpoints, as the TCP conversation that carried it."""
    cert, key = certificate(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    server.minimum_version = server.maximum_version = version
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    bios = [ssl.MemoryBIO() for _ in range(4)]
    c = client.wrap_bio(bios[0], bios[1], server_hostname=sni)
    s = server.wrap_bio(bios[2], bios[3], server_side=True)
    flights = []
    for _ in range(10):
        for end in (c, s):
            try:
                end.do_handshake()
            except ssl.SSLWantReadError:
                pass
        a, b = bios[1].read(), bios[3].read()
        if a:
            flights.append((0, a))
            bios[2].write(a)
        if b:
            flights.append((1, b))
            bios[0].write(b)
        if not a and not b:
            break
    c.write(b"GET / HTTP/1.1\r\n\r\n")
    flights.append((0, bios[1].read() + after))
    conv = Session(dport=443)
    for d, data in flights:
        for i in range(0, len(data), 1400):
            conv.send(d, data[i:i + 1400])
    return write(tmp_path, conv.close(), "tls.pcap"), cert


def tshark_ja3(cap):
    r = subprocess.run(["tshark", "-r", cap, "-Y", "tls.handshake.type == 1 or tls.handshake.type == 2",
                        "-T", "fields", "-e", "tls.handshake.ja3", "-e", "tls.handshake.ja3s"],
                       capture_output=True, text=True, check=True)
    vals = [v for line in r.stdout.splitlines() for v in line.split("\t") if v]
    return vals[0], vals[1]


def nids(tmp_path, cap, rule_text, *extra):
    eve, summary = tmp_path / "eve.json", tmp_path / "s.json"
    r = run("nids", "--rules", rules(tmp_path, rule_text), "--in", cap, "--eve", eve, "--json", summary, *extra)
    assert_ok(r)
    return [json.loads(l) for l in eve.read_text().splitlines()], json.loads(summary.read_text()), r


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark computes the JA3 oracle")
def test_tls12_handshake_fields_match_tshark_and_openssl(tmp_path):
    cap, cert = handshake(tmp_path, ssl.TLSVersion.TLSv1_2)
    ja3, ja3s = tshark_ja3(cap)
    fp = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-fingerprint", "-sha1"],
                        capture_output=True, text=True, check=True).stdout.split("=", 1)[1].strip().lower()
    text = "".join(f'alert tls any any -> any any (msg:"{m}"; {o} sid:{i + 1};)\n' for i, (m, o) in enumerate([
        ("sni", 'tls.sni; content:"evil.example.test"; bsize:17;'),
        ("sni dotprefix", 'tls.sni; dotprefix; content:".example.test"; endswith;'),
        ("ja3", f'ja3.hash; content:"{ja3}";'),
        ("ja3s", f'ja3s.hash; content:"{ja3s}";'),
        ("subject", 'tls.cert_subject; content:"C=US, O=Warpath Test, CN=www.example.test"; bsize:41;'),
        ("issuer", 'tls.cert_issuer; content:"O=Warpath Test";'),
        ("serial", 'tls.cert_serial; content:"0A:1B:2C"; bsize:8;'),
        ("fingerprint", f'tls.cert_fingerprint; content:"{fp}";'),
        ("certs", 'tls.certs; content:"Warpath Test";'),
        ("not this sni", 'tls.sni; content:"good.example";'),
        ("legacy name", f'ja3_hash; content:"{ja3}";'),
    ]))
    ev, summary, r = nids(tmp_path, cap, text)
    alerts = [e for e in ev if e["event_type"] == "alert"]
    assert sorted(a["alert"]["signature_id"] for a in alerts) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11]
    tls = [e for e in ev if e["event_type"] == "tls"]
    assert len(tls) == 1
    t = tls[0]["tls"]
    assert t["sni"] == "evil.example.test" and t["version"] == "TLS 1.2"
    assert t["subject"] == "C=US, O=Warpath Test, CN=www.example.test" and t["serial"] == "0A:1B:2C"
    assert t["fingerprint"] == fp and t["ja3s"]["hash"] == ja3s
    assert summary["tls"]["flows"] == 1
    assert [f["app_proto"] for f in ev if f["event_type"] == "flow"] == ["tls"]


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark computes the JA3 oracle")
def test_tls13_shows_its_hellos_only(tmp_path):
    cap, _ = handshake(tmp_path, ssl.TLSVersion.TLSv1_3)
    ja3, ja3s = tshark_ja3(cap)
    ev, _, _ = nids(tmp_path, cap,
                    f'alert tls any any -> any any (msg:"ja3"; ja3.hash; content:"{ja3}"; sid:1;)\n'
                    f'alert tls any any -> any any (msg:"ja3s"; ja3s.hash; content:"{ja3s}"; sid:2;)\n'
                    'alert tls any any -> any any (msg:"cert"; tls.cert_subject; content:"Warpath"; sid:3;)\n')
    assert sorted(e["alert"]["signature_id"] for e in ev if e["event_type"] == "alert") == [1, 2]
    assert [e["tls"]["version"] for e in ev if e["event_type"] == "tls"] == ["TLS 1.3"]


def dns_query(name, sport, qtype="A", txid=0x1234):
    return DNS(id=txid, rd=1, qd=DNSQR(qname=name, qtype=qtype))


def test_dns_queries_over_udp_and_tcp(tmp_path):
    frames = []
    for i, name in enumerate(["www.evil.example", "evil.example", "notevil.example", "x" * 20 + ".test"]):
        q = Ether(src=MAC[0], dst=MAC[1]) / IP(src=CLIENT, dst=SERVER) / UDP(sport=50000 + i, dport=53) / dns_query(name, 50000 + i)
        a = Ether(src=MAC[1], dst=MAC[0]) / IP(src=SERVER, dst=CLIENT) / UDP(sport=53, dport=50000 + i) / DNS(
            id=0x1234, qr=1, rd=1, ra=1, qd=DNSQR(qname=name))
        frames += [q, a]
    # DNS over TCP on another port: found by content.
    s = Session(sport=41000, dport=5353)
    msg = bytes(dns_query("tcp.evil.example", 41000))
    s.send(0, len(msg).to_bytes(2, "big") + msg)
    cap = write(tmp_path, frames + s.close())
    text = ('alert dns any any -> any any (msg:"domain and subdomains"; dns.query; dotprefix; content:".evil.example"; endswith; sid:1;)\n'
            'alert dns any any -> any any (msg:"long"; dns.query; bsize:>20; sid:2;)\n'
            'alert dns any any -> any any (msg:"legacy"; dns_query; content:"notevil"; startswith; sid:3;)\n'
            'alert udp any any -> any any (msg:"udp payload"; content:"|04|evil"; sid:4;)\n')
    ev, summary, r = nids(tmp_path, cap, text)
    alerts = [e for e in ev if e["event_type"] == "alert"]
    by_sid = {}
    for a in alerts:
        by_sid.setdefault(a["alert"]["signature_id"], []).append(a)
    # .evil.example: www.evil.example, evil.example and tcp.evil.example, not notevil.example
    assert len(by_sid[1]) == 3 and {a["proto"] for a in by_sid[1]} == {"UDP", "TCP"}
    assert len(by_sid[2]) == 1 and len(by_sid[3]) == 1
    assert by_sid[1][0]["app_proto"] == "dns" and by_sid[1][0]["dns"]["type"] == "query"
    dns = [e["dns"] for e in ev if e["event_type"] == "dns"]
    assert sorted(d["rrname"] for d in dns if d["type"] == "query") == sorted(
        ["www.evil.example", "evil.example", "notevil.example", "x" * 20 + ".test", "tcp.evil.example"])
    assert sum(d["type"] == "answer" for d in dns) == 4
    assert summary["dns"]["flows"] == 5 and summary["dns"]["messages"] == 9
    assert "dns: 5 flows, 9 messages" in r.stdout


def test_hostile_tls_and_dns_are_bounded(tmp_path):
    s = Session(dport=443)
    # A handshake record that claims 2^16 - 1 bytes (past TLS's bound), then garbage.
    s.send(0, b"\x16\x03\x01\xff\xff" + b"\x01" * 3000)
    t = Session(sport=40001, dport=443)
    # A ClientHello whose extension lengths run past their message.
    hello = bytes.fromhex("0303") + b"\x00" * 32 + b"\x00" + b"\x00\x02\xc0\x2f" + b"\x01\x00" + b"\xff\xff\x00\x00"
    t.send(0, b"\x16\x03\x01" + (len(hello) + 4).to_bytes(2, "big") + b"\x01" + len(hello).to_bytes(3, "big") + hello)
    # A DNS query whose name is a compression pointer to itself.
    loop = bytes.fromhex("abcd01000001000000000000c00c00010001")
    u = Ether(src=MAC[0], dst=MAC[1]) / IP(src=CLIENT, dst=SERVER) / UDP(sport=50100, dport=53) / Raw(loop)
    cap = write(tmp_path, s.close() + t.close() + [u])
    ev, summary, r = nids(tmp_path, cap, 'alert tls any any -> any any (msg:"sni"; tls.sni; content:"a"; sid:1;)\n'
                                        'alert dns any any -> any any (msg:"q"; dns.query; content:"a"; sid:2;)\n')
    assert not [e for e in ev if e["event_type"] == "alert"]
    assert summary["tls"]["flows"] == 2 and summary["app_layer"]["parse_errors"] == 2
    assert "app layer: 2 parsers stopped on malformed data" in r.stdout
    assert summary["dns"]["flows"] == 0  # the looping name is not a DNS message ldns takes


def test_encrypted_tls_is_not_inspected_by_content_rules_unless_asked(tmp_path):
    # An application data record whose bytes happen to hold a marker, after the handshake.
    record = b"\x17\x03\x03\x00\x10" + b"secret-marker!!!"
    cap, _ = handshake(tmp_path, ssl.TLSVersion.TLSv1_2, after=record)
    text = ('alert tcp any any -> any any (msg:"marker"; content:"secret-marker"; sid:20;)\n'
            'alert tls any any -> any any (msg:"sni"; tls.sni; content:"evil"; sid:21;)\n')
    ev, summary, _ = nids(tmp_path, cap, text)
    assert sorted(e["alert"]["signature_id"] for e in ev if e["event_type"] == "alert") == [21]
    assert summary["stream"]["encrypted_bytes"] > 0
    ev, summary, _ = nids(tmp_path, cap, text, "--tls-encryption-handling", "full")
    assert sorted(e["alert"]["signature_id"] for e in ev if e["event_type"] == "alert") == [20, 21]
    assert summary["stream"]["encrypted_bytes"] == 0
    r = run("nids", "--rules", rules(tmp_path, text), "--in", cap, "--tls-encryption-handling", "bypass")
    assert r.returncode != 0 and "expected default or full" in r.stderr


@pytest.mark.parametrize("version,expect", [(ssl.TLSVersion.TLSv1_2, {1, 3, 4, 5}), (ssl.TLSVersion.TLSv1_3, {2, 3})])
def test_tls_version_is_each_sides_hello(tmp_path, version, expect):
    # The client offers 1.3 either way (supported_versions); the server picks what it is held to.
    cap, _ = handshake(tmp_path, version)
    ev, _, _ = nids(tmp_path, cap,
                    'alert tls any any -> any any (flow:to_client; tls.version:1.2; sid:1;)\n'
                    'alert tls any any -> any any (flow:to_client; tls.version:1.3; sid:2;)\n'
                    'alert tls any any -> any any (flow:to_server; tls.version:1.3; sid:3;)\n'
                    'alert tls any any -> any any (flow:to_client; tls.version:0x0303; sid:4;)\n'
                    'alert tcp any any -> any any (flow:to_client; tls.version:1.2; sid:5;)\n'
                    'alert tls any any -> any any (flow:to_server; tls.version:1.0; sid:6;)\n')
    assert {e["alert"]["signature_id"] for e in ev if e["event_type"] == "alert"} == expect
