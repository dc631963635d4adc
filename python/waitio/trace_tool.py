"""waitio-trace — merges the traces of a coupled run (WAITIO_TRACE=DIR) into one timeline.

Usage: waitio-trace DIR [-o trace.json] [--summary-json FILE] [--plot] [--plot-dir OUTDIR] [-q]

Reads every process's trace file in DIR (*.wtr: docs/tracing.md), puts all events on the
master's clock (the offset each process measured at start-up and at finalize, interpolated in
between for drift), and writes:
  - a Chrome/Perfetto trace (default DIR/trace.json; open it in https://ui.perfetto.dev or
    chrome://tracing): one track group per PB, one track per process, waits and collectives as
    slices, messages as arrows from each send to its matching receive;
  - a summary on standard output: per PB the share of time spent waiting in WaitIO and on whom
    it waited most, messages and bytes per PB pair, the largest waits, the slowest messages and
    collectives, and what the traces lack (dropped events, processes without an end record);
  - with --summary-json, the same as JSON (what the test suite checks);
  - with --plot, PNGs (matplotlib, the package's `plot` extra: pip install 'waitio[plot]'):
    the PB-to-PB traffic matrix, each PB's waiting fraction over time and the timeline, into
    DIR or --plot-dir OUTDIR. `waitio-trace --plot DIR` and the older `DIR --plot OUTDIR` are
    accepted too.
Exit status: 0, 1 if no trace could be read (or --plot without matplotlib), 2 on bad usage.

The module is the `waitio-trace` console script of the Python package and, loaded by path
without the package (it imports nothing of waitio), the tools/waitio-trace of a CMake install.

The directory may hold files others put there: only regular files are read (a link, FIFO or
device named *.wtr is skipped with a warning, never opened for reading), and every output is
written to a fresh temporary file beside its name, then renamed over it, so a link planted at
an output's name is replaced, never followed.
"""
import argparse
import errno
import glob
import json
import os
import stat
import struct
import sys
import tempfile
from collections import defaultdict

MAGIC = 0x31304352544F4957
HDR = 4096
REC = 48
KINDS = {1: "send", 2: "send_done", 3: "recv", 4: "recv_done", 5: "wait_begin", 6: "wait_end",
         7: "coll_begin", 8: "coll_end", 9: "rma", 10: "conn_open", 11: "conn_close", 12: "error",
         13: "match", 14: "test"}
COLL_OPS = {1: "barrier", 2: "bcast", 3: "reduce", 4: "allreduce", 5: "gather", 6: "scatter",
            7: "allgather", 8: "alltoall"}
PATHS = {0: "flat", 1: "hierarchical", 2: "paired", 3: "pipelined", 4: "segmented"}
RMA_OPS = {1: "put", 2: "get", 3: "atomic", 4: "rpc"}
TRANSPORTS = {1: "tcp", 2: "shm", 4: "file"}
ANY = 0xFFFFFFFF
AT_ONCE = 1
COLL_CTX = 0x80000000  # the group context bit of messages inside collectives


class Trace:
    """One process's trace file."""

    def __init__(self, path):
        self.path = path
        data = read_regular(path)
        if len(data) < HDR or struct.unpack_from("<Q", data, 0)[0] != MAGIC:
            raise ValueError("not a WaitIO trace file")
        version, recsize = struct.unpack_from("<II", data, 8)
        if version != 1 or recsize != REC:
            raise ValueError(f"trace version {version} with {recsize}-byte records is not known")
        (self.id, self.nprocs, self.pb, self.npb, self.rank, self.pid) = struct.unpack_from("<6I", data, 16)
        self.capacity, self.count, self.dropped = struct.unpack_from("<3Q", data, 40)
        self.syncs = []
        for slot in range(2):
            local, off, rtt, valid = struct.unpack_from("<QqQQ", data, 64 + 32 * slot)
            self.syncs.append((local, off, rtt) if valid else None)
        self.host = data[144:208].split(b"\0")[0].decode(errors="replace")
        self.pb_sizes = list(struct.unpack_from(f"<{min(self.npb, 900)}I", data, 256))
        n = min(self.count, self.capacity, (len(data) - HDR) // REC)
        self.partial = struct.unpack_from("<Q", data, 208)[0] != 1  # no finalize: killed, or running
        self.no_end_clock = self.syncs[1] is None
        self.events = []
        for i in range(n):
            t, kind, flags, err, peer, gid, aux, tag, nbytes, msg = struct.unpack_from(
                "<QBBHIIIQQQ", data, HDR + i * REC)
            if kind not in KINDS:
                raise ValueError(f"record {i} has an unknown kind {kind}")
            self.events.append((t, kind, flags, err, peer, gid, aux, tag, nbytes, msg))

    def aligned(self, t):
        """t on the master's clock, in ns: the offset measured at start-up, interpolated towards
        the one measured at finalize when the two differ by more than their uncertainty (half
        their round trips: a drift); else the offset of the measurement with the shorter round
        trip, the more precise one, for the whole run."""
        a, b = self.syncs
        if a is None and b is None:
            return t
        if a is None or b is None or b[0] == a[0]:
            return t + (a or b)[1]
        if abs(b[1] - a[1]) <= (a[2] + b[2]) / 2:
            return t + (a if a[2] <= b[2] else b)[1]
        slope = (b[1] - a[1]) / (b[0] - a[0])
        return t + a[1] + slope * (t - a[0])

    def tolerance(self):
        """How far off the alignment may be, ns: half the round trip of the measurements used."""
        used = [s for s in self.syncs if s]
        if len(used) == 2 and abs(used[1][1] - used[0][1]) <= (used[0][2] + used[1][2]) / 2:
            used = [min(used, key=lambda s: s[2])]
        return max((s[2] / 2 for s in used), default=0)


def read_regular(path):
    """The bytes of path if it is a regular file: opened without following a link and without
    blocking (a FIFO would wait for a writer), then checked with fstat before any read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ValueError("a symbolic link, not a regular file: skipped") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file: skipped")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read()
    finally:
        if fd >= 0:
            os.close(fd)


def write_new(path, write, binary=False):
    """Writes path as a new file: write(f) fills a temporary file created beside it (mkstemp:
    O_EXCL, a name nobody could plant), which is then renamed over path. Whatever was at path (a
    link to another file included) is replaced, never followed or written through."""
    path = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # what open() would have given a new file
        with os.fdopen(fd, "wb" if binary else "w") as f:
            fd = -1
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def pb_of(proc_id, pb_sizes):
    first = 0
    for pb, size in enumerate(pb_sizes):
        if proc_id < first + size:
            return pb, proc_id - first
        first += size
    return -1, proc_id


def load(directory):
    traces, problems = [], []
    for path in sorted(glob.glob(os.path.join(directory, "*.wtr"))):
        try:
            traces.append(Trace(path))
        except (OSError, ValueError, struct.error) as e:
            problems.append(f"{os.path.basename(path)}: {e}")
    return traces, problems


def merge(traces):
    """Everything on one timeline: a list of dicts per event plus matched messages."""
    t0 = min((tr.aligned(ev[0]) for tr in traces for ev in tr.events[:1]), default=0)
    pb_sizes = max((tr.pb_sizes for tr in traces), key=len, default=[])
    sends, recvs = {}, {}
    waits, colls = [], []
    for tr in traces:
        open_waits, open_colls = [], []
        for (t, kind, flags, err, peer, gid, aux, tag, nbytes, msg) in tr.events:
            ts = (tr.aligned(t) - t0) / 1000.0  # µs
            name = KINDS[kind]
            if name == "send":
                sends[(tr.id, peer, msg)] = dict(ts=ts, tr=tr, peer=peer, bytes=nbytes, tag=tag,
                                                 gid=gid, at_once=bool(flags & AT_ONCE))
            elif name == "recv_done" and peer != ANY and not err:
                recvs[(peer, tr.id, msg)] = dict(ts=ts, tr=tr, bytes=nbytes, tag=tag, gid=gid)
            elif name == "wait_begin":
                open_waits.append((ts, peer))
            elif name == "wait_end" and open_waits:
                start, p = open_waits.pop()
                waits.append(dict(tr=tr, start=start, end=ts, peer=p))
            elif name == "coll_begin":
                open_colls.append((ts, tag, nbytes))
            elif name == "coll_end" and open_colls:
                start, op, b = open_colls.pop()
                colls.append(dict(tr=tr, start=start, end=ts, op=COLL_OPS.get(op, str(op)),
                                  path=PATHS.get(aux, str(aux)), bytes=b, err=err))
    return t0, pb_sizes, sends, recvs, waits, colls


def chrome_trace(traces, t0, pb_sizes, sends, recvs, waits, colls):
    out = []
    for tr in traces:
        out.append(dict(ph="M", name="process_name", pid=tr.pb, tid=0, args=dict(name=f"PB {tr.pb}")))
        out.append(dict(ph="M", name="process_sort_index", pid=tr.pb, tid=0, args=dict(sort_index=tr.pb)))
        out.append(dict(ph="M", name="thread_name", pid=tr.pb, tid=tr.rank,
                        args=dict(name=f"rank {tr.rank} (process {tr.id}, {tr.host} pid {tr.pid})"
                                  + (" [partial]" if tr.partial else ""))))
    for w in waits:
        ppb, prank = pb_of(w["peer"], pb_sizes) if w["peer"] != ANY else (-1, -1)
        out.append(dict(ph="X", name="wait" if w["peer"] == ANY else f"wait for PB {ppb} rank {prank}",
                        cat="wait", pid=w["tr"].pb, tid=w["tr"].rank, ts=w["start"],
                        dur=max(w["end"] - w["start"], 0)))
    for c in colls:
        out.append(dict(ph="X", name=f"{c['op']} ({c['path']})", cat="collective", pid=c["tr"].pb,
                        tid=c["tr"].rank, ts=c["start"], dur=max(c["end"] - c["start"], 0),
                        args=dict(bytes=c["bytes"], error=c["err"])))
    flow = 0
    for key, s in sends.items():
        tr = s["tr"]
        ppb, prank = pb_of(s["peer"], pb_sizes)
        args = dict(bytes=s["bytes"], tag=s["tag"], to=f"PB {ppb} rank {prank}", message=key[2])
        out.append(dict(ph="i", s="t", name="send", cat="message", pid=tr.pb, tid=tr.rank, ts=s["ts"], args=args))
        r = recvs.get(key)
        if r:
            flow += 1
            out.append(dict(ph="s", id=flow, name="message", cat="message", pid=tr.pb, tid=tr.rank, ts=s["ts"]))
            out.append(dict(ph="i", s="t", name="receive", cat="message", pid=r["tr"].pb, tid=r["tr"].rank,
                            ts=r["ts"], args=dict(bytes=r["bytes"], tag=r["tag"],
                                                   sender=f"PB {tr.pb} rank {tr.rank}", message=key[2])))
            out.append(dict(ph="f", bp="e", id=flow, name="message", cat="message", pid=r["tr"].pb,
                            tid=r["tr"].rank, ts=r["ts"]))
    for tr in traces:
        for (t, kind, flags, err, peer, gid, aux, tag, nbytes, msg) in tr.events:
            name = KINDS[kind]
            if name not in ("rma", "conn_open", "conn_close", "error", "match", "test"):
                continue
            ts = (tr.aligned(t) - t0) / 1000.0
            args = dict(peer=peer, error=err)
            if name == "rma":
                label = RMA_OPS.get(tag, "one-sided")
                args["bytes"] = nbytes
            elif name == "conn_open":
                label = f"connection to process {peer} ({TRANSPORTS.get(aux, aux)})"
            elif name == "conn_close":
                label = f"connection to process {peer} closed"
            elif name == "match":
                label = "matched (data follows)"
                args.update(bytes=nbytes, tag=tag, message=msg)
            elif name == "test":
                label = "test: complete"
            else:
                label = f"lost process {peer} (error {err})"
            out.append(dict(ph="i", s="t", name=label, cat=name, pid=tr.pb, tid=tr.rank, ts=ts, args=args))
    return dict(traceEvents=out, displayTimeUnit="ns")


def summarize(traces, problems, t0, pb_sizes, sends, recvs, waits, colls):
    span = {}
    for tr in traces:
        if tr.events:
            a, b = tr.aligned(tr.events[0][0]), tr.aligned(tr.events[-1][0])
            span[tr.id] = ((a - t0) / 1000.0, (b - t0) / 1000.0)
    pbs = sorted({tr.pb for tr in traces})
    per_pb = {}
    for pb in pbs:
        members = [tr for tr in traces if tr.pb == pb]
        total = sum(span.get(tr.id, (0, 0))[1] - span.get(tr.id, (0, 0))[0] for tr in members)
        waited = sum(w["end"] - w["start"] for w in waits if w["tr"].pb == pb)
        on = defaultdict(float)
        for w in waits:
            if w["tr"].pb == pb:
                on["any" if w["peer"] == ANY else f"PB {pb_of(w['peer'], pb_sizes)[0]}"] += w["end"] - w["start"]
        most = max(on.items(), key=lambda kv: kv[1]) if on else None
        per_pb[pb] = dict(processes=len(members), time_us=total, waited_us=waited,
                          waiting_share=waited / total if total > 0 else 0.0,
                          waited_most_on=most[0] if most else None,
                          waited_most_us=most[1] if most else 0.0)
    traffic = defaultdict(lambda: [0, 0])      # the programs' own point-to-point messages
    coll_traffic = defaultdict(lambda: [0, 0])  # messages inside collectives (their context)
    for (src, dst, _), s in sends.items():
        key = (s["tr"].pb, pb_of(dst, pb_sizes)[0])
        t = coll_traffic if s["gid"] & COLL_CTX else traffic
        t[key][0] += 1
        t[key][1] += s["bytes"]
    matched = sum(1 for k in sends if k in recvs)
    traced_ids = {tr.id for tr in traces}
    expected = sum(1 for (src, dst, _) in sends if dst in traced_ids)
    tol = {tr.id: tr.tolerance() / 1000.0 for tr in traces}
    latencies, violations = [], 0
    for key, s in sends.items():
        r = recvs.get(key)
        if not r:
            continue
        lat = r["ts"] - s["ts"]
        if lat < -(tol[s["tr"].id] + tol[r["tr"].id]):
            violations += 1
        latencies.append((lat, s, r, key))
    latencies.sort(key=lambda x: -x[0])
    largest_waits = sorted(waits, key=lambda w: w["start"] - w["end"])[:5]
    slow_colls = sorted(colls, key=lambda c: c["start"] - c["end"])[:5]

    def who(tr):
        return f"PB {tr.pb} rank {tr.rank}"

    return dict(
        processes=len(traces), unreadable=problems,
        partial=[os.path.basename(tr.path) for tr in traces if tr.partial],
        no_end_clock=[os.path.basename(tr.path) for tr in traces if tr.no_end_clock and not tr.partial],
        dropped={os.path.basename(tr.path): tr.dropped for tr in traces if tr.dropped},
        pbs={str(pb): v for pb, v in per_pb.items()},
        traffic=[dict(src_pb=a, dst_pb=b, messages=m, bytes=n) for (a, b), (m, n) in sorted(traffic.items())],
        collective_traffic=[dict(src_pb=a, dst_pb=b, messages=m, bytes=n)
                            for (a, b), (m, n) in sorted(coll_traffic.items())],
        messages_sent=len(sends), messages_to_traced=expected, messages_matched=matched,
        causality_violations=violations,
        largest_waits=[dict(process=who(w["tr"]), on="any" if w["peer"] == ANY else
                            "PB %d rank %d" % pb_of(w["peer"], pb_sizes), us=w["end"] - w["start"],
                            at_us=w["start"]) for w in largest_waits],
        slowest_messages=[dict(sender=who(s["tr"]), receiver=who(r["tr"]), bytes=s["bytes"], us=lat, at_us=s["ts"])
                          for lat, s, r, _ in latencies[:5]],
        slowest_collectives=[dict(process=who(c["tr"]), op=c["op"], path=c["path"], bytes=c["bytes"],
                                  us=c["end"] - c["start"], at_us=c["start"]) for c in slow_colls])


def print_summary(s):
    print(f"WaitIO trace: {s['processes']} processes, {s['messages_sent']} messages sent, "
          f"{s['messages_matched']} of {s['messages_to_traced']} to traced processes matched to their receive")
    for what, label in (("unreadable", "unreadable"), ("partial", "partial (no finalize: killed or still running)"),
                        ("no_end_clock", "no clock measurement at finalize (the start-up offset is used)")):
        if s[what]:
            print(f"  {label}: {', '.join(s[what])}")
    for f, n in s["dropped"].items():
        print(f"  {f}: {n} events dropped (the file reached WAITIO_TRACE_SIZE, or the disk was full)")
    if s["causality_violations"]:
        print(f"  {s['causality_violations']} messages received before they were sent after clock alignment")
    print("\nTime spent waiting in WaitIO, per PB:")
    print(f"  {'PB':>4} {'procs':>5} {'traced s':>10} {'waited s':>10} {'share':>6}  waited most on")
    for pb, v in s["pbs"].items():
        most = f"{v['waited_most_on']} ({v['waited_most_us'] / 1e6:.3f} s)" if v["waited_most_on"] else "-"
        print(f"  {pb:>4} {v['processes']:>5} {v['time_us'] / 1e6:>10.3f} {v['waited_us'] / 1e6:>10.3f} "
              f"{100 * v['waiting_share']:>5.1f}%  {most}")
    for title, key in (("Messages and bytes, PB to PB (point-to-point):", "traffic"),
                       ("Inside collectives:", "collective_traffic")):
        if not s[key]:
            continue
        print("\n" + title)
        print(f"  {'from':>4} {'to':>4} {'messages':>10} {'bytes':>14}")
        for t in s[key]:
            print(f"  {t['src_pb']:>4} {t['dst_pb']:>4} {t['messages']:>10} {t['bytes']:>14}")
    if s["largest_waits"]:
        print("\nLargest waits:")
        for w in s["largest_waits"]:
            print(f"  {w['us'] / 1000:10.3f} ms  {w['process']} waiting for {w['on']}, at {w['at_us'] / 1e6:.6f} s")
    if s["slowest_messages"]:
        print("\nSlowest messages (send posted to receive complete):")
        for m in s["slowest_messages"]:
            print(f"  {m['us'] / 1000:10.3f} ms  {m['sender']} -> {m['receiver']}, {m['bytes']} bytes, "
                  f"at {m['at_us'] / 1e6:.6f} s")
    if s["slowest_collectives"]:
        print("\nSlowest collectives:")
        for c in s["slowest_collectives"]:
            print(f"  {c['us'] / 1000:10.3f} ms  {c['op']} ({c['path']}) of {c['bytes']} bytes on {c['process']}, "
                  f"at {c['at_us'] / 1e6:.6f} s")


def save_png(fig, path):
    write_new(path, lambda f: fig.savefig(f, format="png", dpi=120), binary=True)


def plot(outdir, traces, pb_sizes, sends, waits, summary):
    try:  # the optional `plot` extra (type checkers may lack it: not an error of this package)
        import matplotlib  # type: ignore
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore
    except ImportError:
        print(f"waitio-trace: --plot needs matplotlib, which {sys.executable} cannot import: "
              f"{matplotlib_advice()}", file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    npb = max(len(pb_sizes), 1)
    matrix = [[0] * npb for _ in range(npb)]
    for t in summary["traffic"]:
        if 0 <= t["dst_pb"] < npb and 0 <= t["src_pb"] < npb:
            matrix[t["src_pb"]][t["dst_pb"]] += t["bytes"]
    fig, ax = plt.subplots(figsize=(4 + npb * 0.6, 3.5 + npb * 0.5))
    im = ax.imshow(matrix, cmap="viridis")
    ax.set_xlabel("to PB")
    ax.set_ylabel("from PB")
    ax.set_xticks(range(npb))
    ax.set_yticks(range(npb))
    for i in range(npb):
        for j in range(npb):
            ax.text(j, i, f"{matrix[i][j]:,}", ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(im, ax=ax, label="bytes")
    ax.set_title("WaitIO traffic between PBs")
    fig.tight_layout()
    save_png(fig, os.path.join(outdir, "traffic.png"))
    plt.close(fig)
    end = max((w["end"] for w in waits), default=0)
    for tr in traces:
        if tr.events:
            end = max(end, (tr.aligned(tr.events[-1][0]) - min(t.aligned(t.events[0][0]) for t in traces if t.events)) / 1000.0)
    bins = 50
    width = end / bins if end > 0 else 1
    fig, ax = plt.subplots(figsize=(8, 4))
    for pb in sorted({tr.pb for tr in traces}):
        nproc = sum(1 for tr in traces if tr.pb == pb)
        share = [0.0] * bins
        for w in waits:
            if w["tr"].pb != pb:
                continue
            for b in range(bins):
                lo, hi = b * width, (b + 1) * width
                share[b] += max(0.0, min(hi, w["end"]) - max(lo, w["start"]))
        ax.plot([(b + 0.5) * width / 1e6 for b in range(bins)], [x / (width * nproc) for x in share],
                label=f"PB {pb}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("share of time waiting in WaitIO")
    ax.set_ylim(0, 1.05)
    ax.legend()
    ax.set_title("Waiting over time, per PB")
    fig.tight_layout()
    save_png(fig, os.path.join(outdir, "waiting.png"))
    plt.close(fig)
    timeline(plt, os.path.join(outdir, "timeline.png"), traces, sends, waits, summary)
    print(f"waitio-trace: wrote {outdir}/traffic.png, waiting.png and timeline.png")
    return 0


def timeline(plt, path, traces, sends, waits, summary, max_arrows=400):
    """The merged timeline as a picture: a row per process (grouped by PB), waits as grey bars,
    collectives as blue ones, messages as lines from send to receive."""
    rows = sorted(traces, key=lambda tr: (tr.pb, tr.rank))
    y = {tr.id: i for i, tr in enumerate(rows)}
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.45 * len(rows)))
    for w in waits:
        ax.barh(y[w["tr"].id], (w["end"] - w["start"]) / 1e3, left=w["start"] / 1e3, height=0.5,
                color="0.7", edgecolor="none")
    for c in summary.get("_colls", []):
        ax.barh(y[c["tr"].id], (c["end"] - c["start"]) / 1e3, left=c["start"] / 1e3, height=0.3,
                color="tab:blue", edgecolor="none")
    pairs = sorted(((s, summary["_recvs"][k]) for k, s in sends.items() if k in summary["_recvs"]),
                   key=lambda sr: sr[0]["ts"])
    step = max(1, -(-len(pairs) // max_arrows))  # an even sample of at most max_arrows
    for s, r in pairs[::step]:
        ax.annotate("", xy=(r["ts"] / 1e3, y[r["tr"].id]), xytext=(s["ts"] / 1e3, y[s["tr"].id]),
                    arrowprops=dict(arrowstyle="->", color="tab:red", lw=0.5, alpha=0.6))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"PB {tr.pb} rank {tr.rank}" for tr in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms, master's clock)")
    ax.set_title("WaitIO timeline: waits (grey), collectives (blue), messages (red)")
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)


def in_virtualenv():
    """Whether this Python is a virtual environment's (venv, virtualenv): there, packages come
    from pip, never from the distribution."""
    return sys.prefix != getattr(sys, "base_prefix", sys.prefix) or "VIRTUAL_ENV" in os.environ


def matplotlib_advice():
    """How to get matplotlib for the Python that runs this tool."""
    if in_virtualenv():
        return "pip install 'waitio[plot]' (or pip install matplotlib) in this virtual environment"
    if os.path.realpath(sys.executable).startswith("/usr/bin/"):
        return ("install it with the distribution's package manager (Debian, Ubuntu: apt-get install "
                "python3-matplotlib), or pip install 'waitio[plot]' in a virtual environment")
    return f"{sys.executable} -m pip install 'waitio[plot]' (or matplotlib)"


#: set by tools/waitio-trace, which loads this file by its path: the project's version
launcher_version = None


def version():
    """The version of the waitio distribution this module belongs to, else the launcher's."""
    if __package__:
        try:
            from importlib.metadata import version as dist_version
            return dist_version("waitio")
        except Exception:  # not installed as a distribution (a source tree on PYTHONPATH)
            pass
    return launcher_version or "unknown"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="waitio-trace",
                                 usage="%(prog)s DIR [-o FILE] [--summary-json FILE] [--plot] "
                                       "[--plot-dir OUTDIR] [-q]",
                                 description="Merge a coupled run's WaitIO traces into one timeline.",
                                 epilog="Exit status: 0; 1 if no trace could be read or --plot lacks "
                                        "matplotlib; 2 on bad usage.")
    ap.add_argument("dir", nargs="?", help="the WAITIO_TRACE directory")
    ap.add_argument("-o", "--output", help="the Chrome/Perfetto trace to write (default DIR/trace.json)")
    ap.add_argument("--summary-json", help="write the summary as JSON here")
    # a flag; the value is only for the older spelling DIR --plot OUTDIR (and makes --plot DIR,
    # with DIR taken by the option, still mean the directory to read)
    ap.add_argument("--plot", nargs="?", const=True, default=None, metavar="OUTDIR",
                    help="also draw traffic.png, waiting.png and timeline.png (matplotlib: "
                         "pip install 'waitio[plot]'), into DIR unless --plot-dir (--plot OUTDIR: "
                         "the older spelling of --plot-dir OUTDIR)")
    ap.add_argument("--plot-dir", metavar="OUTDIR", help="draw the PNGs into OUTDIR (implies --plot)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no summary on standard output")
    ap.add_argument("--version", action="version", version=f"waitio-trace (WaitIO) {version()}")
    args = ap.parse_args(argv)
    if args.dir is None:
        if not isinstance(args.plot, str):
            ap.error("the trace directory DIR is required")
        args.dir, args.plot = args.plot, True  # waitio-trace --plot DIR
    if args.plot_dir is None and isinstance(args.plot, str):
        args.plot_dir = args.plot  # DIR --plot OUTDIR
    if args.plot_dir is not None:
        args.plot = True
    return args


def main(argv=None):
    args = parse_args(argv)
    traces, problems = load(args.dir)
    for p in problems:
        print(f"waitio-trace: {p}", file=sys.stderr)
    if not traces:
        print(f"waitio-trace: no readable trace (*.wtr) in {args.dir}", file=sys.stderr)
        return 1
    t0, pb_sizes, sends, recvs, waits, colls = merge(traces)
    out = args.output or os.path.join(args.dir, "trace.json")
    chrome = chrome_trace(traces, t0, pb_sizes, sends, recvs, waits, colls)
    write_new(out, lambda f: json.dump(chrome, f))
    summary = summarize(traces, problems, t0, pb_sizes, sends, recvs, waits, colls)
    if args.summary_json:
        write_new(args.summary_json, lambda f: json.dump(summary, f, indent=1))
    if not args.quiet:
        print_summary(summary)
        print(f"\nwaitio-trace: wrote {out} (open it in https://ui.perfetto.dev)")
    if args.plot:
        summary["_recvs"], summary["_colls"] = recvs, colls
        return plot(args.plot_dir or args.dir, traces, pb_sizes, sends, waits, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
