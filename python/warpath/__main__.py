"""python -m warpath report CAPTURE --html FILE [--rules FILE ...]: a capture's HTML report
(warpath.report); `warpath report` runs this."""
import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="warpath", description="warpath from Python")
    sub = ap.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="a capture's plots and tables as one HTML page")
    rep.add_argument("capture", help="pcap or pcapng (.gz/.xz too)")
    rep.add_argument("--html", required=True, help="where the page goes")
    rep.add_argument("--rules", action="append", help="NIDS rules: add the alerts (repeatable)")
    a = ap.parse_args(argv)
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
