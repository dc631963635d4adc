#!/usr/bin/env bash
# trace_run.sh — WAITIO_TRACE and waitio-trace on real coupled runs:
#  (a) a traced 3-PB run — an Open MPI PB (2 ranks), an MPICH PB (2 ranks) and a Python PB — of
#      tests/progs/mpi_trace_job.c / tests/python/trace_job.py (random sizes and tags, every byte
#      checked, allreduces): the merged trace must parse as JSON, hold every message the programs
#      sent with its matching receive (as flow arrows), keep causality after clock alignment, and
#      its summary's point-to-point bytes and messages per PB pair must equal what the programs
#      report; WAITIO_STATS=1 prints its table; `waitio-trace --plot DIR` writes its three PNGs
#      into DIR where a Python with matplotlib exists; the files grew as events came (past their
#      first 16 KiB) and were cut to their records at finalize: each is 4 KiB + 48 B per record,
#      all five together take less than 256 KiB of disk (16 MiB each before they grew);
#  (b) small trace files (WAITIO_TRACE_SIZE=17K: grown from 16 KiB to the limit, then full): the
#      run completes, the traces say how many events they dropped, the warning says the file
#      was full;
#  (c) a PB SIGKILLed mid-run: its trace is still readable (partial), merges with the others,
#      and holds at most its records plus the rest of its last chunk on disk;
#  (d) a full disk (a process whose file size limit, ulimit -f 20 KiB, stops its trace growing past
#      16 KiB; core_ring over tcp, 2 PBs): the run completes, that trace keeps its 256 records
#      and counts the dropped events, the warning says the disk was full.
# timeout: 300
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
src=$WAITIO_SOURCE_DIR
tool=$src/tools/waitio-trace
for f in "$TEST_PROGS/mpi_trace_job.ompi" "$TEST_PROGS/mpi_trace_job.mpich"; do
  [ -x "$f" ] || { echo "SKIP: $f is not built (no MPI)"; exit 0; }
done
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy
site=$WAITIO_BUILD_DIR/python-site-trace
rm -rf "$site"
(cd "$src" && python3 -m pip install -q --no-deps --target "$site" . 2>&1 | grep -v "as the 'root' user" || true)
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
seed=$RANDOM
echo "seed $seed"
# a Python with matplotlib for waitio-trace --plot, this one or the distribution's (the tool runs
# under the Python that starts it: it never looks for another)
mpl_py=
for p in python3 /usr/bin/python3; do "$p" -c "import matplotlib" 2>/dev/null && { mpl_py=$p; break; }; done

# ---- (a) the traced 3-PB run ----
pbs_instance 3
trace=$PBS_DIR/trace
export WAITIO_TRACE=$trace
WAITIO_STATS=1 pbs_start 0 200 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_trace_job.ompi" "$seed" 40
WAITIO_STATS=1 pbs_start 1 200 mpirun.mpich -np 2 "$TEST_PROGS/mpi_trace_job.mpich" "$seed" 40
pbs_start 2 200 python3 "$src/tests/python/trace_job.py" "$seed" 40
pbs_wait || { echo "FAIL: the traced run failed"; exit 1; }
ls "$trace"
n=$(ls "$trace"/*.wtr | wc -l)
[ "$n" = 5 ] || { echo "FAIL: $n trace files, expected 5"; exit 1; }
grep -q "WaitIO stats of PB 0 rank 0" "$PBS_DIR/pb0" || { echo "FAIL: WAITIO_STATS printed no table"; exit 1; }
if [ -n "$mpl_py" ]; then  # --plot DIR: DIR is the directory read, the PNGs go there too
  "$mpl_py" "$tool" --plot "$trace" -o "$PBS_DIR/trace.json" --summary-json "$PBS_DIR/summary.json"
else
  python3 "$tool" "$trace" -o "$PBS_DIR/trace.json" --summary-json "$PBS_DIR/summary.json"
fi
cat "$PBS_DIR"/pb* | grep '^trace_job sent:' >"$PBS_DIR/reported"
python3 - "$PBS_DIR" "$trace" <<'PY'
import glob, json, os, re, struct, sys
d, tdir = sys.argv[1], sys.argv[2]
trace = json.load(open(os.path.join(d, "trace.json")))       # parses as JSON
s = json.load(open(os.path.join(d, "summary.json")))
ev = trace["traceEvents"]
fail = []
if s["processes"] != 5 or s["unreadable"] or s["partial"] or s["dropped"]:
    fail.append(f"traces: {s['processes']} processes, unreadable {s['unreadable']}, partial {s['partial']}, dropped {s['dropped']}")
if s["messages_matched"] != s["messages_sent"] or s["messages_sent"] == 0:
    fail.append(f"{s['messages_matched']} of {s['messages_sent']} messages matched to a receive")
flows = sum(1 for e in ev if e.get("ph") == "s")
if flows != s["messages_matched"]:
    fail.append(f"{flows} flow arrows for {s['messages_matched']} matched messages")
if s["causality_violations"]:
    fail.append(f"{s['causality_violations']} receives complete before their send began")
reported = {}
for line in open(os.path.join(d, "reported")):
    m = re.match(r"trace_job sent: PB (\d+) -> PB (\d+): (\d+) messages (\d+) bytes", line)
    k = (int(m[1]), int(m[2]))
    reported.setdefault(k, [0, 0])
    reported[k][0] += int(m[3]); reported[k][1] += int(m[4])
traced = {(t["src_pb"], t["dst_pb"]): [t["messages"], t["bytes"]] for t in s["traffic"]}
reported = {k: v for k, v in reported.items() if v[0]}
if traced != reported:
    fail.append(f"traffic in the trace {traced} != reported by the programs {reported}")
if not any(e.get("cat") == "collective" and e["name"].startswith("allreduce") for e in ev):
    fail.append("no allreduce slice")
if not any(e.get("cat") == "wait" for e in ev):
    fail.append("no wait slice")
if set(s["pbs"]) != {"0", "1", "2"} or not all(0 <= v["waiting_share"] <= 1 for v in s["pbs"].values()):
    fail.append(f"per-PB waiting: {s['pbs']}")
# disk: each file cut to its records at finalize; the largest grew past its first 16 KiB
disk, counts = 0, []
for f in sorted(glob.glob(os.path.join(tdir, "*.wtr"))):
    st = os.stat(f)
    with open(f, "rb") as fh:
        count = struct.unpack_from("<Q", fh.read(56), 48)[0]
    counts.append(count)
    disk += st.st_blocks * 512
    if st.st_size != 4096 + 48 * count:
        fail.append(f"{os.path.basename(f)}: {st.st_size} bytes for {count} records (not cut at finalize)")
if max(counts) <= (16384 - 4096) // 48:
    fail.append(f"no trace file grew past its first chunk: {counts} records")
if disk > 256 << 10:
    fail.append(f"the 5 trace files take {disk} bytes of disk")
print(f"trace: {len(ev)} events, {s['messages_sent']} messages, all matched; traffic {sorted(traced.items())}")
print(f"trace files: {counts} records, {disk} bytes on disk for {len(counts)} processes")
if fail:
    sys.exit("FAIL: " + "; ".join(fail))
PY
if [ -n "$mpl_py" ]; then
  for f in traffic waiting timeline; do [ -s "$trace/$f.png" ] || { echo "FAIL: waitio-trace --plot DIR wrote no $f.png"; exit 1; }; done
  echo "waitio-trace --plot DIR ($mpl_py): traffic.png, waiting.png, timeline.png"
else
  echo "no Python with matplotlib here: waitio-trace --plot not drawn (python_sdist checks its advice)"
fi

# ---- (b) a trace file too small for the run: events dropped and counted, the run unharmed ----
pbs_instance 2
export WAITIO_TRACE=$PBS_DIR/tiny WAITIO_TRACE_SIZE=17K WAITIO_LOG=warn  # 277 records (60 rounds: ~450 events)
pbs_start 0 120 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_trace_job.ompi" "$seed" 60
pbs_start 1 120 mpirun.mpich -np 1 "$TEST_PROGS/mpi_trace_job.mpich" "$seed" 60
pbs_wait >"$PBS_DIR/tiny.out" || { cat "$PBS_DIR/tiny.out"; echo "FAIL: the run with a tiny trace failed"; exit 1; }
unset WAITIO_TRACE_SIZE WAITIO_LOG
python3 "$tool" "$PBS_DIR/tiny" -q --summary-json "$PBS_DIR/tiny.json"
python3 - "$PBS_DIR/tiny.json" "$PBS_DIR/tiny" <<'PY'
import glob, json, os, sys
s = json.load(open(sys.argv[1]))
if s["processes"] != 3 or len(s["dropped"]) != 3 or min(s["dropped"].values()) <= 0:
    sys.exit(f"FAIL: tiny traces: {s['processes']} processes, dropped {s['dropped']}")
sizes = [os.stat(f).st_size for f in glob.glob(os.path.join(sys.argv[2], "*.wtr"))]
if sizes != [4096 + 48 * 277] * 3:
    sys.exit(f"FAIL: full 17K traces are {sizes} bytes, not 4096 + 277 records")
print(f"small traces: grown to the limit, then events dropped and counted: {s['dropped']}")
PY
grep -q "events dropped (the file was full after 277" "$PBS_DIR/tiny.out" \
  || { cat "$PBS_DIR/tiny.out"; echo "FAIL: the dropped events were not logged as a full file"; exit 1; }

# ---- (c) a PB killed mid-run leaves a readable partial trace ----
pbs_instance 2
export WAITIO_TRACE=$PBS_DIR/killed
pbs_start 0 120 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_trace_job.ompi" "$seed" 400 20
pbs_start 1 120 "$TEST_PROGS/mpi_trace_job.mpich" "$seed" 400 20
victim=${PBS_PIDS[1]}
for _ in $(seq 100); do
  [ "$(ls "$PBS_DIR/killed" 2>/dev/null | wc -l)" -ge 3 ] && break
  sleep 0.1
done
sleep 1
kill -9 -- "-$victim"
pbs_wait >"$PBS_DIR/killed.out" || true
python3 "$tool" "$PBS_DIR/killed" -q --summary-json "$PBS_DIR/killed.json"
python3 - "$PBS_DIR/killed.json" "$PBS_DIR/killed" <<'PY'
import glob, json, os, struct, sys
s = json.load(open(sys.argv[1]))
for f in glob.glob(os.path.join(sys.argv[2], "pb1.*.wtr")):  # not cut at finalize: killed
    with open(f, "rb") as fh:
        count = struct.unpack_from("<Q", fh.read(56), 48)[0]
    used = 4096 + 48 * count
    if os.stat(f).st_blocks * 512 > max(2 * used, 16384) + 4096:
        sys.exit(f"FAIL: the killed PB's trace takes {os.stat(f).st_blocks * 512} bytes for {count} records")
partial = [p for p in s["partial"] if p.startswith("pb1.")]
if s["processes"] != 3 or s["unreadable"] or not partial:
    sys.exit(f"FAIL: after the kill: {s['processes']} processes, unreadable {s['unreadable']}, partial {s['partial']}")
sent = [t for t in s["traffic"] if t["src_pb"] == 1]
if not sent or s["messages_matched"] == 0:
    sys.exit(f"FAIL: the killed PB's trace holds no messages: {s['traffic']}")
print(f"killed PB: its trace {partial} is readable, {sum(t['messages'] for t in sent)} messages from it")
PY

# ---- (d) a full disk for one process: its trace stops growing, the run goes on ----
full=$PBS_DIR/full
ring=$TEST_PROGS/core_ring
env -u WAITIO_NPB -u WAITIO_PBID -u WAITIO_MASTER_PORT -u WAITIO_MASTER_HOST -u WAITIO_KEY \
  WAITIO_TRACE="$full" WAITIO_TRANSPORTS=tcp WAITIO_LOG=warn timeout 60 "$WAITIO_BUILD_DIR/tools/waitiorun" -q -t 50 \
  -- "$ring" 60 : -- bash -c "ulimit -f 20; trap '' XFSZ; exec '$ring' 60" >"$PBS_DIR/full.out" 2>&1 \
  || { cat "$PBS_DIR/full.out"; echo "FAIL: the run with a full disk for one process failed"; exit 1; }
python3 "$tool" "$full" -q --summary-json "$PBS_DIR/full.json"
python3 - "$PBS_DIR/full.json" "$full" <<'PY'
import glob, json, os, sys
s = json.load(open(sys.argv[1]))
dropped = s["dropped"]
if s["processes"] != 2 or list(dropped) != [os.path.basename(f) for f in glob.glob(os.path.join(sys.argv[2], "pb1.*.wtr"))] \
        or min(dropped.values()) <= 0 or s["messages_matched"] == 0:
    sys.exit(f"FAIL: full disk: {s['processes']} processes, dropped {dropped}, {s['messages_matched']} matched")
print(f"full disk: PB 1's trace kept 256 records and counted {dropped}")
PY
grep -q "events dropped (the disk was full after 256" "$PBS_DIR/full.out" \
  || { cat "$PBS_DIR/full.out"; echo "FAIL: the dropped events were not logged as a full disk"; exit 1; }
echo PASS
