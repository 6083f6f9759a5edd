"""warpath from Python: packet-processing engines over numpy arrays.

The compiled engines of warpath (longest-prefix match, packet classification, pattern
matching, capture reading and packet parsing) with numpy arrays in and out:

    >>> import numpy as np, warpath
    >>> fib = warpath.Fib.from_text("10.0.0.0/8 1\\n10.1.0.0/16 2\\n")
    >>> fib.lookup(warpath.ipv4(["10.1.2.3", "10.9.9.9", "192.0.2.1"])).tolist()
    [2, 1, 4294967295]

Every batch call runs without the GIL; arrays are read in place where their layout is the
engine's and answers own the engine's output buffer. Errors are ``warpath.Error`` (and a
subclass per code, each also the built-in exception a Python user would catch: ``ParseError``
is a ``ValueError``, ``IoError`` an ``OSError``) with the message the CLI prints: file, line,
reason. docs/python.md is the tutorial.
"""
from __future__ import annotations

import gzip
import lzma
import os
import shutil
from typing import Iterator, Optional, Sequence, Union

import numpy as np

from . import _warpath
from ._warpath import (
    NO_MATCH,
    NO_ROUTE,
    CapacityError,
    Classifier,
    CudaError,
    Error,
    Fib,
    InvalidArgumentError,
    IoError,
    NotBuiltError,
    NotFoundError,
    NotSupportedError,
    OutOfMemoryError,
    ParseError,
    __version__,
    build_info,
    cuda_devices,
    format_ipv4,
    format_ipv6,
    ipv4,
    ipv6,
    load_keys,
)

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "NO_MATCH", "NO_ROUTE", "MATCH_DTYPE", "META_DTYPE", "PACKET_INFO_DTYPE",
    "Error", "InvalidArgumentError", "ParseError", "IoError", "NotFoundError",
    "NotSupportedError", "NotBuiltError", "CapacityError", "OutOfMemoryError", "CudaError",
    "Fib", "Classifier", "Patterns", "Capture", "Packets",
    "read_pcap", "parse", "write_pcap", "flows", "Flows", "reassemble", "Streams", "nids", "Chain", "engines", "ipv4", "ipv6", "format_ipv4",
    "format_ipv6", "load_keys", "five_tuple_keys", "cuda_devices", "build_info",
    "__version__",
]


def _dtype(fields, itemsize: int) -> np.dtype:
    names, formats, offsets = [], [], []
    for name, typ, offset, count in fields:
        names.append(name)
        formats.append(typ if count == 1 else (typ, (count,)))
        offsets.append(offset)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": itemsize})


#: A packet record of a capture (PacketMeta): where its bytes are, their lengths, its time.
META_DTYPE = _dtype(_warpath._meta_fields(), 24)
#: A parse result (PacketInfo, 64 bytes): the header fields the parser found.
PACKET_INFO_DTYPE = _dtype(_warpath._info_fields(), 64)
#: A pattern match: the pattern id and the offset just past the match's last byte.
MATCH_DTYPE = np.dtype({"names": ["id", "end"], "formats": ["<u4", "<u8"],
                        "offsets": [0, 8], "itemsize": 16})
_PARSE_STATUS = _warpath._parse_status_names()
_L3 = ["none", "arp", "ipv4", "ipv6", "other"]


def engines(kind: str) -> list:
    """The engines of a registry: ``'lookup'``, ``'classify'``, ``'pattern'``, ``'parse'`` or
    ``'flow'``.

    Each is a dict with ``id``, ``description``, ``priority`` (``auto`` picks the highest
    available) and ``available`` (whether it runs here: CUDA engines need a GPU).
    """
    table = {"lookup": _warpath._engines_lookup, "classify": _warpath._engines_classify,
             "pattern": _warpath._engines_pattern, "parse": _warpath._parser_engines,
             "flow": _warpath._flow_engines}
    if kind not in table:
        raise InvalidArgumentError(f"engines: unknown kind {kind!r} (one of {', '.join(table)})")
    return table[kind]()


def five_tuple_keys(src, dst, sport, dport, proto) -> np.ndarray:
    """5-tuple keys for ``Classifier.classify`` from columns (IPv4 addresses in host order).

    Returns an (n, 4) uint32 array in Fortran order (the engines read it in place).
    """
    cols = [np.asarray(c, dtype=np.uint32) for c in (src, dst, sport, dport, proto)]
    n = len(cols[0])
    if any(len(c) != n for c in cols):
        raise InvalidArgumentError("five_tuple_keys: the columns differ in length")
    keys = np.empty((n, 4), dtype=np.uint32, order="F")
    keys[:, 0] = cols[0]
    keys[:, 1] = cols[1]
    keys[:, 2] = (cols[2] << 16) | (cols[3] & 0xFFFF)
    keys[:, 3] = cols[4]
    return keys


class Patterns:
    """A pattern database compiled for one engine (Vectorscan's ``cpu.hs`` under ``auto``).

    ``patterns`` is a pattern file's path, or a list of lines (``'1:/abc/i'``, Hyperscan's
    ``ID:/REGEX/FLAGS`` form). ``scan`` gives every match as a structured array of
    (``id``, ``end``): the end offset is just past the match's last byte, as Hyperscan reports.
    One thread at a time scans one Patterns object (others wait); ``clone()`` gives another
    thread its own scratch over the same database, and scans run without the GIL.
    """

    def __init__(self, patterns, engine: str = "auto", validate: bool = False, *, _impl=None):
        if _impl is not None:
            self._impl = _impl
        elif isinstance(patterns, (str, os.PathLike)):
            self._impl = _warpath._Patterns.from_file(os.fspath(patterns), engine, validate)
        else:
            self._impl = _warpath._Patterns.from_lines(list(patterns), engine, validate)

    @property
    def engine(self) -> str:
        """The engine id that scans."""
        return self._impl.engine

    @property
    def database_bytes(self) -> int:
        """Bytes of the compiled database."""
        return self._impl.database_bytes

    def __len__(self) -> int:
        return len(self._impl)

    def scan(self, data) -> np.ndarray:
        """Every match in ``data`` (bytes, bytearray, memoryview or a uint8 array), sorted by
        (end, id), as a structured array of ``MATCH_DTYPE``."""
        if isinstance(data, bytes):
            raw = self._impl.scan(data)
        else:
            arr = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
            if arr.dtype != np.uint8 or arr.ndim != 1:
                raise InvalidArgumentError(
                    f"scan: data must be bytes or a 1-D uint8 array, not {arr.dtype} "
                    f"with shape {arr.shape}")
            raw = self._impl.scan(np.ascontiguousarray(arr))
        return raw.view(MATCH_DTYPE).reshape(-1)

    def scan_capture(self, capture: "Capture", payload_only: bool = False):
        """Matches in every packet of a capture: (matches, packet index of each).

        ``payload_only`` scans from the transport payload (after the TCP/UDP header), as a
        packet rule's content does; otherwise the whole captured frame."""
        starts = capture.meta["offset"].astype(np.uint64)
        lengths = capture.meta["caplen"].astype(np.uint64)
        if payload_only:
            info = capture.parse()
            skip = _payload_offsets(capture, info)
            starts = starts + np.minimum(skip, lengths)
            lengths = lengths - np.minimum(skip, lengths)
        spans = np.ascontiguousarray(np.stack([starts, lengths], axis=1))
        raw, which = self._impl.scan_blocks(capture.buffer, spans)
        return raw.view(MATCH_DTYPE).reshape(-1), which

    def clone(self) -> "Patterns":
        """Another matcher over the same compiled database, for another thread."""
        return Patterns(None, _impl=self._impl.clone())


def _payload_offsets(capture: "Capture", info: np.ndarray) -> np.ndarray:
    """Bytes before the transport payload of each packet (0 where there is no TCP/UDP)."""
    buf, meta = capture.buffer, capture.meta
    out = np.zeros(len(info), dtype=np.uint64)
    for i in np.nonzero(info["l4_offset"] > 0)[0]:
        l4 = int(info["l4_offset"][i])
        base = int(meta["offset"][i])
        if info["proto"][i] == 6 and meta["caplen"][i] > l4 + 12:
            out[i] = l4 + 4 * (int(buf[base + l4 + 12]) >> 4)
        elif info["proto"][i] == 17:
            out[i] = l4 + 8
    return out


class Packets(np.ndarray):
    """Parse results: a structured array of ``PACKET_INFO_DTYPE`` (one record per packet),
    with ``to_pandas()`` where pandas is installed."""

    def __array_finalize__(self, obj):
        self.timestamp_ns = getattr(obj, "timestamp_ns", None)

    def to_pandas(self):
        """A pandas DataFrame: one row per packet; addresses as text, the parse status, L3
        kind as names, and the capture time where the packets came from a capture."""
        import pandas as pd

        rec = np.asarray(self).view(np.ndarray)
        cols = {}
        if self.timestamp_ns is not None and len(self.timestamp_ns) == len(rec):
            cols["time"] = pd.to_datetime(np.asarray(self.timestamp_ns, dtype=np.int64), unit="ns")
        cols["status"] = pd.Categorical([_PARSE_STATUS[s] for s in rec["status"]])
        cols["l3"] = pd.Categorical([_L3[x] if x < len(_L3) else str(x) for x in rec["l3"]])
        for name in ("ip_version", "proto", "sport", "dport", "tcp_flags", "ttl", "tos",
                     "icmp_type", "icmp_code", "vlan_count", "flags", "tunnel", "ethertype",
                     "l3_offset", "l4_offset"):
            cols[name] = rec[name]
        cols["src"] = _addresses(rec, "src")
        cols["dst"] = _addresses(rec, "dst")
        return pd.DataFrame(cols)


def _addresses(rec: np.ndarray, field: str) -> list:
    """A record field's addresses as text, as the CLI prints them (None where not IP)."""
    return _warpath._ip_strings(np.ascontiguousarray(rec["ip_version"]),
                                np.ascontiguousarray(rec[field]))


class Capture:
    """A whole capture in memory: ``len``, indexing and iteration give packets' bytes;
    ``meta`` (a structured array of ``META_DTYPE``) and ``buffer`` are views of warpath's own
    batch (no copy)."""

    def __init__(self, impl, path: str):
        self._impl = impl
        self.path = path
        self.buffer: np.ndarray = impl.buffer()
        self.meta: np.ndarray = impl.meta().view(META_DTYPE).reshape(-1)

    def __len__(self) -> int:
        return len(self._impl)

    def __getitem__(self, i: int) -> bytes:
        return self._impl.packet(i)

    def __iter__(self) -> Iterator[bytes]:
        for i in range(len(self)):
            yield self._impl.packet(i)

    def __repr__(self) -> str:
        return f"<warpath.Capture {self.path!r}: {len(self)} packets>"

    @property
    def timestamps(self) -> np.ndarray:
        """Capture times, nanoseconds since the epoch (a view)."""
        return self.meta["timestamp_ns"]

    @property
    def info(self) -> dict:
        """The file's link type, snap length, format (pcap, pcapng) and time precision."""
        return self._impl.info()

    def parse(self, engine: str = "auto") -> Packets:
        """Every packet parsed (see ``warpath.parse``)."""
        out = self._impl.parse(engine).view(PACKET_INFO_DTYPE).reshape(-1).view(Packets)
        out.timestamp_ns = self.timestamps
        return out


def _materialise(source) -> tuple:
    """A path libpcap can open for ``source``: the path itself, or for a .gz/.xz file or a
    file object, an in-memory file (memfd) holding the decompressed bytes. Returns (path, fd to
    close or None, name for messages)."""
    if hasattr(source, "read"):
        name = getattr(source, "name", "<file object>")
        stream = source
    else:
        path = os.fspath(source)
        if not (path.endswith(".gz") or path.endswith(".xz")):
            return path, None, path
        name = path
        try:
            stream = (gzip.open if path.endswith(".gz") else lzma.open)(path, "rb")
        except OSError as e:
            raise IoError(f"{path}: cannot open: {e.strerror or e}") from None
    fd = os.memfd_create("warpath-capture")
    try:
        with os.fdopen(os.dup(fd), "wb") as out:
            shutil.copyfileobj(stream, out, 1 << 20)
    except (OSError, EOFError, lzma.LZMAError) as e:
        os.close(fd)
        raise IoError(f"{name}: cannot decompress: {e}") from None
    finally:
        if stream is not source:
            stream.close()
    return f"/proc/self/fd/{fd}", fd, str(name)


def read_pcap(source, filter: Optional[str] = None) -> Capture:
    """Reads a whole capture: pcap or pcapng, a .gz or .xz of one, a FIFO or pipe path
    (``tcpdump -w -`` into it), or a binary file object. ``filter`` is a BPF expression (as
    tcpdump takes it). Link types libpcap hands out as Linux cooked or raw IP are given as
    Ethernet frames, as the CLI reads them."""
    path, fd, name = _materialise(source)
    try:
        impl = _warpath._Capture.read(path, filter or "")
    except Error as e:
        if fd is None:
            raise
        raise type(e)(str(e).replace(path, name)) from None
    finally:
        if fd is not None:
            os.close(fd)
    return Capture(impl, name)


def _as_capture(capture) -> Capture:
    """A ``Capture`` as it is, anything else through ``read_pcap``."""
    return capture if isinstance(capture, Capture) else read_pcap(capture)


class _Source:
    """What flows, reassemble and nids read: a ``Capture`` held in memory, or a capture file
    streamed batch by batch as the CLI reads it (memory bounded by the batch; a .gz/.xz file or
    a file object decompressed by a thread into a pipe the reader reads), optionally one part
    of N (``shard=(k, n)``: the packets whose flows fall into part k, every flow whole in one
    part; warpath.dist). A context manager: ``with _Source(capture, shard) as handle: ...``."""

    def __init__(self, capture, shard: Optional[Sequence[int]] = None):
        self.capture, self.shard = capture, shard
        self._read = None
        self._thread = None
        self._error: Optional[BaseException] = None

    def __enter__(self):
        part = None
        if self.shard is not None:
            if isinstance(self.capture, Capture):
                raise InvalidArgumentError("shard: give the capture's path, not a Capture "
                                           "held in memory")
            k, n = (int(x) for x in self.shard)
            if not (0 <= k < n <= 65536):
                raise InvalidArgumentError(f"shard {self.shard!r}: (k, n) with 0 <= k < n <= 65536")
            part = (k, n)
        if isinstance(self.capture, Capture):
            return self.capture._impl
        f = _warpath._CaptureFile()
        f.path = self._open(self.capture)
        if part is not None:
            f.shard, f.shards = part
        return f

    def _open(self, source) -> str:
        """A path the reader streams: the file itself, or the read end of a pipe a thread fills
        with the decompressed bytes."""
        if hasattr(source, "read"):
            self.name, stream = getattr(source, "name", "<file object>"), source
        else:
            path = os.fspath(source)
            if not path.endswith((".gz", ".xz")):
                self.name = path
                return path
            self.name = path
            try:
                stream = (gzip.open if path.endswith(".gz") else lzma.open)(path, "rb")
            except OSError as e:
                raise IoError(f"{path}: cannot open: {e.strerror or e}") from None
        import threading

        r, w = os.pipe()
        self._read = r

        def pump():
            try:
                with os.fdopen(w, "wb") as out:
                    shutil.copyfileobj(stream, out, 1 << 20)
            except BrokenPipeError:
                pass  # the reader stopped (an error of its own, or a damaged record)
            except Exception as e:  # OSError, EOFError, zlib.error, LZMAError, ...
                self._error = e
            finally:
                if stream is not source:
                    stream.close()

        self._thread = threading.Thread(target=pump, name="warpath-decompress", daemon=True)
        self._thread.start()
        return f"/proc/self/fd/{r}"

    def __exit__(self, kind, error, tb):
        if self._read is None:
            return False
        os.close(self._read)  # a writer still blocked on the pipe gets EPIPE and ends
        self._thread.join()
        fd_path = f"/proc/self/fd/{self._read}"
        if self._error is not None and (error is None or isinstance(error, Error)):
            # The reader's error, if any, follows from the stream that ended early.
            raise IoError(f"{self.name}: cannot decompress: {self._error}") from None
        if isinstance(error, Error):  # the pipe's name is no use to the user
            raise type(error)(str(error).replace(fd_path, self.name)) from None
        return False


    def rename(self, stats: dict) -> dict:
        """`stats` with the pipe's name in its warnings replaced by the file's."""
        if self._read is not None:
            fd_path = f"/proc/self/fd/{self._read}"
            stats["warnings"] = [w.replace(fd_path, self.name) for w in stats.get("warnings", [])]
        return stats


def _warn_damage(stats: dict) -> None:
    """A damaged record ended the input (what came before stands): a Python warning, as the
    CLI prints one."""
    import warnings

    for w in stats.get("warnings", []):
        warnings.warn(f"warpath: {w}", RuntimeWarning, stacklevel=3)


def parse(capture: Capture, engine: str = "auto") -> Packets:
    """Parses every packet of a capture with a parser engine (``auto``, ``cpu.parse``,
    ``ref.parse``, ...): a structured array of ``PACKET_INFO_DTYPE`` that owns warpath's own
    parse records (no copy), with ``to_pandas()``."""
    return capture.parse(engine)


def write_pcap(path: PathLike, packets, *, linktype: int = 1, snaplen: int = 262144,
               nano: bool = True, format: str = "pcap") -> int:
    """Writes packets to a pcap (or pcapng) file: a ``Capture`` (written whole), or an
    iterable of ``bytes`` or of ``(timestamp_ns, bytes)`` pairs. Returns the packets written.
    A capture read and written back with the same settings is byte-identical."""
    w = _warpath._PcapWriter(os.fspath(path), linktype, snaplen, nano, format)
    n = 0
    try:
        if isinstance(packets, Capture):
            w.write_capture(packets._impl)
            n = len(packets)
        else:
            for p in packets:
                if isinstance(p, (bytes, bytearray, memoryview)):
                    w.write(bytes(p))
                else:
                    ts, data = p
                    w.write(bytes(data), int(ts))
                n += 1
    finally:
        w.close()
    return n


class Flows(list):
    """Flow records (dicts, in the order flows ended), as ``warpath flows --format json``
    writes them: flow, ts, duration, proto, ip_version, vlan, src, sport, dst, dport,
    orig/resp packets and bytes, state, tcp_state, history, orig/resp flags, end. ``counters``
    holds the tracker's counters (packets by how they were tracked, flows, how they ended),
    ``engine`` the engine id and ``read`` what was read (records, packets after
    defragmentation, packets handed out: this part's, the clock, warnings)."""

    counters: dict
    engine: str
    read: dict

    def to_pandas(self):
        """A pandas DataFrame, one row per flow (``ts`` as a time)."""
        import pandas as pd

        frame = pd.DataFrame(list(self))
        if len(frame):
            frame["ts"] = pd.to_datetime(frame["ts"], unit="s")
        return frame


def flows(capture, engine: str = "auto", capacity: int = 1 << 18, on_full: str = "evict",
          no_checksum: bool = False, defrag: bool = False,
          shard: Optional[Sequence[int]] = None) -> Flows:
    """Tracks the flows of a capture (a ``Capture`` or anything ``read_pcap`` takes) with a
    flow engine (``auto``, ``cpu.flow``, ``ref.flow``, ``validate:<id>``): one record per flow
    as it ends, by Suricata's timeouts on the capture's clock, on TCP port reuse, on eviction
    (``on_full``: evict, drop or pass when ``capacity`` flows are held) and at the end.
    ``defrag``: IP fragments put back together first (the CLI's ``--defrag``). A path is read
    as the CLI reads it, batch by batch (a damaged record ends it with a RuntimeWarning);
    ``shard=(k, n)``: only part k of n, whole flows to one part (the CLI's ``--shard k/n``)."""
    import json

    source = _Source(capture, shard)
    with source as src:
        lines, counters, engine_id, read = _warpath._flows(src, engine, capacity, on_full,
                                                           no_checksum, "auto" if defrag else "")
    _warn_damage(source.rename(read))
    out = Flows(json.loads(line) for line in lines)
    out.counters, out.engine, out.read = counters, engine_id, read
    return out


class Streams(list):
    """Reassembled TCP streams, one dict per direction that carried bytes or gaps, in the order
    their flows ended (initiator first), as ``warpath reassemble`` indexes its files: flow,
    dir (initiator or responder), src and dst (``address.port``), data (the bytes, in order),
    gaps ((offset, length) holes the capture lost), end. ``counters`` holds the reassembler's
    counters, ``engine`` its id and ``read`` what was read (as ``Flows.read``)."""

    counters: dict
    engine: str
    read: dict


def reassemble(capture, policy: str = "bsd", mode: str = "ids", midstream: bool = False,
               depth: int = 0, engine: str = "auto", flow_engine: str = "auto",
               capacity: int = 1 << 18, no_checksum: bool = False,
               max_bytes: int = 1 << 30, defrag: bool = False,
               shard: Optional[Sequence[int]] = None) -> Streams:
    """Reassembles the TCP streams of a capture (a ``Capture`` or anything ``read_pcap``
    takes), as ``warpath reassemble`` does: overlaps resolved by ``policy`` (bsd, linux, first,
    last, windows, ...), ``mode`` ids (what the receiver acknowledged) or inline, flows picked
    up without a handshake when ``midstream``, each direction cut at ``depth`` bytes (0: none).
    The streams' bytes are held in memory: a ``CapacityError`` when they pass ``max_bytes``
    (use ``depth``, or the CLI's ``warpath reassemble`` that writes files, for larger).
    ``defrag``: IP fragments put back together first (the CLI's ``--defrag``); ``shard``: as
    ``flows`` takes it."""
    source = _Source(capture, shard)
    with source as src:
        streams, counters, engine_id, read = _warpath._reassemble(
            src, policy, mode, midstream, depth, engine, flow_engine, capacity, no_checksum,
            max_bytes, "auto" if defrag else "")
    _warn_damage(source.rename(read))
    out = Streams(streams)
    out.counters, out.engine, out.read = counters, engine_id, read
    return out


def nids(rules, capture, engine: str = "auto", vars: Optional[dict] = None, ips: bool = False,
         flows: bool = True, policy: str = "bsd", midstream: bool = False,
         skip_bad_rules: bool = False, no_checksum: bool = False,
         capacity: int = 1 << 18, defrag: bool = True,
         shard: Optional[Sequence[int]] = None) -> Iterator[dict]:
    """Runs Suricata-style rules over a capture, as ``warpath nids --eve`` does, yielding its
    EVE records as dicts: after each batch of 1024 packets its alerts, then its HTTP/DNS/TLS
    transactions, then its ended flows (``flows=False`` leaves those out).

    ``rules``: a rule file or directory, or a list of them; ``capture``: a ``Capture`` or
    anything ``read_pcap`` takes; ``vars``: address and port variables (``{"HOME_NET":
    "[10.0.0.0/8]"}``); ``engine``: auto, ref.nids, cpu.nids, cuda.nids or validate:<id>;
    ``ips``: inline mode (drop actions drop). A rule with a syntax error fails the load (a
    ``ParseError`` naming its file and line) unless ``skip_bad_rules``. IP fragments are put
    back together first, as the CLI does (``defrag=False``: its ``--no-defrag``). A path is
    read as the CLI reads it (a damaged record ends it with a RuntimeWarning); ``shard=(k,
    n)``: only part k of n, whole flows to one part (the CLI's ``--shard k/n``).
    The run happens in this call (without the GIL), so its errors are raised here; the
    records are held as JSON lines and parsed as they are iterated."""
    import json

    if not getattr(_warpath, "_HAVE_NIDS", False):
        raise NotBuiltError("nids: this build of warpath has no NIDS (it needs PCRE2, libhtp "
                            "and ldns)")
    args = _warpath._NidsArgs()
    args.rules = [os.fspath(r) for r in ([rules] if isinstance(rules, (str, os.PathLike))
                                          else rules)]
    args.vars = {str(k): str(v) for k, v in (vars or {}).items()}
    args.engine, args.policy = engine, policy
    args.ips, args.midstream, args.flows = ips, midstream, flows
    args.skip_bad_rules, args.no_checksum, args.capacity = skip_bad_rules, no_checksum, capacity
    args.defrag = "auto" if defrag else ""
    source = _Source(capture, shard)
    with source as src:
        lines, _counters, _engines, read = _warpath._nids(src, args)
    _warn_damage(source.rename(read))
    return (json.loads(line) for line in lines)


class Chain:
    """A chain of modules (``"acl(rules=acl.rules) -> router(fib=routes.txt)"``: ``warpath
    modules`` lists them and their arguments), run between ports as ``warpath run --chain``
    runs it."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"warpath.Chain({self.text!r})"

    def run(self, ports, workers: int = 1, batch: Optional[int] = None, engine: str = "auto",
            duration: float = 0.0, seed: Optional[int] = None, schedule: Optional[str] = None,
            cpus: Optional[Sequence[int]] = None, zero_copy: bool = True) -> dict:
        """Runs the chain until the input ports end (or ``duration`` seconds pass) and returns
        the report ``warpath run --json`` writes (without its provenance header): totals
        (rx = tx + dropped + slow_path), ``check``, ports, ``modules`` with each module's own
        counters, drops and slow path by reason, stages, latency.

        ``ports``: a mapping or a list of (name, spec) pairs, in order, with the CLI's specs:
        ``pcap:IN.pcap:OUT.pcap`` (either side may be empty), ``gen:max:N``, ``null``, ... A
        run's worker threads are not pinned unless ``cpus`` are given. The GIL is released
        while the chain runs; Ctrl-C stops it (drained) and raises KeyboardInterrupt. Errors
        after the run started (a port that could not write) raise ``IoError`` naming them."""
        import json

        a = _warpath._ChainArgs()
        a.chain = self.text
        a.ports = [(str(k), str(v)) for k, v in (ports.items() if hasattr(ports, "items")
                                                  else ports)]
        a.engine, a.workers, a.duration, a.zero_copy = engine, workers, float(duration), zero_copy
        if batch is not None:
            a.batch = batch
        if seed is not None:
            a.seed = seed
        if schedule is not None:
            a.schedule = schedule
        if cpus:
            a.cpus = list(cpus)
        return json.loads(_warpath._run_chain(a))
