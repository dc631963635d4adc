#!/usr/bin/env bash
# ci_pipe.sh — device messages staged chunk by chunk across tcp (src/gpu/pipeline.c), with the CUDA
# driver's test double (tests/gpu/fake_cuda.c: real asynchronous streams, device pointers that
# crash on CPU access) and tests/gpu/gpu_pipe:
#  1. check: over tcp only, device->device, device->host, host->device, both ranks sending at
#     once, sizes 0 B - 64 MiB around the pipeline's chunk boundaries (a 192 KiB chunk, not a
#     multiple of the DATA frame size), every byte checked; the finalize line must count
#     pipelined messages on both sides;
#  2. overlap: with the double's copies slowed to 4 ms per MiB, paired runs (alternating) of
#     16 MiB device->device transfers pipelined (WAITIO_GPU_PIPELINE_DEPTH=4) and staged whole
#     (DEPTH=0): the pipelined median must be under 0.8x the whole one (serial ~2 copies + wire,
#     pipelined ~1 copy + a chunk), and the sender must count chunks that went to the wire while
#     a later chunk's copy ran;
#  3. die: a killed sender, then a killed receiver, mid-transfer (slowed copies): the survivor's
#     request fails with a peer error, it finalizes cleanly with no staging buffer left in use.
# With WAITIO_TEST_GPU_REAL=1 (tests/gpu/run.sh) the real driver is used; the timing case then
# compares without the artificial delay and only reports.
# timeout: 120
set -uo pipefail
source "$WAITIO_SOURCE_DIR/tests/scripts/lib.sh"
source "$WAITIO_SOURCE_DIR/tests/gpu/gpu_lib.sh"
t_require_progs gpu_pipe
real=${WAITIO_TEST_GPU_REAL:-0}
gpu_driver
seed=${WAITIO_TEST_SEED:-$RANDOM}
t_log "seed $seed"

# pair NAME SECS ENV... -- ARGS...: ranks 0 and 1 as 2 PBs of one process each, over tcp
pair() {
  local name=$1 secs=$2 envs=() n
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  t_instance 2
  for n in 0 1; do
    t_start "$name.$n" "$secs" env WAITIO_PBID=$n WAITIO_TRANSPORTS=tcp "${driver[@]}" "${envs[@]}" \
      "$TEST_PROGS/gpu_pipe" --seed "$seed" "$@"
  done
}
must_pass() {
  local n
  for n in "$@"; do t_wait "$n" || { t_show_all; t_fail "$n failed (exit $(t_rc "$n"))"; }; done
}
# counter N FILE: the N-th number of the finalize line of the pipeline (1: messages sent,
# 2: chunks sent, 3: chunks overlapped, 4: messages received, 5: chunks copied early)
counter() {
  sed -n 's/.*pipelined staging: \([0-9]*\) message(s) sent in \([0-9]*\) chunk(s), \([0-9]*\) of them.*; \([0-9]*\) message(s) received, \([0-9]*\) chunk(s).*/\1 \2 \3 \4 \5/p' "$2" |
    head -1 | awk -v n="$1" '{ print $n }'
}

# ---- 1. every byte, around the chunk boundaries ----
chunk=$((192 * 1024))
pair check 90 WAITIO_LOG=gpu=debug WAITIO_GPU_PIPELINE_CHUNK=192K WAITIO_GPU_PIPELINE_DEPTH=3 -- \
  --check --kinds dd,dh,hd --rounds 22 --chunk $chunk --max $((64 << 20))
must_pass check.0 check.1
t_expect check.0 '^gpu_pipe ok: rank 0' "check: rank 0's verdict"
for n in 0 1; do
  s=$(counter 1 "$(t_out check.$n)") r=$(counter 4 "$(t_out check.$n)")
  t_log "check: rank $n pipelined ${s:-0} sends, ${r:-0} receives"
  [ "${s:-0}" -gt 0 ] && [ "${r:-0}" -gt 0 ] || { t_show check.$n; t_fail "check: rank $n pipelined no message"; }
done
t_reject check.0 'staging buffer.*still in use' "check: a staging buffer left in use"

# ---- 2. overlap: pipelined against whole staging, paired ----
delay=(FAKE_CUDA_COPY_US_PER_MIB=4000)
[ "$real" = 1 ] && delay=()
len=$((16 << 20))
pipe_t=() whole_t=()
for round in 1 2; do
  for mode in pipe whole; do
    depth=4
    [ $mode = whole ] && depth=0
    pair "$mode$round" 60 WAITIO_LOG=gpu=debug WAITIO_GPU_PIPELINE_DEPTH=$depth "${delay[@]}" -- --time 3 --max $len
    must_pass "$mode$round.0" "$mode$round.1"
    us=$(sed -n 's/^gpu_pipe: median \([0-9]*\) us.*/\1/p' "$(t_out "$mode$round.0")")
    [ -n "$us" ] || { t_show_all; t_fail "no timing from $mode$round"; }
    if [ $mode = pipe ]; then pipe_t+=("$us"); else whole_t+=("$us"); fi
  done
done
ov=$(counter 3 "$(t_out pipe1.0)") early=$(counter 5 "$(t_out pipe1.1)")
t_log "16 MiB device->device over tcp: pipelined ${pipe_t[*]} us, whole ${whole_t[*]} us (load $(cut -d' ' -f1 /proc/loadavg)); chunks overlapped at the sender ${ov:-0}, copied early at the receiver ${early:-0}"
[ "$(counter 1 "$(t_out whole1.0)")" = "" ] || t_fail "DEPTH=0 still pipelined"
if [ "$real" != 1 ]; then
  [ "${ov:-0}" -gt 0 ] || { t_show pipe1.0; t_fail "no chunk went to the wire while a later copy ran"; }
  [ "${early:-0}" -gt 0 ] || { t_show pipe1.1; t_fail "the receiver copied no chunk before the last arrived"; }
  best_pipe=$(printf '%s\n' "${pipe_t[@]}" | sort -n | head -1)
  best_whole=$(printf '%s\n' "${whole_t[@]}" | sort -n | head -1)
  awk -v p="$best_pipe" -v w="$best_whole" 'BEGIN { exit !(p < 0.8 * w) }' ||
    t_fail "pipelining does not hide the copies: best pipelined ${best_pipe} us, best whole ${best_whole} us"
fi

# ---- 3. a peer killed mid-pipeline ----
for who in sender receiver; do
  pair "die-$who" 40 WAITIO_LOG=gpu=debug "${delay[@]}" -- --die $who --die-ms 60 --max $((32 << 20))
  dead=0 alive=1
  [ $who = receiver ] && dead=1 alive=0
  t_wait "die-$who.$dead"
  [ "$(t_rc "die-$who.$dead")" = 137 ] || { t_show_all; t_fail "the dying $who ended with $(t_rc "die-$who.$dead"), not SIGKILL"; }
  [ "$real" = 1 ] || t_expect "die-$who.$dead" 'dies mid-transfer' "the $who died mid-transfer"
  must_pass "die-$who.$alive"
  t_expect "die-$who.$alive" 'saw the peer.s death' "the survivor of a killed $who"
  t_reject "die-$who.$alive" 'staging buffer.*still in use' "a staging buffer left in use after a killed $who"
done
t_pass
