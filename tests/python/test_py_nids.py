"""warpath.nids from Python: the same EVE records, in the same order, as `warpath nids --eve`
(alerts, HTTP/DNS/TLS transactions, flows; fragments put back together or not), every engine,
IPS mode and variables, and rule files with errors."""

import json
import re

import pytest
from pyutil import REPO, cli, data, need_package

warpath = need_package()

DEMO_RULES = REPO / "examples" / "nids" / "demo.rules"
DEMO = REPO / "examples" / "nids" / "demo.pcap"


def cli_eve(tmp_path, *args):
    out = tmp_path / "eve.json"
    cli("nids", *args, "--eve", out)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_demo_equals_the_cli(tmp_path):
    if not getattr(warpath._warpath, "_HAVE_NIDS", False):
        pytest.skip("this build has no NIDS")
    want = cli_eve(tmp_path, "--rules", DEMO_RULES, "--in", DEMO)
    assert any(e["event_type"] == "alert" for e in want)
    for engine in ("auto", "ref.nids", "validate:cpu.nids"):
        assert list(warpath.nids(DEMO_RULES, DEMO, engine=engine)) == want, engine
    plain = cli_eve(tmp_path, "--rules", DEMO_RULES, "--in", DEMO, "--no-defrag", "--no-flows")
    assert list(warpath.nids([DEMO_RULES], warpath.read_pcap(DEMO), defrag=False,
                             flows=False)) == plain
    assert len(plain) < len(want)  # the fragmented attack is seen only whole


@pytest.mark.parametrize("name", ["zeek/http-pipelined-requests.pcap", "zeek/http-bro.org.pcap",
                                  "tcpdump/dns_udp.pcap"])
def test_app_layer_records_equal_the_cli(tmp_path, name):
    if not getattr(warpath._warpath, "_HAVE_NIDS", False):
        pytest.skip("this build has no NIDS")
    path = data("pcap", *name.split("/"))
    rules = tmp_path / "r.rules"
    rules.write_text(
        'alert http any any -> any any (msg:"GET"; http.method; content:"GET"; sid:1;)\n'
        'alert dns any any -> any any (msg:"any query"; dns.query; content:"."; sid:2;)\n'
        'alert tcp any any -> any any (msg:"HTTP/1.1"; content:"HTTP/1.1"; sid:3;)\n')
    want = cli_eve(tmp_path, "--rules", rules, "--in", path)
    got = list(warpath.nids(rules, path))
    assert got == want
    assert {e["event_type"] for e in got} & {"http", "dns"}


def test_ips_mode_and_variables(tmp_path):
    if not getattr(warpath._warpath, "_HAVE_NIDS", False):
        pytest.skip("this build has no NIDS")
    rules = tmp_path / "r.rules"
    rules.write_text('drop tcp $EXTERNAL_NET any -> $HOME_NET 80 (msg:"web"; content:"GET"; '
                     'sid:10;)\n')
    want = cli_eve(tmp_path, "--rules", rules, "--in", DEMO, "--ips", "--set-var",
                   "HOME_NET=[192.168.1.0/24]")
    got = list(warpath.nids(rules, DEMO, ips=True, vars={"HOME_NET": "[192.168.1.0/24]"}))
    assert got == want
    assert any(e["event_type"] == "alert" and e["alert"]["action"] == "blocked" for e in got)


def test_rule_errors(tmp_path):
    if not getattr(warpath._warpath, "_HAVE_NIDS", False):
        pytest.skip("this build has no NIDS")
    rules = tmp_path / "bad.rules"
    rules.write_text('alert tcp any any -> any any (msg:"ok"; content:"GET"; sid:1;)\n'
                     'alert tcp any any -> any any (content:"x" sid:2;)\n'
                     'alert tcp any any -> (sid:3;)\n')
    with pytest.raises(warpath.ParseError,
                       match=re.escape(f"{rules}:2: content must be quoted") + ".*2 rule"):
        list(warpath.nids(rules, DEMO))
    got = list(warpath.nids(rules, DEMO, skip_bad_rules=True, flows=False))
    alerts = [e for e in got if e["event_type"] == "alert"]
    assert alerts and all(e["alert"]["signature_id"] == 1 for e in alerts)
    assert not any(e["event_type"] == "flow" for e in got)
    with pytest.raises(OSError, match="missing.rules"):
        warpath.nids(tmp_path / "missing.rules", DEMO)  # raised by the call, not when iterated
    with pytest.raises(warpath.Error, match="policy|sideways"):
        list(warpath.nids(DEMO_RULES, DEMO, policy="sideways"))


def test_rules_changed_between_calls_are_compiled_again(tmp_path):
    """The last rule set is kept for the next call with the same, unchanged rules (a worker's
    shards compile ET Open once): an edited file, or one added to the directory, is not."""
    if not getattr(warpath._warpath, "_HAVE_NIDS", False):
        pytest.skip("this build has no NIDS")
    d = tmp_path / "rules"
    d.mkdir()
    (d / "a.rules").write_text('alert tcp any any -> any 80 (msg:"GET"; content:"GET"; sid:1;)\n')

    def sids():
        return sorted({e["alert"]["signature_id"] for e in warpath.nids(d, DEMO, flows=False)
                       if e["event_type"] == "alert"})

    assert sids() == [1]
    assert sids() == [1]
    (d / "a.rules").write_text('alert tcp any any -> any 21 (msg:"FTP"; content:"USER"; sid:22;)\n')
    assert sids() == [22]
    (d / "b.rules").write_text('alert tcp any any -> any 80 (msg:"GET"; content:"GET"; sid:3;)\n')
    assert sids() == [3, 22]
