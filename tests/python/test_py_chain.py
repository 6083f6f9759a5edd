"""warpath.Chain from Python: the same report (totals, modules' counters, ports, the check) and
the same output capture as `warpath run --chain ... --json`, and bad chains raised with their
reason."""

import json

import pytest
from pyutil import REPO, WARPATH_BIN, cli, need_package

warpath = need_package()

DEMO = REPO / "examples" / "nids" / "demo.pcap"
RULES = REPO / "examples" / "firewall.rules"
STABLE = ("totals", "check", "chain", "app", "drops_by_reason", "slow_path_by_reason", "icmp",
          "copies", "fragmented", "originated", "workers", "batch", "schedule", "errors",
          "engine", "engines", "seed", "duration_s", "offload_device")


def module_counts(report):
    return [(m["position"], m["kind"], m["in"], m["out"], m["forwarded"], m["drops_by_reason"],
             m["slow_path_by_reason"]) for m in report["modules"]]


@pytest.mark.parametrize("chain", ["router(fib={fib})",
                                   "defrag -> acl(rules={rules}, default=permit) -> router(fib={fib})",
                                   "flow -> stream -> router(fib={fib})"])
def test_report_and_output_equal_the_cli(tmp_path, chain):
    fib = tmp_path / "all.fib"
    fib.write_text("0.0.0.0/0 1\n::/0 1\n")
    text = chain.format(fib=fib, rules=RULES)
    ours = tmp_path / "py.pcap"
    report = warpath.Chain(text).run([("in", f"pcap:{DEMO}:"), ("out", f"pcap::{ours}")])
    theirs = tmp_path / "cli.pcap"
    cli("run", "--chain", text, "--port", f"in=pcap:{DEMO}:", "--port", f"out=pcap::{theirs}",
        "--no-pin", "--json", tmp_path / "run.json")
    want = json.loads((tmp_path / "run.json").read_text())
    for key in STABLE:
        assert report[key] == want[key], key
    assert module_counts(report) == module_counts(want)
    assert [(p["name"], p["rx"], p["tx"]) for p in report["ports"]] == \
           [(p["name"], p["rx"], p["tx"]) for p in want["ports"]]
    assert report["check"]["ok"]
    t = report["totals"]
    assert t["rx"] == 57 and t["rx"] == t["tx"] + t["dropped"] + t["slow_path"]
    assert ours.read_bytes() == theirs.read_bytes()


def test_bad_chains():
    ports = {"in": f"pcap:{DEMO}:", "out": "null"}
    with pytest.raises(warpath.Error, match="no-such-module"):
        warpath.Chain("no-such-module").run(ports)
    with pytest.raises(warpath.Error, match="missing.rules"):
        warpath.Chain("acl(rules=/nonexistent/missing.rules)").run(ports)
    with pytest.raises(warpath.InvalidArgumentError, match="needs ports"):
        warpath.Chain("router").run({})
    with pytest.raises(warpath.Error, match="weird"):
        warpath.Chain("router").run({"in": "weird:thing"})
    with pytest.raises(warpath.InvalidArgumentError, match="engine 'tpu'"):
        warpath.Chain("router").run(ports, engine="tpu")


def test_ctrl_c_stops_a_run_and_raises():
    """SIGINT while a chain runs (an endless generator): the run stops, drained, and Python
    gets KeyboardInterrupt."""
    import os
    import signal
    import threading
    import time

    # Python's own Ctrl-C handler, whatever this process inherited: a shell starts background
    # jobs (`make test &`) with SIGINT ignored, and Python then installs none.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            warpath.Chain("router").run({"gen": "gen:max:4000000000", "sink": "null"})
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 30
