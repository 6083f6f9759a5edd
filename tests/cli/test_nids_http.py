"""`warpath nids` with HTTP rules on crafted conversations: protocol detection by content (not
port), the request and response buffers, pipelined requests paired with their responses, gzip
bodies, EVE's http events and the alert's http object as Suricata writes them, IPS drops by an
HTTP rule, and the bounds on hostile traffic, with their counters."""

import gzip
import json
from itertools import zip_longest

import pytest

from warpath_cli import assert_ok, run, skip_without_binary

skip_without_binary()
pytest.importorskip("scapy.all")
from test_nids import CLIENT, SERVER, Session, rules, write  # noqa: E402

RULES = (
    'alert http any any -> any any (msg:"uri"; flow:established,to_server; http.method; content:"POST"; '
    'http.uri; content:"/gate.php"; endswith; sid:1;)\n'
    'alert http any any -> any any (msg:"ua"; http.user_agent; content:"curl/"; startswith; sid:2;)\n'
    'alert http any any -> any any (msg:"body"; flow:to_client; file_data; content:"evil()"; sid:3;)\n'
    'alert http any any -> any any (msg:"stat"; http.stat_code; content:"404"; sid:4;)\n'
    'alert http any any -> any any (msg:"legacy"; content:"/second"; http_uri; content:"GET"; http_method; sid:5;)\n'
    'alert http any any -> any any (msg:"raw stream"; content:"Host|3a| evil"; http.host; content:"evil.example"; sid:6;)\n'
    'alert tcp any any -> any any (msg:"plain"; content:"plain-marker"; sid:7;)\n'
    'alert http any any -> any any (msg:"not on plain"; content:"plain-marker"; sid:8;)\n'
)


def conversation(port=8080):
    s = Session(dport=port)
    page = b"<html>" + b"x" * 2000 + b"evil()</html>"
    body = gzip.compress(page)
    # Two pipelined requests in one segment; the first response gzip-encoded and chunked.
    s.send(0, b"POST /gate.php HTTP/1.1\r\nHost: Evil.Example\r\nUser-Agent: curl/8.1\r\n"
              b"Content-Length: 4\r\n\r\nabcd"
              b"GET /second HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    s.send(1, b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n" + chunked)
    s.send(1, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nLocation: /x\r\n\r\n")
    return s.close()


def events(tmp_path, cap, rule_text, *extra):
    eve = tmp_path / "eve.json"
    summary = tmp_path / "s.json"
    r = run("nids", "--rules", rules(tmp_path, rule_text), "--in", cap, "--eve", eve, "--json", summary, *extra)
    assert_ok(r)
    ev = [json.loads(l) for l in eve.read_text().splitlines()]
    return ev, json.loads(summary.read_text()), r


def test_http_rules_see_request_and_response_buffers_on_any_port(tmp_path):
    cap = write(tmp_path, conversation(port=8080))
    ev, summary, r = events(tmp_path, cap, RULES)
    alerts = [e for e in ev if e["event_type"] == "alert"]
    got = sorted(a["alert"]["signature_id"] for a in alerts)
    # 6 twice: each transaction has the host, and its raw-stream window (the direction's last
    # 4 KiB when the phase completed, docs/nids.md) holds both pipelined requests.
    assert got == [1, 2, 3, 4, 5, 6, 6], got
    by_sid = {a["alert"]["signature_id"]: a for a in reversed(alerts)}  # a sid's first alert
    # A request rule alerts from the client, a response rule from the server; both carry the
    # transaction's http object, app_proto and tx_id.
    a1, a4 = by_sid[1], by_sid[4]
    assert (a1["src_ip"], a1["dest_port"], a1["direction"]) == (CLIENT, 8080, "to_server")
    assert (a4["src_ip"], a4["src_port"], a4["direction"]) == (SERVER, 8080, "to_client")
    assert a1["app_proto"] == "http" and a1["tx_id"] == 0 and by_sid[5]["tx_id"] == 1
    assert a1["http"]["url"] == "/gate.php" and a1["http"]["http_method"] == "POST"
    assert a4["http"]["status"] == 404 and a4["http"]["redirect"] == "/x"
    # EVE http events, one per transaction, in Suricata's field names.
    http = [e for e in ev if e["event_type"] == "http"]
    assert [h["tx_id"] for h in http] == [0, 1]
    h0 = http[0]
    assert (h0["src_ip"], h0["dest_ip"], h0["dest_port"]) == (CLIENT, SERVER, 8080)
    assert h0["http"] == {"hostname": "evil.example", "url": "/gate.php", "http_user_agent": "curl/8.1",
                          "http_content_type": "text/html", "http_method": "POST", "protocol": "HTTP/1.1",
                          "status": 200, "length": h0["http"]["length"]}
    assert h0["http"]["length"] > 0
    flows = [e for e in ev if e["event_type"] == "flow"]
    assert [f["app_proto"] for f in flows] == ["http"]
    assert summary["http"]["flows"] == 1 and summary["http"]["transactions"] == 2
    assert summary["http"]["responses"] == 2 and summary["detect"]["app_units"] == 4
    assert "http: 1 flows, 2 transactions, 2 responses" in r.stdout


def test_http_rules_skip_flows_that_are_not_http_even_on_port_80(tmp_path):
    s = Session(dport=80)
    s.send(0, b"HELO plain-marker\r\n").send(1, b"250 ok\r\n")
    cap = write(tmp_path, s.close())
    ev, summary, _ = events(tmp_path, cap, RULES)
    assert sorted(e["alert"]["signature_id"] for e in ev if e["event_type"] == "alert") == [7]
    assert summary["http"]["flows"] == 0


def test_every_engine_gives_the_same_alerts(tmp_path):
    cap = write(tmp_path, conversation())
    want = None
    for engine in ("ref.nids", "cpu.nids", "validate:cpu.nids"):
        for extra in ((), ("--batch", "1"), ("--stream-chunk", "2560")):
            ev, _, _ = events(tmp_path, cap, RULES, "--engine", engine, *extra)
            got = sorted((e["alert"]["signature_id"], e.get("tx_id", -1)) for e in ev if e["event_type"] == "alert")
            want = want or got
            assert got == want, (engine, extra)


def test_an_http_drop_rule_drops_the_flow_in_ips_mode(tmp_path):
    s = Session()
    s.send(0, b"GET /admin HTTP/1.1\r\nHost: h\r\n\r\n").send(1, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    cap = write(tmp_path, s.close())
    ev, summary, _ = events(tmp_path, cap, 'drop http any any -> any any (msg:"admin"; http.uri; content:"/admin"; sid:9;)\n', "--ips")
    alerts = [e for e in ev if e["event_type"] == "alert"]
    assert [a["alert"]["action"] for a in alerts] == ["blocked"]
    assert summary["dropped"] >= 1 and summary["flows_dropped"] == 1


def test_hostile_http_stays_bounded_and_counted(tmp_path):
    s = Session()
    flood = b"".join(b"GET /%d HTTP/1.1\r\nHost: h\r\n\r\n" % i for i in range(2000))
    for i in range(0, len(flood), 1400):
        s.send(0, flood[i:i + 1400])
    bomb = gzip.compress(b"A" * (20 << 20))
    t = Session(sport=40001)
    t.send(0, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb)
    payload = head + bomb
    for i in range(0, len(payload), 1400):
        t.send(1, payload[i:i + 1400])
    cap = write(tmp_path, s.close() + t.close())
    ev, summary, r = events(tmp_path, cap, 'alert http any any -> any any (msg:"a"; file_data; content:"AAAA"; sid:1;)\n')
    h = summary["http"]
    assert h["tx_limit"] == 1 and h["transactions"] <= 512 + 1
    assert h["body_truncated"] >= 1  # the bomb's decoded body cut at the response body limit
    assert [e["alert"]["signature_id"] for e in ev if e["event_type"] == "alert"] == [1]
    assert "bounds:" in r.stdout


def test_the_app_memcap_stops_parsing_past_it_and_releases_every_byte(tmp_path):
    # Twenty concurrent uploads, each a 60 KiB body arriving slowly: together past a 256 KiB
    # memcap. Parsing stops for the flows past it (counted); the rest are parsed; when the
    # capture ends every byte the parsers held is released.
    sessions = [Session(sport=41000 + i) for i in range(20)]
    frames = []
    for s in sessions:
        s.send(0, b"POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 61440\r\n\r\n")
    for chunk in range(0, 61440, 1400):
        for s in sessions:
            s.send(0, b"B" * min(1400, 61440 - chunk))
    lists = [s.close() for s in sessions]
    for group in zip_longest(*lists):  # the uploads interleaved, packet by packet
        frames += [f for f in group if f is not None]
    cap = write(tmp_path, frames)
    both = ('alert http any any -> any any (msg:"up"; http.uri; content:"/up"; sid:1;)\n'
            'alert tcp any any -> any any (msg:"body"; content:"BBBBBBBB"; sid:2;)\n')
    ev, summary, r = events(tmp_path, cap, both, "--app-memcap", str(256 << 10))
    app = summary["app_layer"]
    assert app["memcap"] >= 1 and app["held_bytes"] == 0
    assert summary["http"]["flows"] == 20
    # The flows whose parsing stopped are still stream-inspected: every upload's body alerts.
    assert len({e["flow_id"] for e in ev if e["event_type"] == "alert" and e["alert"]["signature_id"] == 2}) == 20
    assert "stopped at the memcap" in r.stdout
    # The same capture under the default memcap: every upload parsed and alerted.
    ev, summary, _ = events(tmp_path, cap, 'alert http any any -> any any (msg:"up"; http.uri; content:"/up"; sid:1;)\n')
    assert summary["app_layer"]["memcap"] == 0 and summary["app_layer"]["held_bytes"] == 0
    assert len([e for e in ev if e["event_type"] == "alert"]) == 20
