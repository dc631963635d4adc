#!/usr/bin/env bash
# coll_tune.sh — the collective tables (issue 29; docs/tuning.md, "Collective paths"):
#  tune:   waitio-tune measures 2 PBs x 2 Open MPI processes (sizes to 64 KiB, few calls) and
#          writes a table: the header has the shape, every operation and size has flat and hier,
#          allreduce paired and segmented, bcast pipeline from 32 KiB only;
#  follow: tests/progs/mpi_coll_choice (bcast, reduce, allreduce of 8 B - 32 KiB, every element
#          checked, and barriers) with WAITIO_COLL_TABLE at that table and WAITIO_LOG=coll=debug:
#          process 0 says it took the table, every process logs its choices, and every choice the
#          table made is the fastest path the table has for the nearest measured size;
#  bad:    a malformed table (a bad number on line 3) is reported once, with file:line, and the
#          run goes on with the model, whose parameters and ranking process 0 prints; a table of
#          another shape is refused with both shapes named.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_coll_choice.ompi
tune=$WAITIO_BUILD_DIR/tools/waitio-tune
[ -x "$tune" ] || t_fail "$tune is not built"
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
  t_fail "Open MPI (mpicc.openmpi, mpirun.openmpi) is needed"
export OMPI_MCA_mpi_yield_when_idle=1 # 4 processes on 2 cores: MPI must not spin the heads away
unset WAITIO_COLL_HIER WAITIO_COLL_ALG WAITIO_COLL_PIPELINE WAITIO_COLL_TABLE WAITIO_COLL_HIER_BCAST \
      WAITIO_COLL_HIER_REDUCE WAITIO_COLL_HIER_ALLREDUCE WAITIO_COLL_HIER_BARRIER
work=$T_DIR/tune
table=$T_DIR/2x2.tbl
common=(-n 2 -p 2 --mpirun "mpirun.openmpi --oversubscribe" --mpicc mpicc.openmpi --adapter openmpi
        --timeout 60 --workdir "$work")

# ---- tune ----
t_start tune 70 env WAITIO_TUNE_CFLAGS="$(t_sanitize_flags)" "$tune" "${common[@]}" --max-bytes 32K --iters 2 -o "$table"
t_wait tune
t_expect_rc tune 0
t_expect tune 'table written to' "the tool's summary"
[ -f "$table" ] || t_fail "no table at $table"
grep -qx 'waitio-coll-table 1 npb=2 ppb=2 host=one mpi=openmpi' "$table" || t_fail "bad header: $(grep -v '^#' "$table" | head -1)"
for op in bcast reduce allreduce; do
  for size in 8 64 512 4096 32768; do
    grep -qE "^$op $size flat=[0-9.]+ hier=[0-9.]+" "$table" || t_fail "no '$op $size' line with flat and hier in: $(cat "$table")"
  done
done
grep -qE '^allreduce 8 flat=[0-9.]+ hier=[0-9.]+ paired=[0-9.]+ segmented=[0-9.]+$' "$table" || t_fail "allreduce 8 lacks paired/segmented"
grep -qE '^bcast 32768 .*pipeline=[0-9.]+' "$table" || t_fail "bcast 32768 lacks pipeline"
grep -qE '^bcast (8|4096) .*pipeline' "$table" && t_fail "pipeline below 32 KiB (it runs hier there)"
t_log "table: $(grep -vc '^#' "$table") lines"

# run_auto NAME MAXBYTES VAR=VAL...: checked collectives on the chosen paths, 2 PBs x 2
run_auto() {
  local name=$1 max=$2 pb
  shift 2
  t_instance 2
  for pb in 0 1; do
    t_start "$name.pb$pb" 40 env WAITIO_PBID=$pb "$@" mpirun.openmpi --oversubscribe -np 2 \
      "$TEST_PROGS/mpi_coll_choice.ompi" "$max"
  done
  t_wait "$name.pb0"; t_wait "$name.pb1"
  t_expect_rc "$name.pb0" 0
  t_expect_rc "$name.pb1" 0
  t_expect "$name.pb0" "mpi_coll_choice: 4 processes" "the checked run's summary"
}

# ---- follow ----
run_auto follow 32768 WAITIO_COLL_TABLE="$table" WAITIO_LOG=warn,coll=debug
t_expect follow.pb0 "collective paths from the table $table" "process 0 took the table"
python3 - "$table" "$(t_out follow.pb0)" "$(t_out follow.pb1)" <<'PY' || t_fail "a choice did not follow the table"
import re, sys
best = {}
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0].startswith("#") or f[0] == "waitio-coll-table":
        continue
    best.setdefault(f[0], []).append((int(f[1]), {k: float(v) for k, v in (x.split("=") for x in f[2:])}))
def expected(op, size):
    rep = 0 if size <= 1 else 1 << (size.bit_length() - 1)   # the size class's lower bound
    sizes = best[op]
    near = min(sizes, key=lambda e: max(e[0] + 1, rep + 1) / min(e[0] + 1, rep + 1))
    return min(near[1], key=near[1].get)
seen, bad = 0, []
for out in sys.argv[2:]:
    for m in re.finditer(r"choice: (\w+) (\d+) B -> (\w+) \((\w+)\)", open(out).read()):
        op, size, path, src = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        if op not in best:
            continue
        seen += 1
        if src != "table" or path != expected(op, size):
            bad.append(f"{op} {size}: took {path} ({src}), the table says {expected(op, size)}")
print(f"{seen} choices checked against the table")
if bad or seen < 4 * 3 * 5:
    print("\n".join(bad) or f"only {seen} choices logged", file=sys.stderr)
    sys.exit(1)
PY

# ---- bad ----
printf 'waitio-coll-table 1 npb=2 ppb=2 host=one\nallreduce 8 flat=3 hier=2\nallreduce 64 flat=x\n' >"$T_DIR/bad.tbl"
run_auto bad 8 WAITIO_COLL_TABLE="$T_DIR/bad.tbl" WAITIO_LOG=warn,coll=info
t_expect bad.pb0 "bad.tbl:3: not a time in microseconds" "the malformed line named"
[ "$(cat "$(t_out bad.pb0)" "$(t_out bad.pb1)" | grep -c 'bad.tbl:3')" = 1 ] || t_fail "the malformed table was not reported exactly once"
t_expect bad.pb0 "model: 2 PBs x 2, one host" "the model's parameters"
t_expect bad.pb0 "paths for allreduce \(model\):" "the model's ranking"
printf 'waitio-coll-table 1 npb=2 ppb=8 host=one\nallreduce 8 flat=3\n' >"$T_DIR/2x8.tbl"
run_auto shape 8 WAITIO_COLL_TABLE="$T_DIR/2x8.tbl" WAITIO_LOG=warn,coll=info
t_expect shape.pb0 "was measured on 2 PBs x 8, one host, not 2 x 2, one" "the shapes named"

t_pass
