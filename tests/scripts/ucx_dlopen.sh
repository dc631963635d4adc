#!/usr/bin/env bash
# ucx_dlopen.sh — UCX is loaded only by a process that uses the ucx transport (issue 29:
# src/transport/ucx_sym.c dlopens libucp the first time the transport opens). Checked:
#   link:    libwaitio.so (and waitio-info, linked with libwaitio.a) needs no UCX library (NEEDED,
#            ldd), and libwaitio.so leaves no ucp_/uct_/ucs_/ucm_
#            symbol undefined (nm -D): every UCX call goes through ucx_sym.h's table;
#   plain:   2 processes with the default transports (shm,tcp), and 2 with tcp only, exchange
#            1 MiB + 3 bytes (checked): no UCX library in /proc/self/maps after waitio_init nor
#            after the exchange;
#   ucx:     the same over WAITIO_TRANSPORTS=ucx (UCX's tcp on lo): libucp is mapped there (what
#            "plain" looks for is visible when present) and the data arrive;
#   reuse:   over ucx, 3 rendezvous messages from a buffer unmapped and mapped again at the same
#            address each round: every byte right, and (WAITIO_UCX_RDV=get, the path that reads
#            through WaitIO's registration cache) the sender's cache saw the unmaps (UCM's memory
#            hooks work although UCX was loaded after start-up); again by UCX's own rendezvous
#            (push, the default over UCX's tcp), whose registrations are UCX's: every byte right;
#   hybrid:  WAITIO_COMM_TYPE=hybrid with WAITIO_UCX_LIBRARY=/nonexistent still works (shm,tcp
#            and files) and logs why ucx is left out;
#   missing: WAITIO_TRANSPORTS=ucx with WAITIO_UCX_LIBRARY=/nonexistent, and with a library that
#            lacks UCX's functions (libm.so.6): waitio_init fails within 10 s with WAITIO_ERR_ENV
#            and "UCX library NAME could not be loaded: ..." (no crash, nothing left open);
#            waitio-info says the same on its "ucx transport" line.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
if ! grep -q '^UCX_FOUND:INTERNAL=1' "$WAITIO_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  t_pass "built without UCX: no ucx transport to load"
fi
t_require_progs ucx_dl init_probe
P=$TEST_PROGS/ucx_dl
lib=$WAITIO_BUILD_DIR/src/libwaitio.so
info=$WAITIO_BUILD_DIR/tools/waitio-info
unset WAITIO_TRANSPORTS WAITIO_COMM_TYPE WAITIO_UCX_LIBRARY
ucx=(WAITIO_TRANSPORTS=ucx UCX_TLS=tcp UCX_NET_DEVICES=lo)

# ---- link ----
[ -f "$lib" ] || t_fail "$lib is not built"
needed=$(readelf -d "$lib" | grep NEEDED)
grep -q 'libuc[pstm]' <<<"$needed" && t_fail "libwaitio.so is linked against UCX: $needed"
undef=$(nm -D --undefined-only "$lib" | grep -E ' (ucp|uct|ucs|ucm)_')
[ -z "$undef" ] || t_fail "UCX functions called outside ucx_sym.h's table (add them there): $undef"
deps=$(ldd "$info") # waitio-info: linked with the static libwaitio.a
[[ $deps == *libuc[pstm]* ]] && t_fail "waitio-info (static libwaitio) needs UCX: $deps"
t_log "link: no UCX in NEEDED (libwaitio.so, nor waitio-info with libwaitio.a), no undefined UCX symbol"

# pair NAME ENV... -- ARGS...: 2 processes of one PB running ucx_dl ARGS, both must pass
pair() {
  local name=$1 envs=() r
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  t_instance 1
  for r in 0 1; do
    t_start "$name$r" 40 env WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 "${envs[@]}" "$P" --alarm 35 "$@"
  done
  for r in 0 1; do
    t_expect_rc "$name$r" 0
    t_expect "$name$r" '^ucx_dl: ok$' "the verdict"
  done
}

# ---- plain: default transports and tcp ----
pair plain -- --maps
pair tcp WAITIO_TRANSPORTS=tcp -- --maps
for name in plain0 plain1 tcp0 tcp1; do
  [ "$(grep -c '^ucx_dl: UCX libraries mapped .*: none$' "$(t_out $name)")" = 2 ] ||
    t_fail "$name: a process that does not use the ucx transport mapped UCX: $(grep mapped "$(t_out $name)")"
done
t_log "plain: no UCX library mapped with shm,tcp nor with tcp"

# ---- hybrid on a node without UCX: sockets and files, no failure ----
mkdir -p "$T_DIR/scratch"
pair hybrid WAITIO_COMM_TYPE=hybrid WAITIO_SCRATCH_DIR="$T_DIR/scratch" WAITIO_UCX_LIBRARY=/nonexistent \
  WAITIO_LOG=info -- --maps
t_expect hybrid0 'WAITIO_COMM_TYPE=hybrid without ucx: UCX library /nonexistent could not be loaded' \
  "hybrid says why it runs without ucx"
t_log "hybrid: without a loadable UCX it ran over shm,tcp and files, and said why"

# ---- ucx ----
pair ucx "${ucx[@]}" -- --maps
for r in 0 1; do
  t_expect ucx$r '^ucx_dl: UCX libraries mapped after waitio_init: .*libucp\.so' "libucp loaded by the ucx transport"
done
t_log "ucx: $(grep -m1 'after waitio_init' "$(t_out ucx0)")"

# ---- reuse: registrations of an address whose pages changed ----
pair reuse "${ucx[@]}" WAITIO_UCX_RDV=get WAITIO_LOG=ucx=debug -- --reuse 3
addrs=$(sed -n 's/^ucx_dl: round [0-9]* from //p' "$(t_out reuse0)" | sort -u | wc -l)
[ "$addrs" = 1 ] || t_fail "reuse: the rounds' buffers were not at one address"
line=$(grep -m1 'registration cache:' "$(t_out reuse0)") || t_fail "reuse: rank 0 did not report its registration cache"
read -r inval hooks <<<"$(sed -n 's/.* \([0-9]*\) invalidated by unmaps (memory hooks \([a-z]*\)).*/\1 \2/p' <<<"$line")"
[ "$hooks" = on ] || t_fail "reuse: UCX's memory hooks are not on with UCX loaded late: $line"
[ "${inval:-0}" -ge 2 ] || t_fail "reuse: the unmaps did not invalidate the registrations: $line"
t_log "reuse: $line"
pair reuse_push "${ucx[@]}" WAITIO_UCX_RDV=push -- --reuse 3

# ---- missing: a library that is not there, or is not UCX ----
for bad in /nonexistent libm.so.6; do
  tag=${bad//[^a-z]/}
  t_instance 1
  t_start "missing_$tag" 20 env WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "${ucx[@]}" WAITIO_UCX_LIBRARY=$bad \
    "$TEST_PROGS/init_probe" --label "$tag" --expect ENV --max-secs 10 --alarm 15 \
    --msg "UCX library $bad could not be loaded"
  t_expect_rc "missing_$tag" 0
  t_expect "missing_$tag" "init_probe\[$tag\]: ok" "the verdict"
  out=$(WAITIO_UCX_LIBRARY=$bad timeout 20 "$info" 2>&1)
  grep -q "^ucx transport: UCX library $bad could not be loaded: " <<<"$out" ||
    t_fail "waitio-info with WAITIO_UCX_LIBRARY=$bad: $(grep -i ucx <<<"$out")"
done
grep -q "undefined symbol: ucm_set_event_handler\|has no" "$(t_out missing_libmso)" ||
  t_fail "missing: libm.so.6's error does not name the missing function"
t_pass "no UCX in plain processes; ucx loads it; hooks invalidate late-loaded registrations; a missing UCX fails init clearly"
