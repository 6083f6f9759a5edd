"""`warpath report` and warpath.report: one self-contained HTML page with a capture's plots and
tables, rendered in headless Chromium (Debian's) with every plot decoded."""

import re
import shutil
import subprocess

import pytest
from pyutil import REPO, WARPATH_BIN, data, need_package

warpath = need_package()

DEMO = REPO / "examples" / "nids" / "demo.pcap"
RULES = REPO / "examples" / "nids" / "demo.rules"


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no headless browser (apt-get install chromium)")


def rendered(page):
    """The page's DOM after load in headless Chromium."""
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cli_report_renders_with_every_plot(tmp_path):
    if not WARPATH_BIN.is_file():
        pytest.skip(f"warpath binary not found at {WARPATH_BIN}")
    out = tmp_path / "report.html"
    r = subprocess.run([str(WARPATH_BIN), "report", str(DEMO), "--html", str(out), "--rules",
                        str(RULES)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "http://" not in page and "https://" not in page  # self-contained
    assert len(re.findall(r'<img class="plot"', page)) == 6
    for heading in ("Summary", "Protocol mix over time", "Top talkers", "Flow sizes",
                    "Alerts over time", "Largest flows"):
        assert f"<h2>{heading}" in page, heading
    assert 'data-plots="ok"' in rendered(out)
    # the alert table names the demo's signatures, with their counts
    from collections import Counter
    alerts = Counter((e["alert"]["signature_id"], e["alert"]["signature"])
                     for e in warpath.nids(RULES, DEMO, flows=False) if e["event_type"] == "alert")
    table = page[page.index("<h2>Alerts ("):]
    for (sid, msg), n in alerts.items():
        assert f"<tr><td>{sid}</td><td>{msg}</td><td>{n}</td></tr>" in table, (sid, msg)


def test_python_report_of_a_shared_capture(tmp_path):
    from warpath import report

    out = tmp_path / "http.html"
    report.write(data("pcap", "zeek", "http-pipelined-requests.pcap"), out)
    page = out.read_text()
    assert "Alerts" not in page and len(re.findall(r'<img class="plot"', page)) == 5
    assert 'data-plots="ok"' in rendered(out)


def test_report_errors(tmp_path):
    if not WARPATH_BIN.is_file():
        pytest.skip(f"warpath binary not found at {WARPATH_BIN}")
    r = subprocess.run([str(WARPATH_BIN), "report", str(tmp_path / "absent.pcap"), "--html",
                        str(tmp_path / "x.html")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "absent.pcap" in r.stderr
    assert not (tmp_path / "x.html").exists()
    r = subprocess.run([str(WARPATH_BIN), "report", str(DEMO)], capture_output=True, text=True)
    assert r.returncode != 0 and "--html" in r.stderr
