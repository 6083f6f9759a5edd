"""warpath run --chain, [[module]] configs and warpath modules.

- the presets (--app router, --app acl) and the same chains written out give the same packets
  on every port and the same counters;
- context keys: an ACL rule's goto:NAME sends its packets to a module declared when=NAME, the
  rest go on to the router; checked packet by packet against a model of the chain;
- chain errors (text, TOML with file:line, conflicting flags) are one line, exit 1;
- warpath modules lists every module with its arguments, as text and JSON, and the presets as
  the chains they run (which, run with --chain, do what --app does).
"""
import json
import re

import pytest
from pcap_frames import eth, ipv4, read_pcap, udp, write_pcap
from test_run import FIB, NEIGHBORS, check_report, run_json
from warpath_cli import REPO, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()


def four_ports(d, pcap):
    ports = ["--port", f"p0=pcap:{pcap}:{d / 'o0.pcap'}"]
    for p in (1, 2, 3):
        ports += ["--port", f"p{p}=pcap::{d / f'o{p}.pcap'}"]
    return ports


def outputs(d, n=4):
    return [read_pcap(d / f"o{p}.pcap") for p in range(n)]


def nonzero(m):
    return {k: v for k, v in m.items() if v}


def test_router_preset_equals_its_chain(tmp_path):
    pcap = tmp_path / "gen.pcap"
    assert_ok(run("gen", "traffic", "--out", pcap, "--count", 2000, "--seed", 4,
                  "--ipv6-share", 0.3, "--vlan-share", 0.1))
    (tmp_path / "fib.txt").write_text(FIB)
    (tmp_path / "n.txt").write_text(NEIGHBORS)
    results = []
    for how in ("preset", "chain"):
        d = tmp_path / how
        d.mkdir()
        if how == "preset":
            args = ["--app", "router", "--fib", tmp_path / "fib.txt", "--neighbors",
                    tmp_path / "n.txt"]
        else:
            args = ["--chain", f"router(fib={tmp_path / 'fib.txt'}, "
                               f"neighbors={tmp_path / 'n.txt'})"]
        _, j = run_json(d, *args, "--workers", 1, "--batch", 64, "--no-progress",
                        *four_ports(d, pcap))
        assert [m["kind"] for m in j["modules"]] == ["router"]
        results.append((j["totals"], nonzero(j["drops_by_reason"]),
                        nonzero(j["slow_path_by_reason"]), outputs(d)))
    assert results[0] == results[1]
    assert results[0][0]["tx"] > 500


def test_acl_preset_equals_its_chain(tmp_path):
    # UDP to port 53 is denied; everything else permitted; the frame after the first is cut
    # short (the parser rejects it, and the acl preset drops it as malformed).
    (tmp_path / "rules").write_text(
        "@0.0.0.0/0 0.0.0.0/0 0 : 65535 53 : 53 0x11/0xFF deny\n")
    frames = [eth(ipv4([10, 0, 0, k], [10, 1, 0, 1], udp(dport=53 if k % 3 == 0 else 80)))
              for k in range(60)]
    frames[1] = frames[1][:20]
    write_pcap(tmp_path / "in.pcap", frames)
    results = []
    for how in ("preset", "chain"):
        d = tmp_path / how
        d.mkdir()
        args = (["--app", "acl", "--rules", tmp_path / "rules", "--default-action", "permit"]
                if how == "preset" else
                ["--chain", f"acl(rules={tmp_path / 'rules'}, default=permit, malformed=drop)"
                            " -> wire"])
        _, j = run_json(d, *args, "--workers", 1, "--no-progress",
                        "--port", f"a=pcap:{tmp_path / 'in.pcap'}:{d / 'o0.pcap'}",
                        "--port", f"b=pcap::{d / 'o1.pcap'}")
        results.append((j["totals"], nonzero(j["drops_by_reason"]), outputs(d, 2)))
    assert results[0] == results[1]
    totals, drops, (back, out) = results[0]
    assert drops == {"acl_deny": 20, "malformed": 1}
    assert back == [] and out == [f for k, f in enumerate(frames) if k % 3 and k != 1]


def preset_chains():
    """`warpath modules`' presets section: app -> the chain text it runs."""
    r = run("modules")
    assert_ok(r)
    text = r.stdout.split("Presets (warpath run --app NAME)", 1)[1]
    chains = {}
    for line in text.splitlines()[1:]:
        if not line.startswith("  ") or line.startswith("  ["):
            break
        app, chain = line.split(None, 1)
        chains[app] = chain
    return chains


def test_modules_lists_the_presets_as_chains():
    chains = preset_chains()
    assert list(chains) == ["acl", "router", "router+acl", "ipsec", "switch"]
    assert chains["router"] == "router(lookup=auto)"
    assert chains["ipsec"] == "esp-in(sa=SA) -> esp-out(sa=SA) -> router(lookup=auto)"
    assert chains["switch"] == "switch(flows=FLOWS)"
    r = run("modules")
    assert "[router] fib* neighbors* lookup; [acl] rules* format" in r.stdout


@pytest.mark.parametrize("app", ["router+acl", "acl"])
def test_preset_runs_as_the_chain_modules_prints(tmp_path, app):
    """A preset is chain text: the chain `warpath modules` prints for it, run with --chain,
    gives the same packets and counters as --app (built-in tables, same seed)."""
    pcap = tmp_path / "gen.pcap"
    assert_ok(run("gen", "traffic", "--out", pcap, "--count", 3000, "--seed", 7,
                  "--ipv6-share", 0.2, "--vlan-share", 0.1))
    chain = preset_chains()[app]
    results = []
    for how in ("preset", "chain"):
        d = tmp_path / how
        d.mkdir()
        args = ["--app", app] if how == "preset" else ["--chain", chain]
        _, j = run_json(d, *args, "--workers", 1, "--batch", 64, "--no-progress",
                        *four_ports(d, pcap))
        results.append((j["totals"], nonzero(j["drops_by_reason"]),
                        nonzero(j["slow_path_by_reason"]), outputs(d)))
    assert results[0] == results[1]
    assert results[0][0]["rx"] == 3000 and results[0][0]["tx"] > 0


def test_context_key_splits_traffic_between_modules(tmp_path):
    """acl: UDP to port 53 -> goto:dns, UDP to port 9 -> deny; dns packets leave unchanged
    through the paired port (wire, when=dns), the rest are routed."""
    (tmp_path / "rules").write_text(
        "@0.0.0.0/0 0.0.0.0/0 0 : 65535 53 : 53 0x11/0xFF goto:dns\n"
        "@0.0.0.0/0 0.0.0.0/0 0 : 65535 9 : 9 0x11/0xFF deny\n")
    (tmp_path / "fib.txt").write_text("10.1.0.0/16 1\n10.2.0.0/16 2\n")
    (tmp_path / "n.txt").write_text("1 2 00:00:5e:00:53:01\n2 3 00:00:5e:00:53:02\n")
    frames, want = [], {0: [], 1: [], 2: 0, 3: 0}
    for k in range(300):
        dport = (53, 9, 80)[k % 3]
        dst = [10, 1 + k % 2, 0, k % 250]
        frames.append(eth(ipv4([10, 9, 0, k % 250], dst, udp(dport=dport))))
        if dport == 53:
            want[1].append(frames[-1])           # wire: p0 -> p1, unchanged
        elif dport == 80:
            want[2 + k % 2] += 1                 # routed by next hop 1 -> p2, 2 -> p3
    write_pcap(tmp_path / "in.pcap", frames)
    chain = (f"acl(rules={tmp_path / 'rules'}, default=permit) -> wire(when=dns) -> "
             f"router(fib={tmp_path / 'fib.txt'}, neighbors={tmp_path / 'n.txt'})")
    for batch in (1, 32, 1024):
        d = tmp_path / f"b{batch}"
        d.mkdir()
        _, j = run_json(d, "--chain", chain, "--batch", batch, "--workers", 1, "--no-progress",
                        *four_ports(d, tmp_path / "in.pcap"))
        assert j["app"] == "chain" and j["chain"] == "acl -> wire -> router"
        got = outputs(d)
        assert got[0] == [] and got[1] == want[1]
        assert (len(got[2]), len(got[3])) == (want[2], want[3])
        for f in got[2] + got[3]:
            assert f[22] == 63, "routed: TTL decremented"
        t = j["totals"]
        assert (t["rx"], t["tx"], t["dropped"]) == (300, 200, 100)
        m = {x["kind"]: x for x in j["modules"]}
        assert (m["acl"]["in"], m["acl"]["out"]) == (300, 200)
        assert m["acl"]["drops_by_reason"] == {"acl_deny": 100}
        assert (m["wire"]["in"], m["wire"]["forwarded"]) == (100, 100)
        assert (m["router"]["in"], m["router"]["forwarded"]) == (100, 100)


def test_toml_chain_and_json_modules(tmp_path):
    (tmp_path / "fib.txt").write_text("0.0.0.0/0 1\n::/0 1\n")
    (tmp_path / "run.toml").write_text(
        'workers = 1\n[ports]\ng = "gen:max:20000"\ns = "null"\n\n'
        '[[module]]\nkind = "ttl-filter"\nmin = 40\n\n'
        '[[module]]\nkind = "router"\nfib = "fib.txt"\n')
    _, j = run_json(tmp_path, tmp_path / "run.toml", "--no-progress")
    assert j["chain"] == "ttl-filter -> router"
    ttl, router = j["modules"]
    assert ttl["position"] == 1 and router["position"] == 2
    assert ttl["in"] == j["totals"]["rx"] == 20000
    assert ttl["out"] == router["in"]
    assert ttl["in"] == ttl["out"] + sum(ttl["drops_by_reason"].values())
    assert router["out"] == 0
    for m in j["modules"]:
        assert m["ns_per_packet"] >= 0 and m["describe"]


def test_toml_module_files_are_resolved_against_the_config(tmp_path):
    # Every argument a module marks as a file (ArgInfo::file), its outputs too, names a path
    # relative to the config file, wherever warpath runs from.
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "p.txt").write_text("abc\n")
    (cfg / "run.toml").write_text(
        'workers = 1\n[ports]\ng = "gen:max:2000"\ns = "null"\n\n'
        '[[module]]\nkind = "flow"\nlog = "flows.jsonl"\n\n'
        '[[module]]\nkind = "match"\npatterns = "p.txt"\nlog = "matches.jsonl"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert_ok(run("run", cfg / "run.toml", "--no-progress", cwd=elsewhere))
    assert (cfg / "flows.jsonl").is_file() and (cfg / "matches.jsonl").is_file()
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("args,why", [
    (["--chain", "acl -> nosuch"], "--chain: chain position 2: unknown module 'nosuch'"),
    (["--chain", "acl ->"], "--chain: column 7: expected a module name"),
    (["--chain", "router(fibb=x)"],
     "--chain: chain position 1 (router): unknown argument 'fibb' (known: fib, neighbors"),
    (["--chain", "ttl-filter(min=300)"], "min=300: expected an integer 0..255"),
    (["--chain", "wire(when=dns)"], "when=dns: no module before it tags packets"),
    (["--chain", "router", "--fib", "x"], "--fib: not with a chain of modules (--chain)"),
    (["--chain", "router", "--app", "router"], "--app: not with a chain of modules"),
    (["--chain", "acl(rules=/nonexistent/r)"], "/nonexistent/r"),
])
def test_chain_errors_are_one_line(args, why):
    r = run("run", *args, "--no-progress", "--port", "g=gen:max:10", "--port", "s=null")
    assert_no_crash(r)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.startswith("warpath: ") and why in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("text,where,why", [
    ('[[module]]\nkind = "acl"\n\n[[module]]\nkind = "router"\nfibb = "x"\n',
     "cfg.toml:4: chain position 2 (router)", "unknown argument 'fibb'"),
    ('[[module]]\ndefault = "permit"\n', "cfg.toml:1: module", 'kind = "..."'),
    ('app = "router"\n[[module]]\nkind = "acl"\n', "cfg.toml:1: app", "not with [[module]]"),
    ('[[module]]\nkind = "nosuch"\n', "cfg.toml:1: chain position 1", "unknown module 'nosuch'"),
])
def test_toml_chain_errors_name_file_and_line(tmp_path, text, where, why):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(text)
    r = run("run", cfg, "--no-progress", "--port", "g=gen:max:10", "--port", "s=null")
    assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert str(tmp_path / where) in r.stderr and why in r.stderr, r.stderr


def test_modules_lists_every_module():
    r = assert_ok(run("modules"))
    for word in ("acl", "router", "ttl-filter", "wire", "when=NAME", "rules", "fib",
                 "neighbors", "min", "reads parse; sets"):
        assert word in r.stdout, word
    j = json.loads(assert_ok(run("modules", "--json")).stdout)
    kinds = {m["kind"]: m for m in j}
    assert set(kinds) >= {"acl", "router", "ttl-filter", "wire"}
    assert "parse" in kinds["router"]["reads"] and "verdict" in kinds["router"]["sets"]
    assert {a["name"] for a in kinds["acl"]["args"]} >= {"rules", "default", "algo"}
    for m in j:
        for a in m["args"]:
            assert a["help"] and "default" in a, (m["kind"], a)
    # The arguments that name files say so (what `run` keeps every output off every input by).
    files = {(m["kind"], a["name"]): a["file"] for m in j for a in m["args"] if "file" in a}
    assert files[("acl", "rules")] == files[("esp-in", "sa")] == "input"
    assert files[("nids", "eve")] == files[("switch", "dump")] == "output"
    assert "[input file]" in r.stdout and "[output file]" in r.stdout
    # Every module file registers its kinds (WARPATH_REGISTER_MODULE), and the linker kept every
    # registration: the library is linked whole, since nothing calls a module by name.
    declared = set()
    for f in sorted((REPO / "src" / "modules").glob("*_module.cpp")):
        text = f.read_text()
        registered = re.findall(r"^WARPATH_REGISTER_MODULE\((\w+)\);", text, re.M)
        assert registered, f"{f.name} registers no module kind"
        for fn in registered:
            body = text[text.index(f"ModuleInfo {fn}() {{"):]
            declared.add(re.search(r'i\.kind\s*=\s*"([^"]+)"', body).group(1))
    engines = json.loads(assert_ok(run("info", "--json")).stdout)["engines"]
    if not any(e["module"] == "nids" for e in engines):  # built without PCRE2: no nids, no l7
        declared -= {"nids", "l7"}
    assert set(kinds) == declared, (sorted(set(kinds) ^ declared))


def test_chain_summary_shows_modules(tmp_path):
    r = assert_ok(run("run", "--chain", "ttl-filter(min=64) -> wire", "--no-progress",
                      "--port", "g=gen:max:5000", "--port", "s=null"))
    assert "chain: ttl-filter -> wire" in r.stdout
    assert "ttl-filter" in r.stdout and "ns/pkt" in r.stdout
    check_ok = [line for line in r.stdout.splitlines() if line.startswith("check:")]
    assert check_ok and "(ok)" in check_ok[0]


@pytest.mark.parametrize("how", ["flag", "toml"])
def test_schedule_sort_reaches_the_chain(tmp_path, how):
    # Regression: --schedule was registered outside the flag table and silently ignored.
    ports = ["--no-progress", "--port", "g=gen:max:2000", "--port", "s=null"]
    if how == "flag":
        args = ["--chain", "ttl-filter(min=64) -> wire", "--schedule", "sort"]
    else:
        cfg = tmp_path / "cfg.toml"
        cfg.write_text('schedule = "sort"\n[[module]]\nkind = "wire"\n')
        args = [cfg]
    r, j = run_json(tmp_path, *args, *ports)
    assert j["schedule"] == "sort", j["schedule"]
    assert "(packets scheduled by sort)" in r.stdout
    _, plain = run_json(tmp_path, "--chain", "wire", *ports)
    assert plain["schedule"] == "none"


def test_a_chain_that_reads_no_header_is_not_parsed(tmp_path):
    # `wire` alone reads no header: its frames go unparsed (the floor bench's empty chain, as
    # testpmd's io forwarding); a module that reads headers brings the parse back.
    ports = ["--no-progress", "--port", "g=gen:max:3000", "--port", "s=null"]
    r, j = run_json(tmp_path, "--chain", "wire", *ports)
    assert j["parsed"] is False and j["stages_ns_per_packet"]["parse"] == 0, j["stages_ns_per_packet"]
    assert "not parsed: no module reads headers" in r.stdout
    assert j["totals"]["tx"] == j["totals"]["rx"] == 3000, j["totals"]
    r, j = run_json(tmp_path, "--chain", "ttl-filter(min=1) -> wire", *ports)
    assert j["parsed"] is True and j["stages_ns_per_packet"]["parse"] > 0
    assert "not parsed" not in r.stdout


@pytest.mark.parametrize("text,why", [
    ('app = "router"\n', "cfg.toml:1 sets app, [router] or [acl]"),
    ('workers = 1\n[router]\nfib = "x"\n', "cfg.toml:2 sets app, [router] or [acl]"),
    ('[acl]\nrules = "x"\n', "cfg.toml:1 sets app, [router] or [acl]"),
])
def test_chain_flag_refuses_preset_settings_of_the_config(tmp_path, text, why):
    # Regression: with --chain, a config file's app / [router] / [acl] were silently ignored.
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(text)
    r = run("run", cfg, "--chain", "wire", "--no-progress", "--port", "g=gen:max:10",
            "--port", "s=null")
    assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert why in r.stderr and "--chain" in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["bogus", "127.0.0.1:99999", ":9100", "::1:9100"])
def test_metrics_address_in_toml_names_file_and_line(tmp_path, value):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f'workers = 1\nmetrics = "{value}"\n')
    r = run("run", cfg, "--no-progress", "--port", "g=gen:max:10", "--port", "s=null")
    assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert f"cfg.toml:2: metrics: '{value}'" in r.stderr, r.stderr
