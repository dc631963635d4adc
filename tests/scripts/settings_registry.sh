#!/usr/bin/env bash
# settings_registry.sh — the registry of settings (src/core/settings.c, issue 30):
#  unknown:  2 processes of one PB (a ring of checked messages, init_probe --exchange) with
#            misspelled WAITIO_TRANSPORT, WAITIO_INIT_TIMOUT, WAITIO_TRACE_DIR, a far-off name
#            and a WAITIO_TEST_ name: each process names every misspelling once at waitio_init,
#            with the closest known name, nothing for WAITIO_TEST_*; WAITIO_LOG=off silences it;
#            a bad WAITIO_COLL_ALG (read at the first collective) is said once at waitio_init;
#  refuse:   waitio-info exits 1 with the library's message for bad values of several variables
#            (strict ones that fail waitio_init, and ones the library would ignore), 0 for good ones;
#  all/var:  --all lists every registered name with its source (default, environment), --var
#            prints one, an unknown --var exits 1 with "did you mean"; --help, --version, a bad option;
#  docs:     every registered variable is in docs/user-guide.md, docs/tuning.md or
#            docs/one-sided.md, every WAITIO_* name in the first column of their variable tables is
#            registered;
#  source:   no getenv of a WAITIO_* variable in src/, tools/ or adapters/ outside settings.c (the
#            layers over the library use waitio_adapter_getenv), and every WAITIO_* name the code
#            spells out is registered.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
probe=$TEST_PROGS/init_probe
info=$WAITIO_BUILD_DIR/tools/waitio-info
src=$WAITIO_SOURCE_DIR
[ -x "$info" ] || t_fail "$info is not built"

# ---- unknown names at waitio_init, on 2 processes exchanging data ----
typos=(WAITIO_TRANSPORT=tcp WAITIO_INIT_TIMOUT=30 WAITIO_TRACE_DIR=/nowhere WAITIO_QQQQQQQQQQQQ=1
       WAITIO_TEST_REGISTRY_PROBE=1 WAITIO_COLL_ALG=fastest)
t_instance 1
for r in 0 1; do
  t_start "unknown$r" 30 env WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 "${typos[@]}" "$probe" --label "u$r" --exchange
done
t_start quiet 30 env WAITIO_NPB=1 WAITIO_MASTER_PORT="$(t_free_port)" WAITIO_LOG=off WAITIO_TRANSPORT=tcp "$probe" --label quiet --exchange

# ---- waitio-info refuses what the library refuses or ignores, accepts good values ----
bad=("WAITIO_TRANSPORTS=tpc|unknown transport 'tpc'"
     "WAITIO_LOG=inof|WAITIO_LOG='inof'"
     "WAITIO_NPB=abc|WAITIO_NPB='abc' is not an integer in \[1, 65536\]"
     "WAITIO_NPB=|WAITIO_NPB is set but empty"
     "WAITIO_COMM_TYPE=files|WAITIO_COMM_TYPE='files' is not socket, file, hybrid or verbs"
     "WAITIO_SHM_RING=3M|WAITIO_SHM_RING=3145728 is not a power of two"
     "WAITIO_SINGLE_COPY=maybe|WAITIO_SINGLE_COPY='maybe' is not 0, 1 or auto"
     "WAITIO_COLL_ALG=fastest|WAITIO_COLL_ALG='fastest' is not one of"
     "WAITIO_COLL_HIER_BCAST=big|WAITIO_COLL_HIER_BCAST='big' is not MIN-MAX"
     "WAITIO_RMA_MAX_INFLIGHT=0|WAITIO_RMA_MAX_INFLIGHT='0' is not a number in \[1, "
     "WAITIO_INIT_TIMEOUT=soon|WAITIO_INIT_TIMEOUT='soon' is not an integer"
     "WAITIO_TRACE_SIZE=1X|WAITIO_TRACE_SIZE='1X' is not a size"
     "SHMEM_SYMMETRIC_SIZE=-5M|SHMEM_SYMMETRIC_SIZE=-5M is not a size")
for case in "${bad[@]}"; do
  assign=${case%%|*} msg=${case#*|}
  out=$(env "$assign" "$info" 2>&1 >/dev/null); rc=$?
  [ $rc = 1 ] || t_fail "waitio-info accepted $assign (exit status $rc)"
  grep -qE -- "^waitio-info: .*$msg" <<<"$out" || t_fail "waitio-info with $assign: no /$msg/ in: $out"
  [ "$(grep -c -- "${assign%%=*}" <<<"$out")" = 1 ] || t_fail "waitio-info with $assign said it more than once: $out"
done
good=(WAITIO_TRANSPORTS=tcp,shm WAITIO_LOG=warn,boot=info WAITIO_LOG= WAITIO_NPB=3 WAITIO_SHM_RING=2M
      WAITIO_SINGLE_COPY=auto WAITIO_COLL_ALG=RING WAITIO_COLL_HIER_BCAST=16K- WAITIO_INIT_TIMEOUT=5
      SHMEM_SYMMETRIC_SIZE=1.5G WAITIO_RMA_MAX_QUEUED=8M)
for assign in "${good[@]}"; do
  out=$(env "$assign" "$info" 2>&1) || t_fail "waitio-info refused $assign: $(tail -3 <<<"$out")"
done
t_log "waitio-info: ${#bad[@]} bad values refused with the library's message, ${#good[@]} good ones accepted"

# ---- --all, --var, options ----
mapfile -t names < <(sed -nE 's/^ *\{"([A-Z][A-Z0-9_]+)", WIO_SET_.*/\1/p' "$src/src/core/settings.c")
[ ${#names[@]} -ge 60 ] || t_fail "only ${#names[@]} names found in settings.c's table"
declare -A registered
for n in "${names[@]}"; do registered[$n]=1; done
all=$(env WAITIO_EAGER_LIMIT=64K "$info" --all) || t_fail "waitio-info --all failed"
for n in "${names[@]}"; do
  grep -qE "^  $n=.* (default|environment) " <<<"$all" || t_fail "waitio-info --all lacks $n with its source"
done
grep -qE '^  WAITIO_EAGER_LIMIT=64K +environment ' <<<"$all" || t_fail "--all does not say WAITIO_EAGER_LIMIT came from the environment"
grep -qE '^  WAITIO_CHUNK_SIZE=256K +default ' <<<"$all" || t_fail "--all does not give WAITIO_CHUNK_SIZE's default"
out=$(env WAITIO_KEY=secret-registry-0123456789 "$info" --all 2>&1)
grep -q 'secret-registry' <<<"$out" && t_fail "--all printed the key"
env WAITIO_LOG=inof "$info" --all >/dev/null 2>&1 && t_fail "--all accepted WAITIO_LOG=inof"
var=$(env WAITIO_TRANSPORTS=tcp "$info" --var WAITIO_TRANSPORTS) || t_fail "--var WAITIO_TRANSPORTS failed"
grep -qE '^  WAITIO_TRANSPORTS=tcp +environment ' <<<"$var" && grep -q 'default: shm,tcp' <<<"$var" ||
  t_fail "--var WAITIO_TRANSPORTS: $var"
out=$("$info" --var WAITIO_TRANSPORT 2>&1) && t_fail "--var of an unknown name exited 0"
grep -q 'did you mean WAITIO_TRANSPORTS?' <<<"$out" || t_fail "--var WAITIO_TRANSPORT: $out"
out=$("$info" --help 2>/dev/null) && grep -q '^usage: waitio-info' <<<"$out" || t_fail "--help: no usage on stdout, or not exit 0"
out=$("$info" --version) && grep -qE '^waitio-info \(WaitIO\) [0-9]' <<<"$out" || t_fail "--version: $out"
out=$("$info" --bogus 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && grep -q '^usage:' <<<"$out" || t_fail "--bogus: exit status $rc, stderr: $out"
t_log "--all lists ${#names[@]} variables with their sources; --var, --help, --version, --bogus"

# ---- docs agree with the registry ----
tables=$(awk '/^## /{env = ($0 ~ /^## Environment/)} env && /^\|/' "$src/docs/user-guide.md"
         grep -E '^\|' "$src/docs/tuning.md"
         grep -E '^\| `(WAITIO|SHMEM)_' "$src/docs/one-sided.md")
for n in "${names[@]}"; do
  grep -q -- "$n" <<<"$tables" || t_fail "$n is registered but in no variable table of the docs"
done
mapfile -t documented < <(cut -d'|' -f2 <<<"$tables" | grep -oE '`WAITIO_[A-Z0-9_]+`' | tr -d '`' | sort -u)
for n in "${documented[@]}"; do
  [ -n "${registered[$n]:-}" ] || t_fail "the docs' tables list $n, which the registry does not know"
done
t_log "docs: ${#names[@]} registered names in the tables, ${#documented[@]} table names registered"

# ---- the sources read WAITIO_* variables through the registry only ----
left=$(grep -rnE '(^|[^_[:alnum:]])getenv\(("WAITIO_|[A-Z_]*VAR\)|instance)' "$src/src" "$src/tools" "$src/adapters" \
       --include='*.c' --include='*.h' | grep -v 'src/core/settings.c')
[ -z "$left" ] || t_fail "WAITIO_* variables read around the registry: $left"
# every WAITIO_* name the code spells as a whole string (what it reads, its tables of names);
# "WAITIO_COLL_" and "WAITIO_TEST_" are prefixes
mapfile -t read_names < <(grep -rhoE '"WAITIO_[A-Z0-9_]*[A-Z0-9]"' "$src/src" "$src/tools" "$src/adapters" --include='*.c' --include='*.h' |
                          tr -d '"' | sort -u)
for n in "${read_names[@]}"; do
  [ -n "${registered[$n]:-}" ] || t_fail "$n is read through the registry but not registered"
done
t_log "sources: the ${#read_names[@]} WAITIO_* names the code spells out are all registered"

# ---- the processes ----
for p in unknown0 unknown1 quiet; do t_expect_rc $p 0; done
for p in unknown0 unknown1; do
  t_expect $p 'init_probe\[u[01]\]: ok'
  for pair in WAITIO_TRANSPORT:WAITIO_TRANSPORTS WAITIO_INIT_TIMOUT:WAITIO_INIT_TIMEOUT WAITIO_TRACE_DIR:WAITIO_TRACE; do
    line="${pair%%:*} is not a WaitIO setting \(ignored\); did you mean ${pair#*:}\?"
    [ "$(grep -cE -- "$line" "$(t_out $p)")" = 1 ] || t_fail "$p did not say /$line/ exactly once"
  done
  [ "$(grep -c 'WAITIO_QQQQQQQQQQQQ is not a WaitIO setting (ignored); waitio-info --all lists them' "$(t_out $p)")" = 1 ] ||
    t_fail "$p did not report WAITIO_QQQQQQQQQQQQ once without a guess"
  [ "$(grep -c "WAITIO_COLL_ALG='fastest' is not one of auto,linear,2L,tree,ring; using auto" "$(t_out $p)")" = 1 ] ||
    t_fail "$p did not say once that WAITIO_COLL_ALG=fastest is ignored"
  t_reject $p 'WAITIO_TEST_REGISTRY_PROBE' "WAITIO_TEST_* is the test suite's"
  t_reject $p 'WAITIO_(NPB|PB_RANK|KEY|MASTER_PORT) is not' "a registered name was reported"
done
t_reject quiet 'not a WaitIO setting' "WAITIO_LOG=off silences the report"
t_log "unknown names: each said once per process with the closest name, in 2 processes that exchanged data"
t_pass
