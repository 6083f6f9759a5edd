"""Suricata's regression suite (../shared/data/suricata-verify) run through `warpath nids`: the
alert checks of every test.

A test runs as suricata-verify runs it (its capture, its rule file, its args: `-k none` is
--no-checksum, `--simulate-ips` or "ips" in the name is --ips, `stream.midstream=true` here or in
its suricata.yaml is --midstream, its address and port groups are --set-var). Then each
`filter` check whose `match` has `event_type: alert` is evaluated against warpath's EVE output:
the alerts that agree on every key warpath writes must number exactly `count`. Keys warpath does
not write (payload, packet, tunnel.*, ...) may tell alerts apart, so with such keys the count is
a lower bound (and a check of count 0 says nothing and is not counted). Checks on other event
types (http, stats, flow ...) belong to parsers warpath does not have and are not evaluated.

Outcomes: pass; fail (an alert check does not hold); skip (no alert check, a rule outside the
supported subset, a capture the reader does not take). Run as a script for the table:
    python3 tests/cli/suricata_verify.py [--bin build/warpath] [--only NAME]
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("WARPATH_DATA", str(REPO.parent / "shared" / "data")))
SV = DATA / "suricata-verify"

# EVE keys warpath writes for an alert.
KNOWN = {"event_type", "src_ip", "src_port", "dest_ip", "dest_port", "proto", "pcap_cnt",
         "direction", "stream", "alert.signature_id", "alert.gid", "alert.rev",
         "alert.signature", "alert.category", "alert.severity", "alert.action", "flow_id"}


def capture_of(folder):
    caps = sorted(p for p in folder.iterdir() if p.suffix in (".pcap", ".pcapng", ".cap"))
    return caps[0] if caps else None


def rules_of(folder):
    rules = sorted(folder.glob("*.rules"))
    return rules[0] if rules else None


def alert_checks(test):
    out = []
    for check in test.get("checks") or []:
        f = check.get("filter") if isinstance(check, dict) else None
        if f and (f.get("match") or {}).get("event_type") == "alert":
            if "lt-version" in (check.get("requires") or {}) or "lt-version" in (f.get("requires") or {}):
                continue  # describes older Suricata versions
            out.append(f)
    return out


def flatten(obj, prefix=""):
    out = {}
    for k, v in obj.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


POLICIES = {"bsd": "bsd", "bsd-right": "bsd", "old-linux": "old-linux", "linux": "linux",
            "solaris": "solaris", "old-solaris": "solaris", "windows": "windows",
            "windows2k3": "windows", "vista": "vista", "first": "first", "last": "last"}


def yaml_settings(folder):
    """Settings of the test's own suricata.yaml (it replaces the default): midstream,
    variables, action order and host OS policies, as warpath options."""
    midstream, opts = False, []
    cfg = folder / "suricata.yaml"
    if not cfg.is_file():
        return midstream, opts
    text = "\n".join(l for l in cfg.read_text(errors="replace").splitlines()
                     if not l.startswith("%YAML"))
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return midstream, variables
    stream = doc.get("stream") or {}
    midstream = bool(stream.get("midstream")) if isinstance(stream, dict) else False
    groups = (doc.get("vars") or {}) if isinstance(doc.get("vars"), dict) else {}
    for section in ("address-groups", "port-groups"):
        for name, value in (groups.get(section) or {}).items():
            opts += ["--set-var", f"{name}={value}"]
    policy = (stream.get("midstream-policy") if isinstance(stream, dict) else None) or doc.get("exception-policy")
    if isinstance(policy, str):
        opts += ["--midstream-policy", policy]  # replaced below by the command line's
    if isinstance(doc.get("action-order"), list):
        opts += ["--action-order", ",".join(doc["action-order"])]
    for name, prefixes in (doc.get("host-os-policy") or {}).items():
        for prefix in prefixes or []:
            if name in POLICIES:
                opts += ["--host-policy", f"{prefix}={POLICIES[name]}"]
    return midstream, opts


def options(folder, test):
    args = " ".join(str(a) for a in test.get("args") or [])
    midstream, from_yaml = yaml_settings(folder)
    if "stream.midstream=true" in args:
        midstream = True
    if "stream.midstream=false" in args:
        midstream = False
    opts = []
    if "-k none" in args:
        opts.append("--no-checksum")
    # Suricata's inline stream (stream.inline=true) is warpath's IPS reassembly: with alert
    # rules alone, nothing is dropped.
    if "--simulate-ips" in args or "ips" in folder.name or "stream.inline=true" in args:
        opts.append("--ips")
    if midstream:
        opts.append("--midstream")
    opts += from_yaml
    for key in ("stream.midstream-policy", "exception-policy"):  # the command line's win
        m = re.search(key.replace(".", r"\.") + r"=([a-z-]+)", args)
        if m:
            i = opts.index("--midstream-policy") if "--midstream-policy" in opts else None
            if i is not None:
                del opts[i:i + 2]
            opts += ["--midstream-policy", m.group(1)]
            break
    return opts


def var_options(opts):
    out = []
    for i, o in enumerate(opts):
        if o == "--set-var":
            out += opts[i:i + 2]
    return out


def run_test(folder, binary):
    """(outcome, detail): outcome is pass, fail or skip."""
    test = yaml.safe_load((folder / "test.yaml").read_text())
    checks = alert_checks(test)
    if not checks:
        return "skip", "no alert checks"
    rules, cap = rules_of(folder), capture_of(folder)
    if rules is None:
        return "skip", "no rule file (detection disabled)"
    if cap is None:
        return "skip", "no capture"
    opts = options(folder, test)
    chk = subprocess.run([binary, "nids", "--rules", rules, "--check-rules", "--verbose",
                          "--json", "-", *var_options(opts)],
                         capture_output=True, text=True, timeout=60)
    if chk.returncode != 0:
        return "skip", "rules: " + chk.stderr.strip()
    report = json.loads(chk.stdout)
    if report["loaded"] < report["rules"]:
        problems = [p for f in report["files"] for p in f.get("problems", [])]
        first = problems[0] if problems else {"reason": "?", "sid": 0}
        kind = "syntax error" if first.get("syntax") else "rule outside the subset"
        return "skip", f"{kind}: sid {first['sid']}: {first['reason']}"
    with tempfile.TemporaryDirectory() as tmp:
        eve = Path(tmp) / "eve.json"
        r = subprocess.run([binary, "nids", "--rules", rules, "--in", cap, "--eve", eve,
                            "--no-flows", *opts], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            if "link type" in r.stderr:
                return "skip", r.stderr.strip()
            return "fail", f"exit {r.returncode}: {r.stderr.strip()}"
        alerts = [flatten(json.loads(l)) for l in eve.read_text().splitlines() if l.strip()]
    norm = lambda v: v.lower() if isinstance(v, str) else v
    evaluated = 0
    for f in checks:
        match = f.get("match") or {}
        known = {k: v for k, v in match.items() if k in KNOWN}
        count = f.get("count", 1)
        if len(known) < len(match) and count == 0:
            continue
        got = [a for a in alerts if all(norm(a.get(k)) == norm(v) for k, v in known.items())]
        evaluated += 1
        exact = len(known) == len(match)
        if (exact and len(got) != count) or (not exact and len(got) < count):
            seen = sorted({a.get("alert.signature_id") for a in alerts} - {None})
            return "fail", (f"{len(got)} alerts match {known}, expected "
                            f"{'' if exact else 'at least '}{count} (alerts: {len(alerts)}, sids {seen})")
    if not evaluated:
        return "skip", "every alert check uses keys warpath does not write"
    return "pass", f"{evaluated} alert checks"


def main(argv):
    binary = str(REPO / "build" / "warpath")
    only = None
    i = 0
    while i < len(argv):
        if argv[i] == "--bin":
            binary, i = argv[i + 1], i + 2
        elif argv[i] == "--only":
            only, i = argv[i + 1], i + 2
        else:
            raise SystemExit(f"unknown argument {argv[i]}")
    totals = {"pass": 0, "fail": 0, "skip": 0}
    for spec in sorted(SV.glob("*/test.yaml")):
        if only and only not in spec.parent.name:
            continue
        outcome, detail = run_test(spec.parent, binary)
        totals[outcome] += 1
        print(f"{outcome:5} {spec.parent.name}: {detail}", flush=True)
    print(f"total: {totals['pass']} pass, {totals['fail']} fail, {totals['skip']} skip")


if __name__ == "__main__":
    main(sys.argv[1:])
