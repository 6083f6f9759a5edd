"""python -m warpath: the commands the Python package carries out (`warpath report` and
`warpath cluster` run these).

    report CAPTURE --html FILE [--rules FILE ...]      a capture's HTML report (warpath.report)
    cluster nids|flows|reassemble --in ... --out DIR    a corpus over Ray (warpath.dist)
"""
import argparse
import json
import sys


def _report_args(sub) -> None:
    rep = sub.add_parser("report", help="a capture's plots and tables as one HTML page")
    rep.add_argument("capture", help="pcap or pcapng (.gz/.xz too)")
    rep.add_argument("--html", required=True, help="where the page goes")
    rep.add_argument("--rules", action="append", help="NIDS rules: add the alerts (repeatable)")


def _cluster_args(sub) -> None:
    cl = sub.add_parser(
        "cluster", help="nids, flows or reassemble over a corpus of captures on Ray",
        description="Runs a command over a corpus of captures on a Ray cluster: files cut into "
                    "shards so that every flow is whole in one (large files by a symmetric "
                    "flow hash), one task per shard, outputs merged into --out. A rerun with "
                    "the same arguments does only the shards not done. docs/cluster.md.")
    csub = cl.add_subparsers(dest="cluster_command", required=True)
    for name, what in (("nids", "Suricata-style rules: alerts, transactions and flows as EVE "
                                "(out/eve.json)"),
                       ("flows", "flow records (out/flows.json)"),
                       ("reassemble", "TCP streams as files (out/streams/, index.json)")):
        p = csub.add_parser(name, help=what)
        p.add_argument("--in", dest="inputs", action="append", required=True,
                       help="capture file, directory or glob (repeatable)")
        p.add_argument("--out", required=True, help="output directory (its manifest.json "
                       "lets a rerun finish a stopped job)")
        p.add_argument("--address", default="local",
                       help="local (worker processes on this machine), auto (the cluster this "
                            "machine joined with `ray start`) or HOST:PORT of a Ray head")
        p.add_argument("--workers", type=int, help="local worker processes (default: CPUs)")
        p.add_argument("--split-mb", type=float, default=256.0,
                       help="captures larger than this are cut into parts of about this size "
                            "by flow hash (default 256)")
        p.add_argument("--num-gpus", type=float, default=0.0,
                       help="GPUs each task asks Ray for (with a CUDA --engine)")
        p.add_argument("--retries", type=int, default=3,
                       help="times a task is retried when its worker process dies")
        p.add_argument("--restart", action="store_true",
                       help="start over in --out, forgetting its manifest")
        p.add_argument("--json", help="also write the summary here")
        p.add_argument("--quiet", action="store_true", help="no progress")
        p.add_argument("--engine", default="auto")
        p.add_argument("--capacity", type=int, default=1 << 18, help="flows each table holds")
        p.add_argument("--no-checksum", action="store_true",
                       help="track IPv4 packets whose header checksum does not verify")
        if name == "nids":
            p.add_argument("--rules", action="append", required=True,
                           help="rule file or directory (repeatable)")
            p.add_argument("--set-var", action="append", default=[],
                           help="NAME=VALUE: an address or port variable")
            p.add_argument("--ips", action="store_true", help="inline mode: drop actions drop")
            p.add_argument("--no-flows", action="store_true", help="no flow records in EVE")
            p.add_argument("--no-defrag", action="store_true",
                           help="leave IP fragments as they are")
            p.add_argument("--skip-bad-rules", action="store_true")
        else:
            p.add_argument("--defrag", action="store_true",
                           help="put IP fragments back together first")
        if name == "flows":
            p.add_argument("--on-full", default="evict", choices=["evict", "drop", "pass"])
        if name in ("nids", "reassemble"):
            p.add_argument("--policy", default="bsd", help="overlap policy")
            p.add_argument("--midstream", action="store_true")
        if name == "reassemble":
            p.add_argument("--mode", default="ids", choices=["ids", "inline"])
            p.add_argument("--depth", type=int, default=0)
            p.add_argument("--flow-engine", default="auto")
            p.add_argument("--max-bytes", type=int, default=1 << 30,
                           help="stream bytes a shard holds before it writes them (beyond: "
                                "the shard fails; use --depth or a lower --split-mb)")


def _cluster_options(a) -> dict:
    o = {"engine": a.engine, "capacity": a.capacity, "no_checksum": a.no_checksum}
    if a.cluster_command == "nids":
        variables = {}
        for v in a.set_var:
            name, eq, value = v.partition("=")
            if not eq:
                raise SystemExit(f"warpath: --set-var {v!r}: NAME=VALUE")
            variables[name] = value
        o.update(rules=a.rules, vars=variables, ips=a.ips, flows=not a.no_flows,
                 defrag=not a.no_defrag, skip_bad_rules=a.skip_bad_rules, policy=a.policy,
                 midstream=a.midstream)
    else:
        o["defrag"] = a.defrag
    if a.cluster_command == "flows":
        o["on_full"] = a.on_full
    if a.cluster_command == "reassemble":
        o.update(policy=a.policy, midstream=a.midstream, mode=a.mode, depth=a.depth,
                 flow_engine=a.flow_engine, max_bytes=a.max_bytes)
    return o


def _cluster(a) -> int:
    from . import Error, dist

    try:
        summary = dist.run(a.cluster_command, a.inputs, a.out, address=a.address,
                           workers=a.workers, split_bytes=max(1, int(a.split_mb * (1 << 20))),
                           num_gpus=a.num_gpus, max_retries=a.retries, restart=a.restart,
                           quiet=a.quiet, **_cluster_options(a))
    except KeyboardInterrupt as e:
        print(f"\nwarpath: cluster: interrupted{': ' + str(e) if str(e) else ''}",
              file=sys.stderr)
        return 130
    except (Error, OSError, NotImplementedError) as e:
        print(f"warpath: cluster: {e}", file=sys.stderr)
        return 1
    print(dist.format_summary(summary))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return 1 if summary["failed"] or not summary["check"]["adds_up"] else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="warpath", description="warpath from Python")
    sub = ap.add_subparsers(dest="command", required=True)
    _report_args(sub)
    _cluster_args(sub)
    a = ap.parse_args(argv)
    if a.command == "cluster":
        return _cluster(a)
    from . import Error, report

    try:
        out = report.write(a.capture, a.html, a.rules)
    except (Error, OSError) as e:
        print(f"warpath: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"warpath: report needs matplotlib and pandas ({e}): pip install 'warpath[plot,pandas]'",
              file=sys.stderr)
        return 1
    print(f"{a.capture}: report written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
