#!/usr/bin/env bash
# sec_trace.sh — issue 25 item 7: tracing into directories and through names others control.
#  (a) WAITIO_TRACE names a directory owned by another user (uid 65534; the suite runs as root,
#      which could write there) and one of ours that others may write (mode 0777): the run
#      works, each process says it is not tracing and why, and nothing is written there. Before
#      the fix both were used without complaint. A directory of ours, mode 0700, gets the traces.
#  (b) waitio-trace with links planted at its outputs (trace.json, the summary) pointing to a
#      root-owned file, and a *.wtr link to it: the file is unchanged, the outputs are regular
#      files holding the merged trace, the link named *.wtr is skipped with a warning. Before the
#      fix the tool wrote trace.json through the link.
#  (c) a FIFO named x.wtr in the trace directory: the tool finishes within 10 s, skipping it with
#      a warning. Before the fix it blocked in open() for good.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs core_ring
tool=$WAITIO_SOURCE_DIR/tools/waitio-trace

# traced_run LABEL DIR: a 2-PB core_ring job tracing into DIR; it must succeed
traced_run() {
  local label=$1 dir=$2 n
  t_instance 2
  for n in 0 1; do
    t_start "$label$n" 60 env WAITIO_PBID=$n WAITIO_TRACE="$dir" "$TEST_PROGS/core_ring" 3 30
  done
  for n in 0 1; do t_wait "$label$n" || t_fail "the run tracing into $dir failed ($label$n: $(t_rc "$label$n"))"; done
  t_expect "${label}0" '^core_ring ok: 2 processes'
}

# ---- (a) trace directories others control ----
foreign=$T_DIR/foreign
mkdir -m 0755 "$foreign"
foreign_run=0
if chown 65534:65534 "$foreign" 2>/dev/null; then
  traced_run foreign "$foreign"
  foreign_run=1
else
  t_log "SKIP of the another-user case: cannot chown a directory to uid 65534 (not root)"
fi
open=$T_DIR/open
mkdir "$open"
chmod 0777 "$open"
traced_run open "$open"
for n in foreign0 foreign1; do
  [ $foreign_run = 1 ] || break
  t_expect $n "WAITIO_TRACE: .*another user's directory.*not tracing" "$n must say why it does not trace"
done
for n in open0 open1; do
  t_expect $n "WAITIO_TRACE: .*writable by others.*not tracing" "$n must say why it does not trace"
done
for d in "$foreign" "$open"; do
  left=$(ls -A "$d")
  [ -z "$left" ] || t_fail "traces were written into $d ($(stat -c '%U %a' "$d")): $left"
done
good=$T_DIR/good
traced_run good "$good"
[ "$(stat -c %a "$good")" = 700 ] || t_fail "the trace directory was created with mode $(stat -c %a "$good")"
[ "$(ls "$good"/*.wtr | wc -l)" = 2 ] || t_fail "expected 2 traces in $good: $(ls -A "$good")"
t_log "(a) another user's directory and a directory writable by others: refused, nothing written; ours: 2 traces"

# ---- (b) links planted at the tool's outputs ----
victim=$T_DIR/root-owned
echo "precious root data" >"$victim"
chmod 0644 "$victim"
sum0=$(sha256sum <"$victim")
ln -s "$victim" "$good/trace.json"
ln -s "$victim" "$good/summary.json"
ln -s "$victim" "$good/link.wtr"
timeout 30 python3 "$tool" "$good" -q --summary-json "$good/summary.json" >"$T_DIR/tool-b.out" 2>&1
rc=$?
cat "$T_DIR/tool-b.out"
[ "$rc" = 0 ] || t_fail "waitio-trace failed (exit status $rc)"
[ "$(sha256sum <"$victim")" = "$sum0" ] || t_fail "the root-owned file was overwritten through a planted link: $(head -c 200 "$victim")"
for f in trace.json summary.json; do
  [ -f "$good/$f" ] && [ ! -L "$good/$f" ] || t_fail "$good/$f is not a regular file: $(ls -l "$good/$f")"
done
python3 - "$good" <<'PY' || t_fail "the outputs do not hold the merged trace"
import json, os, sys
d = sys.argv[1]
t = json.load(open(os.path.join(d, "trace.json")))
s = json.load(open(os.path.join(d, "summary.json")))
assert s["processes"] == 2 and t["traceEvents"], (s["processes"], len(t["traceEvents"]))
assert any("link.wtr" in u for u in s["unreadable"]), s["unreadable"]
PY
grep -q "link.wtr: .*skipped" "$T_DIR/tool-b.out" || t_fail "the link named link.wtr was not reported as skipped"
t_log "(b) links at trace.json, summary.json and link.wtr: the root-owned file unchanged, outputs regular files"

# ---- (c) a FIFO named *.wtr ----
rm -f "$good/link.wtr"
mkfifo "$good/x.wtr"
t0=$(t_now)
timeout 10 python3 "$tool" "$good" -q >"$T_DIR/tool-c.out" 2>&1
rc=$?
dt=$(t_since "$t0")
cat "$T_DIR/tool-c.out"
case $rc in
  0) ;;
  124|137) t_fail "waitio-trace hung on the FIFO x.wtr (killed after 10 s)" ;;
  *) t_fail "waitio-trace failed with a FIFO in the directory (exit status $rc)" ;;
esac
grep -q "x.wtr: .*not a regular file" "$T_DIR/tool-c.out" || t_fail "the FIFO x.wtr was not reported as skipped"
t_pass "foreign and open trace directories refused; planted links replaced, not followed; FIFO skipped in ${dt} s"
