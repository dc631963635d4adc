#!/usr/bin/env bash
# rma_ucx.sh — one-sided operations over UCX's RDMA (issue 27 item 4), tests/progs/rma_ucx.c: puts
# and gets on heap and user windows, atomics UCX does and atomics it cannot (max, double add:
# frames) on the same member's words, order across the two paths; every byte and total checked.
# Which path each operation took is read from the processes' finalize lines (WAITIO_LOG=debug):
#   rdma    2 processes over UCX's tcp on lo: puts/gets/fetch-adds went over RDMA, max and double
#           add fell back to frames
#   mixed   3 processes as two PBs, the third with WAITIO_RMA_RDMA=0 (all its operations as
#           frames, served by the target's CPU) while the others update the same words over RDMA:
#           exact totals prove the two paths atomic with respect to each other
#   frames  WAITIO_RMA_RDMA=0 everywhere: no RDMA at all, same results (the fallback path alone)
#   direct  2 processes over UCX's shared memory (UCX_TLS=sm,self): the heap part is UCX's own
#           segment, mapped by the peer (ucp_rkey_ptr): the first operation on it is a load or
#           store through the transport ("1 of them direct"), which hands the mapping to the
#           one-sided layer, and the rest go its mapped path ("N operations on mapped memory");
#           the user window's stay ucp_*_nbx. Over tcp (the rdma case) nothing is direct.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
if ! grep -q '^UCX_FOUND:INTERNAL=1' "$WAITIO_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  t_pass "built without UCX: no ucx transport to test"
fi
t_require_progs rma_ucx
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun
P=$TEST_PROGS/rma_ucx
ucx=(WAITIO_TRANSPORTS=ucx "UCX_TLS=${UCX_TLS:-tcp}" "UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}" WAITIO_LOG=debug)
args=(--iters 100 --alarm 40)

# paths NAME: "frames rdma nprocs" summed over the processes' finalize lines
paths() {
  sed -n 's/.*one-sided: [0-9]* operations on mapped memory, [0-9]* by single copy, \([0-9]*\) as frames, \([0-9]*\) over RDMA.*/\1 \2/p' \
    "$(t_out "$1")" | awk '{f += $1; r += $2; n++} END {print f + 0, r + 0, n + 0}'
}

# mapped NAME: the operations done on mapped memory (a part of this host's shared window, or one
# the transport mapped), summed
mapped() {
  sed -n 's/.*one-sided: \([0-9]*\) operations on mapped memory.*/\1/p' "$(t_out "$1")" | awk '{m += $1} END {print m + 0}'
}

# direct NAME: the operations done as loads/stores on a peer's mapped part, summed
direct() {
  sed -n 's/.* over RDMA (\([0-9]*\) of them direct.*/\1/p' "$(t_out "$1")" | awk '{d += $1} END {print d + 0}'
}

t_run_job rdma 40 "${ucx[@]}" -- "$run" -np 2 "$P" "${args[@]}"
t_expect rdma "^rma_ucx ok: 2 processes" "the verdict"
read -r f r np <<<"$(paths rdma)"
t_log "rdma: $r operations over RDMA, $f as frames ($np processes)"
# rank 0's atomics are on itself (mapped); rank 1's 100 fetch-adds and 100 adds go over RDMA,
# its 100 max and 100 double adds as frames; puts, gets and signals of both over RDMA
[ "$np" = 2 ] && [ "$r" -ge 300 ] && [ "$f" -ge 200 ] ||
  t_fail "rdma: expected RDMA for put/get/add and frames for max/double add (rdma $r, frames $f, $np processes)"
[ "$(direct rdma)" = 0 ] || t_fail "rdma: UCX's tcp cannot map a peer's part, yet $(direct rdma) operations were direct"

t_run_job mixed 50 "${ucx[@]}" -- "$run" -np 2 "$P" "${args[@]}" : -- env WAITIO_RMA_RDMA=0 "$run" -np 1 "$P" "${args[@]}"
t_expect mixed "^rma_ucx ok: 3 processes" "the verdict: exact totals with RDMA and frame updates of one word"
read -r f r np <<<"$(paths mixed)"
t_log "mixed: $r over RDMA, $f as frames ($np processes)"
[ "$np" = 3 ] && [ "$r" -ge 250 ] || t_fail "mixed: expected RDMA from the two processes that allow it (rdma $r)"

t_run_job frames 40 "${ucx[@]}" WAITIO_RMA_RDMA=0 -- "$run" -np 2 "$P" "${args[@]}"
t_expect frames "^rma_ucx ok: 2 processes" "the verdict"
read -r f r np <<<"$(paths frames)"
[ "$np" = 2 ] && [ "$r" = 0 ] && [ "$f" -ge 500 ] || t_fail "frames: expected no RDMA (rdma $r, frames $f)"
t_run_job direct 40 WAITIO_TRANSPORTS=ucx UCX_TLS=sm,self WAITIO_LOG=debug -- "$run" -np 2 "$P" "${args[@]}"
t_expect direct "^rma_ucx ok: 2 processes" "the verdict over UCX's shared memory"
read -r f r np <<<"$(paths direct)"
d=$(direct direct) m=$(mapped direct) m_tcp=$(mapped rdma)
t_log "direct: $r over RDMA, $d of them direct, $f as frames, $m on mapped memory (over tcp: $m_tcp) ($np processes)"
# The first operation on the peer's heap part is direct through the transport, which hands the
# mapping over: rank 1's 100 fetch-adds and 100 adds on rank 0's heap part, and both ranks' heap
# puts and gets, then go the API's mapped path (over tcp only a rank's own part is mapped); the
# user window's operations are not direct (its memory is the user's: registered only)
[ "$np" = 2 ] && [ "$d" -ge 1 ] && [ "$d" -le 2 ] && [ $((m - m_tcp)) -ge 300 ] && [ "$r" -gt "$d" ] ||
  t_fail "direct: expected heap operations as loads/stores over UCX's sm (rdma $r, direct $d, mapped $m, over tcp $m_tcp, $np processes)"
t_pass "RDMA put/get/atomics, fallback atomics, mixed paths on one word, frames only, direct over UCX sm"
