#!/usr/bin/env bash
# trace_run.sh — WAITIO_TRACE and waitio-trace on real coupled runs:
#  (a) a traced 3-PB run — an Open MPI PB (2 ranks), an MPICH PB (2 ranks) and a Python PB — of
#      tests/progs/mpi_trace_job.c / tests/python/trace_job.py (random sizes and tags, every byte
#      checked, allreduces): the merged trace must parse as JSON, hold every message the programs
#      sent with its matching receive (as flow arrows), keep causality after clock alignment, and
#      its summary's point-to-point bytes and messages per PB pair must equal what the programs
#      report; WAITIO_STATS=1 prints its table; --plot writes its three PNGs where matplotlib exists;
#  (b) a tiny trace file (WAITIO_TRACE_SIZE=8K): the run completes, the traces say how many events
#      they dropped;
#  (c) a PB SIGKILLed mid-run: its trace is still readable (partial) and merges with the others.
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
# matplotlib in this Python or the distribution's (waitio-trace --plot runs under whichever has it)
has_mpl() { python3 -c "import matplotlib" 2>/dev/null || /usr/bin/python3 -c "import matplotlib" 2>/dev/null; }

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
python3 "$tool" "$trace" -o "$PBS_DIR/trace.json" --summary-json "$PBS_DIR/summary.json" \
  $(has_mpl && echo --plot "$PBS_DIR/plots")
cat "$PBS_DIR"/pb* | grep '^trace_job sent:' >"$PBS_DIR/reported"
python3 - "$PBS_DIR" <<'PY'
import json, os, re, sys
d = sys.argv[1]
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
print(f"trace: {len(ev)} events, {s['messages_sent']} messages, all matched; traffic {sorted(traced.items())}")
if fail:
    sys.exit("FAIL: " + "; ".join(fail))
PY
if has_mpl; then
  for f in traffic waiting timeline; do [ -s "$PBS_DIR/plots/$f.png" ] || { echo "FAIL: no $f.png"; exit 1; }; done
fi

# ---- (b) a trace file too small for the run: events dropped and counted, the run unharmed ----
pbs_instance 2
export WAITIO_TRACE=$PBS_DIR/tiny WAITIO_TRACE_SIZE=8K WAITIO_LOG=warn
pbs_start 0 120 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_trace_job.ompi" "$seed" 20
pbs_start 1 120 mpirun.mpich -np 1 "$TEST_PROGS/mpi_trace_job.mpich" "$seed" 20
pbs_wait >"$PBS_DIR/tiny.out" || { cat "$PBS_DIR/tiny.out"; echo "FAIL: the run with a tiny trace failed"; exit 1; }
unset WAITIO_TRACE_SIZE WAITIO_LOG
python3 "$tool" "$PBS_DIR/tiny" -q --summary-json "$PBS_DIR/tiny.json"
python3 - "$PBS_DIR/tiny.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
if s["processes"] != 3 or len(s["dropped"]) != 3 or min(s["dropped"].values()) <= 0:
    sys.exit(f"FAIL: tiny traces: {s['processes']} processes, dropped {s['dropped']}")
print(f"tiny traces: events dropped and counted: {s['dropped']}")
PY
grep -q "events dropped" "$PBS_DIR/tiny.out" || { echo "FAIL: the dropped events were not logged"; exit 1; }

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
python3 - "$PBS_DIR/killed.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
partial = [p for p in s["partial"] if p.startswith("pb1.")]
if s["processes"] != 3 or s["unreadable"] or not partial:
    sys.exit(f"FAIL: after the kill: {s['processes']} processes, unreadable {s['unreadable']}, partial {s['partial']}")
sent = [t for t in s["traffic"] if t["src_pb"] == 1]
if not sent or s["messages_matched"] == 0:
    sys.exit(f"FAIL: the killed PB's trace holds no messages: {s['traffic']}")
print(f"killed PB: its trace {partial} is readable, {sum(t['messages'] for t in sent)} messages from it")
PY
echo PASS
