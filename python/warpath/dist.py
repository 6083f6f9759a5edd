"""warpath.dist: the NIDS, flow tracking and TCP reassembly over a corpus of captures, sharded
over a Ray cluster (or local worker processes), with the same outputs as single runs.

    >>> from warpath import dist
    >>> summary = dist.run("nids", ["captures/"], "out/", rules=["my.rules"], address="local")

How a corpus is cut (docs/cluster.md)
    Every capture file is one shard when it is at most ``split_bytes`` large; a larger one is
    cut into ``ceil(size / split_bytes)`` parts by a symmetric hash of the flow key
    (``flow_shard``: both directions of a connection alike, as symmetric RSS spreads flows over
    NIC queues), after IP fragments are put back together when the command does so. Each part's
    task reads the whole file and keeps its part's packets (memory bounded by a batch), so every
    flow is whole in one shard and each shard's output is exactly its share of a single run;
    the part's flow clock runs on to the file's last packet before the end, so flows end as
    they would in one run.

What is kept (``out``)
    manifest.json   every shard, its state (pending, done, failed), error, counters, output;
                    a rerun with the same command and options does only the shards not done.
    shards/         each shard's output, written under a temporary name and renamed when whole.
    eve.json        (nids) every shard's EVE records merged by timestamp, ties in shard order.
    flows.json      (flows) every shard's flow records merged by start time, as JSON lines.
    streams/        (reassemble) each shard's stream files under its id, index.json over all.
    summary.json    the counters summed over the shards, and the failed shards by name.

Faults: a task whose worker process dies is retried by Ray (``max_retries``); a shard whose
capture cannot be read (damaged, missing) is marked failed with its error and named in the
summary while the others go on; Ctrl-C cancels the running tasks and keeps the manifest.
"""
from __future__ import annotations

import glob
import hashlib
import heapq
import json
import math
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, List, Optional, Sequence

from . import _Source, __version__, _warpath
from . import Error, InvalidArgumentError

COMMANDS = ("nids", "flows", "reassemble")
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcap.xz", ".pcapng.gz",
                    ".pcapng.xz")
MANIFEST_VERSION = 1

#: The options each command takes (and their defaults), as the single-run functions take them.
OPTIONS = {
    "nids": {"rules": [], "vars": {}, "engine": "auto", "ips": False, "flows": True,
             "policy": "bsd", "midstream": False, "skip_bad_rules": False, "no_checksum": False,
             "capacity": 1 << 18, "defrag": True},
    "flows": {"engine": "auto", "capacity": 1 << 18, "on_full": "evict", "no_checksum": False,
              "defrag": False},
    "reassemble": {"policy": "bsd", "mode": "ids", "midstream": False, "depth": 0,
                   "engine": "auto", "flow_engine": "auto", "capacity": 1 << 18,
                   "no_checksum": False, "max_bytes": 1 << 30, "defrag": False},
}


@dataclass
class Shard:
    """One task's share of the corpus: part ``part`` of ``parts`` of the capture ``path``."""

    id: str
    path: str
    file: int = 0       # the file's place in the job's sorted inputs (flow ids: _global_flow)
    part: int = 0
    parts: int = 1
    size: int = 0       # the file's bytes (its share: size / parts)
    mtime_ns: int = 0
    state: str = "pending"  # pending, done, failed
    error: str = ""
    output: str = ""     # under out/, once done
    stats: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def share_bytes(self) -> float:
        return self.size / self.parts


# ---------------------------------------------------------------------------------------------
# The plan: files found, cut into shards


def find_captures(inputs: Sequence[str]) -> List[str]:
    """The capture files of ``inputs`` (files, directories searched recursively for capture
    suffixes, glob patterns), sorted and without repeats. ``InvalidArgumentError`` when one
    names nothing."""
    found: List[str] = []
    for spec in inputs:
        spec = os.fspath(spec)
        if os.path.isdir(spec):
            hits = [os.path.join(d, f) for d, _, files in os.walk(spec) for f in files
                    if f.endswith(CAPTURE_SUFFIXES)]
        elif any(c in spec for c in "*?["):
            hits = [p for p in glob.glob(spec, recursive=True) if os.path.isfile(p)]
        else:
            hits = [spec]  # a missing file fails its own shard, by name
        if not hits:
            raise InvalidArgumentError(f"{spec}: no capture files there (looked for "
                                       f"{', '.join(CAPTURE_SUFFIXES)})")
        found.extend(hits)
    return sorted(set(os.path.abspath(p) for p in found))


def plan(files: Sequence[str], split_bytes: int = 256 << 20,
         max_parts: int = 1024) -> List[Shard]:
    """Shards for ``files``: one per file of at most ``split_bytes`` bytes, ``ceil(size /
    split_bytes)`` parts (at most ``max_parts``) for a larger one."""
    if split_bytes < 1:
        raise InvalidArgumentError("split_bytes must be at least 1")
    shards = []
    width = max(4, len(str(len(files))))
    for i, path in enumerate(files):
        try:
            st = os.stat(path)
            size, mtime = st.st_size, st.st_mtime_ns
        except OSError:
            size, mtime = 0, 0
        parts = max(1, min(max_parts, math.ceil(size / split_bytes)))
        stem = f"{i:0{width}d}-{_safe(os.path.basename(path))}"
        for k in range(parts):
            sid = stem if parts == 1 else f"{stem}.{k}of{parts}"
            shards.append(Shard(id=sid, path=path, file=i, part=k, parts=parts, size=size,
                                mtime_ns=mtime))
    return shards


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80]


# ---------------------------------------------------------------------------------------------
# One shard: what a Ray task runs


TMP_MARK = ".warpath-tmp-"
#: A temporary name's end: the mark, the host, the process (no shard id ends so: ids end in
#: their capture's name or part, and the mark is not a capture suffix).
_TMP_END = re.compile(re.escape(TMP_MARK) + r"[A-Za-z0-9._-]+-[0-9]+$")


def _tmp_suffix() -> str:
    """A temporary name's suffix no other process, on this machine or another sharing the
    storage, uses at once."""
    return f"{TMP_MARK}{_safe(os.uname().nodename)}-{os.getpid()}"


def _remove_leftovers(out_dir: str) -> None:
    """Temporary files and stream folders of tasks (and merges) killed mid-write in an earlier
    run (the driver's only: one job runs in an output directory at a time)."""
    import shutil

    for d in (out_dir, os.path.join(out_dir, "shards"), os.path.join(out_dir, "streams")):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if _TMP_END.search(name):
                p = os.path.join(d, name)
                shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.remove(p)


def _atomic_write(path: str, write: Callable) -> None:
    """Writes ``path`` through ``write(file)`` under a temporary name, renamed when whole."""
    tmp = f"{path}{_tmp_suffix()}"
    with open(tmp, "w", encoding="utf-8") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _field(line: str, name: str) -> str:
    """A top-level field's text in a JSON line warpath wrote (compact, that field once, before
    any nested object of the same name): the value up to the next comma, unquoted."""
    at = line.find(f'"{name}":')
    if at < 0:
        return ""
    at += len(name) + 3
    if line[at] == '"':
        return line[at + 1:line.index('"', at + 1)]
    end = at
    while end < len(line) and line[end] not in ",}":
        end += 1
    return line[at:end]


def _eve_key(line: str) -> str:
    # EVE timestamps are one fixed-width form (2026-11-28T04:35:37.123456+0000), the records'
    # first field: text order is time order.
    return _field(line, "timestamp")


def _flow_key(line: str) -> float:
    return float(_field(line, "ts") or 0.0)


def _global_flow(shard: dict, serial: int) -> int:
    """A flow's id in a merged output: the file's place in the job's inputs times 2^42, plus
    its part (below 1024: ``plan``'s max_parts) times 2^32, plus the flow's number in its shard. Unique over the corpus and the
    same in every run of the job (a file cut otherwise on a rerun is redone whole); a corpus
    of one whole file keeps the single run's numbers."""
    return (shard["file"] << 42) + (shard["part"] << 32) + serial


def _write_sorted(path: str, lines: List[str], key: Callable[[str], object]) -> None:
    """The lines in key order, ties in their order (a stable sort), under a temporary name."""
    order = sorted(range(len(lines)), key=lambda i: key(lines[i]))
    _atomic_write(path, lambda f: f.writelines(lines[i] + "\n" for i in order))


def _shard_source(shard: dict):
    return shard["path"], ((shard["part"], shard["parts"]) if shard["parts"] > 1 else None)


def run_shard(command: str, shard: dict, options: dict, out_dir: str) -> dict:
    """Runs ``command`` over one shard and writes its output under ``out_dir/shards`` (a
    temporary name renamed when whole). Returns the shard's counters and output name. Raises
    ``warpath.Error`` when its capture cannot be read."""
    delay = float(os.environ.get("WARPATH_DIST_TASK_DELAY", "0") or 0)  # tests: a slow task
    if delay:
        time.sleep(delay)
    started = time.perf_counter()
    path, part = _shard_source(shard)
    shards_dir = os.path.join(out_dir, "shards")
    os.makedirs(shards_dir, exist_ok=True)
    stats: dict
    if command == "nids":
        stats, output = _nids_shard(shard, path, part, options, shards_dir)
    elif command == "flows":
        stats, output = _flows_shard(shard, path, part, options, shards_dir)
    elif command == "reassemble":
        stats, output = _reassemble_shard(shard, path, part, options, out_dir)
    else:
        raise InvalidArgumentError(f"unknown command {command!r} (one of {', '.join(COMMANDS)})")
    return {"id": shard["id"], "output": output, "stats": stats,
            "seconds": time.perf_counter() - started, "host": os.uname().nodename,
            "pid": os.getpid()}


def _nids_shard(shard, path, part, o, shards_dir):
    args = _warpath._NidsArgs()
    args.rules = [os.fspath(r) for r in o["rules"]]
    args.vars = {str(k): str(v) for k, v in o["vars"].items()}
    args.engine, args.policy = o["engine"], o["policy"]
    args.ips, args.midstream, args.flows = o["ips"], o["midstream"], o["flows"]
    args.skip_bad_rules, args.no_checksum = o["skip_bad_rules"], o["no_checksum"]
    args.capacity = o["capacity"]
    args.defrag = "auto" if o["defrag"] else ""
    args.flow_base = _global_flow(shard, 0)
    source = _Source(path, part)
    with source as src:
        lines, counters, engines, read = _warpath._nids(src, args)
    source.rename(read)
    by_type: dict = {}
    for line in lines:
        t = _field(line, "event_type")
        by_type[t] = by_type.get(t, 0) + 1
    name = f"{shard['id']}.eve.json"
    _write_sorted(os.path.join(shards_dir, name), lines, _eve_key)
    stats = dict(counters)
    stats.update(read=read, records=by_type, engines=engines)
    return stats, f"shards/{name}"


def _flows_shard(shard, path, part, o, shards_dir):
    source = _Source(path, part)
    with source as src:
        lines, counters, engine, read = _warpath._flows(
            src, o["engine"], o["capacity"], o["on_full"], o["no_checksum"],
            "auto" if o["defrag"] else "", _global_flow(shard, 0))
    source.rename(read)
    name = f"{shard['id']}.flows.json"
    _write_sorted(os.path.join(shards_dir, name), lines, _flow_key)
    stats = dict(counters)
    stats.update(read=read, engine=engine, records=len(lines))
    return stats, f"shards/{name}"


def _reassemble_shard(shard, path, part, o, out_dir):
    from . import reassemble

    got = reassemble(path, policy=o["policy"], mode=o["mode"], midstream=o["midstream"],
                     depth=o["depth"], engine=o["engine"], flow_engine=o["flow_engine"],
                     capacity=o["capacity"], no_checksum=o["no_checksum"],
                     max_bytes=o["max_bytes"], defrag=o["defrag"], shard=part)
    # The stream files under streams/<shard id>/, named as warpath reassemble names them; the
    # directory is written under a temporary name and renamed when whole.
    final = os.path.join(out_dir, "streams", shard["id"])
    tmp = f"{final}{_tmp_suffix()}"
    os.makedirs(tmp, exist_ok=True)
    index = []
    for s in got:
        fname = f"{s['flow']:06}-{s['src']}-{s['dst']}"
        with open(os.path.join(tmp, fname), "wb") as f:
            f.write(s["data"])
        index.append({"flow": _global_flow(shard, s["flow"]), "dir": s["dir"], "file": f"{shard['id']}/{fname}",
                      "src": s["src"], "dst": s["dst"], "bytes": len(s["data"]),
                      "gaps": [{"offset": o_, "length": n} for o_, n in s["gaps"]],
                      "end": s["end"]})
    with open(os.path.join(tmp, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"shard": shard["id"], "streams": index}, f)
    if os.path.isdir(final):  # a retried task's earlier, whole output
        import shutil

        shutil.rmtree(final)
    os.replace(tmp, final)
    stats = dict(got.counters)
    stats.update(read=got.read, engine=got.engine, records=len(index))
    return stats, f"streams/{shard['id']}"


# ---------------------------------------------------------------------------------------------
# The manifest


def _fingerprint(command: str, options: dict) -> str:
    text = json.dumps({"command": command, "options": options}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Manifest:
    """out/manifest.json: the job (command, options), its shards and their states. Written by
    the driver only, whole each time (a temporary file renamed)."""

    def __init__(self, out_dir: str, command: str, options: dict, shards: List[Shard]):
        self.path = os.path.join(out_dir, "manifest.json")
        self.out_dir = out_dir
        self.command, self.options, self.shards = command, options, shards
        self.fingerprint = _fingerprint(command, options)

    @classmethod
    def open(cls, out_dir: str, command: str, options: dict, shards: List[Shard],
             restart: bool = False) -> "Manifest":
        """The job's manifest: the one in ``out_dir`` when it is this job's (same command and
        options; its done shards kept where their file is unchanged and their output is
        there), else a new one. ``InvalidArgumentError`` when ``out_dir`` holds another job's
        and ``restart`` is not set."""
        m = cls(out_dir, command, options, shards)
        if restart or not os.path.exists(m.path):
            return m
        try:
            with open(m.path, encoding="utf-8") as f:
                old = json.load(f)
        except (OSError, ValueError) as e:
            raise InvalidArgumentError(f"{m.path}: cannot read it ({e}); use --restart") from None
        if old.get("fingerprint") != m.fingerprint:
            raise InvalidArgumentError(
                f"{out_dir} holds the output of another job ({old.get('command')} with other "
                "options, inputs, rule files or warpath): use another --out, or --restart to "
                "start over there")
        before = {s["id"]: s for s in old.get("shards", [])}
        for s in shards:
            o = before.get(s.id)
            if (o and o.get("state") == "done" and o.get("path") == s.path
                    and o.get("size") == s.size and o.get("mtime_ns") == s.mtime_ns
                    and o.get("output") and os.path.exists(os.path.join(out_dir, o["output"]))):
                s.state, s.output = "done", o["output"]
                s.stats, s.seconds = o.get("stats", {}), o.get("seconds", 0.0)
        return m

    def save(self) -> None:
        doc = {"warpath": __version__, "manifest": MANIFEST_VERSION, "command": self.command,
               "options": self.options, "fingerprint": self.fingerprint,
               "shards": [asdict(s) for s in self.shards]}
        _atomic_write(self.path, lambda f: json.dump(doc, f, indent=1, default=str))


# ---------------------------------------------------------------------------------------------
# Progress


class Progress:
    """Shards done, packets and bytes per second, ETA: one rewritten line on a TTY, JSON lines
    otherwise (``stream``: standard error unless told)."""

    def __init__(self, shards: List[Shard], stream=None, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.quiet = quiet
        self.total = len(shards)
        self.total_bytes = sum(s.share_bytes for s in shards)
        self.start = time.monotonic()
        self.done = self.failed = 0
        self.before = sum(1 for s in shards if s.state == "done")
        self.bytes = self.packets = 0.0

    def shard(self, s: Shard) -> None:
        if s.state == "done":
            self.done += 1
            self.bytes += s.share_bytes
            self.packets += s.stats.get("read", {}).get("handed_out", 0)
        else:
            self.failed += 1
        self.show(s)

    def show(self, last: Optional[Shard] = None) -> None:
        if self.quiet:
            return
        elapsed = max(time.monotonic() - self.start, 1e-9)
        finished = self.before + self.done + self.failed
        remaining_bytes = self.total_bytes - self.bytes
        rate = self.bytes / elapsed
        eta = remaining_bytes / rate if rate > 0 and finished < self.total else None
        if self.tty:
            text = (f"\rshards {finished}/{self.total}"
                    + (f" ({self.failed} failed)" if self.failed else "")
                    + f", {self.packets / elapsed / 1e3:,.1f} Kpps, {rate / 1e6:,.1f} MB/s"
                    + (f", ETA {_clock(eta)}" if eta is not None else "") + "   ")
            self.stream.write(text)
        else:
            rec = {"progress": {"shards_done": finished, "shards": self.total,
                                "failed": self.failed, "elapsed_s": round(elapsed, 3),
                                "packets_per_s": round(self.packets / elapsed, 1),
                                "bytes_per_s": round(rate, 1),
                                "eta_s": None if eta is None else round(eta, 1)}}
            if last is not None:
                rec["progress"]["shard"] = last.id
                rec["progress"]["state"] = last.state
            self.stream.write(json.dumps(rec) + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\r" + " " * 79 + "\r")
            self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


# ---------------------------------------------------------------------------------------------
# The driver


def _ray():
    try:
        import ray
    except ImportError:
        raise NotImplementedError(
            "warpath.dist needs Ray: pip install 'ray>=2.9' (python/requirements.txt)") from None
    return ray


def connect(address: str = "local", workers: Optional[int] = None):
    """Ray for the driver: ``local`` starts a cluster of this machine's processes (``workers``
    of them, default one per CPU), ``auto`` joins the cluster this machine belongs to (``ray
    start`` ran here), ``HOST:PORT`` joins that cluster's head. Idempotent."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    import logging

    kwargs = dict(logging_level=logging.WARNING, log_to_driver=True, include_dashboard=False,
                  configure_logging=True)
    if address == "local":
        # The workers import warpath from where this process did (a build tree or a venv).
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.pathsep.join(p for p in [here, os.environ.get("PYTHONPATH", "")] if p)
        ray.init(address="local", num_cpus=workers or os.cpu_count(),
                 object_store_memory=128 << 20,
                 runtime_env={"env_vars": {"PYTHONPATH": path}}, **kwargs)
    else:
        ray.init(address=address, **kwargs)
    return ray


def run(command: str, inputs: Sequence[str], out_dir: str, *, address: str = "local",
        workers: Optional[int] = None, split_bytes: int = 256 << 20, num_gpus: float = 0.0,
        max_retries: int = 3, restart: bool = False, progress=None, quiet: bool = False,
        **options) -> dict:
    """Runs ``command`` (nids, flows or reassemble) over the captures of ``inputs`` (files,
    directories, globs) on Ray and merges the shards' outputs into ``out_dir``. ``options``
    are the single-run function's (``warpath.nids``: rules, vars, engine, ...). Returns the
    summary (also out_dir/summary.json). A rerun with the same arguments does only the shards
    not done. ``num_gpus``: GPUs each task asks for (with a CUDA engine in ``engine``)."""
    if command not in COMMANDS:
        raise InvalidArgumentError(f"unknown command {command!r} (one of {', '.join(COMMANDS)})")
    unknown = set(options) - set(OPTIONS[command])
    if unknown:
        raise InvalidArgumentError(f"{command}: unknown option(s) {', '.join(sorted(unknown))}")
    opts = dict(OPTIONS[command])
    opts.update(options)
    if command == "nids":
        if not opts["rules"]:
            raise InvalidArgumentError("nids: rules are needed")
        if isinstance(opts["rules"], (str, os.PathLike)):
            opts["rules"] = [opts["rules"]]
        opts["rules"] = [os.path.abspath(os.fspath(r)) for r in opts["rules"]]
        if not getattr(_warpath, "_HAVE_NIDS", False):
            from . import NotBuiltError

            raise NotBuiltError("nids: this build of warpath has no NIDS")
    files = find_captures(inputs)
    notes = []
    cut = split_bytes
    if command == "nids":
        held = _cross_flow_rules(opts)
        if held:
            # Their counts span flows: a cut by flow would count them per part.
            cut = 1 << 62
            notes.append(f"{len(held)} rule(s) count across flows (threshold, detection_filter, xbits: "
                         f"sid {', '.join(map(str, held[:5]))}{', ...' if len(held) > 5 else ''})"
                         ": no capture is cut, each file is one shard")
    shards = plan(files, cut)
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    # The job: its command and options, its inputs, how they are cut, what the rules' files
    # and warpath are (an edited rule file or another warpath makes another job).
    job = dict(opts, inputs=files, split_bytes=cut, warpath=__version__,
               rule_files=_rule_files(opts.get("rules", [])))
    manifest = Manifest.open(out_dir, command, job, shards, restart=restart)
    manifest.save()
    _remove_leftovers(out_dir)
    todo = [s for s in shards if s.state != "done"]
    already = len(shards) - len(todo)
    prog = Progress(shards, progress, quiet)
    started = time.monotonic()
    interrupted = False
    if todo:
        ray = connect(address, workers)
        prog.start = time.monotonic()  # rates from here: Ray's start is not the job's
        task = ray.remote(run_shard).options(num_cpus=1, num_gpus=num_gpus or None,
                                             max_retries=max_retries, retry_exceptions=False)
        pending = {task.remote(command, asdict(s), opts, out_dir): s for s in todo}
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                if not ready:
                    prog.show()
                    continue
                ref = ready[0]
                s = pending.pop(ref)
                try:
                    got = ray.get(ref)
                    s.state, s.output, s.stats = "done", got["output"], got["stats"]
                    s.seconds, s.error = got["seconds"], ""
                except Exception as e:  # the shard's own failure, or its worker's after retries
                    s.state, s.error = "failed", _task_error(e, s)
                manifest.save()
                prog.shard(s)
        except KeyboardInterrupt:
            interrupted = True
            for ref in pending:
                ray.cancel(ref, force=True)
            manifest.save()
    prog.end()
    summary = _summary(command, manifest, already, time.monotonic() - started, interrupted)
    summary["notes"] = notes
    if not interrupted:
        summary["outputs"] = merge(command, manifest)
    _atomic_write(os.path.join(out_dir, "summary.json"),
                  lambda f: json.dump(summary, f, indent=1))
    if interrupted:
        raise KeyboardInterrupt(
            f"{summary['shards']['done']} of {summary['shards']['total']} shards done; rerun "
            "the same command to finish the rest")
    return summary


def _cross_flow_rules(opts: dict) -> List[int]:
    """The sids of rules whose state spans flows (thresholds, xbits), from the rules as compiled."""
    args = _warpath._NidsArgs()
    args.rules = list(opts["rules"])
    args.vars = {str(k): str(v) for k, v in opts["vars"].items()}
    args.skip_bad_rules = opts["skip_bad_rules"]
    return list(_warpath._nids_cross_flow_rules(args))


def _rule_files(rules: Sequence[str]) -> list:
    """(path, sha-256 of its content) of every rule file the rules name (a directory's *.rules
    and *.rules.gz, as the NIDS reads them): the same rules rewritten unchanged (as
    suricata-update does) are the same job."""
    out = []
    for r in rules:
        paths = ([os.path.join(r, f) for f in sorted(os.listdir(r))
                  if f.endswith((".rules", ".rules.gz"))] if os.path.isdir(r) else [r])
        for p in paths:
            h = hashlib.sha256()
            try:
                with open(p, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                out.append([p, h.hexdigest()])
            except OSError:
                out.append([p, None])
    return out


def _task_error(e: Exception, s: Shard) -> str:
    cause = getattr(e, "cause", None)
    if isinstance(cause, Error) or isinstance(cause, OSError):
        return f"{type(cause).__name__}: {cause}"
    text = str(e).strip().splitlines()
    kind = type(e).__name__
    return f"{kind}: {text[-1] if text else ''}"


def _add(total: dict, part: dict) -> None:
    for k, v in part.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            total[k] = total.get(k, 0) + v
        elif isinstance(v, dict):
            _add(total.setdefault(k, {}), v)


def _summary(command: str, m: Manifest, already: int, seconds: float,
             interrupted: bool) -> dict:
    done = [s for s in m.shards if s.state == "done"]
    failed = [s for s in m.shards if s.state == "failed"]
    counters: dict = {}
    for s in done:
        _add(counters, {k: v for k, v in s.stats.items()
                        if k not in ("read", "max_active", "rules")})
    if done and "rules" in done[0].stats:
        counters["rules"] = done[0].stats["rules"]  # every shard loads the same rules
    read: dict = {}
    for s in done:
        r = s.stats.get("read", {})
        _add(read, {"handed_out": r.get("handed_out", 0)})
    # Each file's records and packets once (every part of a file reads all of it).
    files: dict = {}
    for s in done:
        files.setdefault(s.path, []).append(s)
    for path, parts in files.items():
        r = parts[0].stats.get("read", {})
        _add(read, {"records": r.get("records", 0), "packets": r.get("packets", 0)})
    whole = [p for p, parts in files.items() if len(parts) == parts[0].parts]
    check = {"files_whole": len(whole),
             "packets_of_whole_files": sum(files[p][0].stats["read"]["packets"] for p in whole),
             "packets_in_their_shards": sum(s.stats["read"]["handed_out"]
                                            for p in whole for s in files[p])}
    # Every part of a file read the same file: the same records and packets (a file changed
    # while the job ran would differ).
    check["parts_agree"] = all(
        len({(s.stats["read"].get("records"), s.stats["read"].get("packets")) for s in parts}) == 1
        for parts in files.values())
    check["adds_up"] = (check["packets_of_whole_files"] == check["packets_in_their_shards"]
                        and check["parts_agree"])
    warnings = [f"{s.id}: {w}" for s in done for w in s.stats.get("read", {}).get("warnings", [])
                if s.part == 0]
    return {"command": command, "warpath": __version__, "seconds": round(seconds, 3),
            "interrupted": interrupted,
            "shards": {"total": len(m.shards), "done": len(done), "failed": len(failed),
                       "done_before": already, "pending": len(m.shards) - len(done) - len(failed)},
            "read": read, "check": check, "counters": counters, "warnings": warnings,
            "failed": [{"shard": s.id, "path": s.path, "error": s.error} for s in failed]}


# ---------------------------------------------------------------------------------------------
# Merging


#: Files merged at once (each an open file): more are merged in rounds.
MERGE_FAN_IN = 128


def _merge_files(paths: List[str], target: str, key: Callable[[str], object]) -> int:
    """Merges sorted JSON-line files into `target` (a temporary name renamed when whole) and
    returns the lines written. heapq.merge is stable (equal keys in the order of the inputs),
    and a round merges runs of consecutive inputs, so ties stay in the inputs' order. More
    than MERGE_FAN_IN inputs are merged in rounds; a round's files go once the next is made
    (the names are temporary ones: a merge killed midway leaves what the next run removes)."""
    import contextlib

    made: List[str] = []  # this call's round files still on disk
    try:
        level = 0
        while len(paths) > MERGE_FAN_IN:
            merged = []
            for i in range(0, len(paths), MERGE_FAN_IN):
                part = f"{target}.round{level}-{i // MERGE_FAN_IN}{_tmp_suffix()}"
                made.append(part)
                _merge_files(paths[i:i + MERGE_FAN_IN], part, key)
                merged.append(part)
            for p in paths:  # the previous round's, not the shards' own
                if p in made:
                    os.remove(p)
                    made.remove(p)
            paths, level = merged, level + 1
        n = 0
        with contextlib.ExitStack() as stack:
            files = [stack.enter_context(open(p, encoding="utf-8")) for p in paths]

            def write(f):
                nonlocal n
                for _, line in heapq.merge(*(((key(x), x) for x in src) for src in files),
                                           key=lambda kl: kl[0]):
                    f.write(line)
                    n += 1

            _atomic_write(target, write)
        return n
    finally:
        for p in made:
            if os.path.exists(p):
                os.remove(p)


def merge(command: str, m: Manifest) -> dict:
    """Merges the done shards' outputs into the job's output (in shard order for ties) and
    returns what was written."""
    done = [s for s in m.shards if s.state == "done"]
    out = m.out_dir
    if command in ("nids", "flows"):
        name = "eve.json" if command == "nids" else "flows.json"
        key = _eve_key if command == "nids" else _flow_key
        n = _merge_files([os.path.join(out, s.output) for s in done],
                         os.path.join(out, name), key)
        return {name: n}
    index, counters = [], {}
    for s in done:
        with open(os.path.join(out, s.output, "index.json"), encoding="utf-8") as f:
            index.extend(dict(e, shard=s.id) for e in json.load(f)["streams"])
        _add(counters, {k: v for k, v in s.stats.items() if k != "read"})
    doc = {"captures": sorted({s.path for s in done}), "streams": index, "counters": counters}
    _atomic_write(os.path.join(out, "streams", "index.json"),
                  lambda f: json.dump(doc, f, indent=1))
    return {"streams/index.json": len(index)}


def format_summary(summary: dict) -> str:
    """The summary as the single-run commands print theirs: a few lines of text."""
    s, c, r = summary["shards"], summary["counters"], summary["read"]
    lines = [f"{summary['command']}: {s['done']} of {s['total']} shards done"
             + (f" ({s['done_before']} before this run)" if s["done_before"] else "")
             + (f", {s['failed']} failed" if s["failed"] else "")
             + f" in {summary['seconds']:.1f} s; {r.get('records', 0)} records read"
             + (f" ({r.get('packets', 0)} packets after defragmentation)"
                if r.get("packets", 0) != r.get("records", 0) else "")
             + f", {r.get('handed_out', 0)} packets in shards"
             + ("" if summary["check"]["adds_up"] else " (DOES NOT ADD UP)")]
    if summary["command"] == "nids":
        rec = c.get("records", {})
        lines.append(f"  {c.get('alerts', 0)} alerts, {rec.get('flow', 0)} flows, "
                     f"{sum(v for k, v in rec.items() if k not in ('alert', 'flow'))} "
                     f"transactions, {c.get('dropped', 0)} dropped")
    elif summary["command"] == "flows":
        lines.append(f"  {c.get('flows', 0)} flows; ended: "
                     + ", ".join(f"{v} {k}" for k, v in c.get("ended", {}).items()))
    else:
        lines.append(f"  {c.get('records', 0)} streams, {c.get('delivered_bytes', 0)} bytes "
                     f"delivered, {c.get('gaps', 0)} gaps")
    for name, n in summary.get("outputs", {}).items():
        lines.append(f"  {n} records in {name}")
    for note in summary.get("notes", []):
        lines.append(f"  note: {note}")
    for w in summary["warnings"]:
        lines.append(f"  warning: {w}")
    for f in summary["failed"]:
        lines.append(f"  FAILED {f['shard']}: {f['error']}")
    return "\n".join(lines)
