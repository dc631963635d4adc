#!/usr/bin/env bash
# ucx_verbs.sh — WAITIO_COMM_TYPE=verbs on a machine without an RDMA device (this one): start-up
# fails within seconds with a message that says no RDMA device was found and what UCX does see —
# never a hang, never a silent fall-back to TCP. A build without UCX must say instead that it was
# built without UCX. Both PBs of a 2-PB instance are checked; waitio-info shows the same choice.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
info=$("$WAITIO_BUILD_DIR/tools/waitio-info" 2>&1)
if echo "$info" | grep -q "^ucx transport: UCX "; then
  echo "$info" | grep -E "^ucx transport: UCX [0-9]+\.[0-9]+\.[0-9]+; RDMA devices: (none|yes); transports/devices: " ||
    t_fail "waitio-info does not show UCX's version and devices"
  if echo "$info" | grep -q "RDMA devices: yes"; then
    echo "SKIP: this machine has an RDMA device: verbs would start"; exit 0
  fi
  want='no RDMA device'
  want2='UCX sees: '
else
  echo "$info" | grep -q "^ucx transport: not built" || t_fail "waitio-info says nothing of the ucx transport"
  want='built without UCX'
  want2='WAITIO_COMM_TYPE=verbs'
fi
port=$(t_free_port)
key=$(t_random_key)
for pb in 0 1; do
  t_start "pb$pb" 30 env WAITIO_COMM_TYPE=verbs WAITIO_NPB=2 WAITIO_PBID=$pb WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 \
    WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY="$key" \
    "$TEST_PROGS/init_probe" --timeout 20 --expect ENV --max-secs 10 --msg "$want" --msg "$want2" --label "pb$pb"
done
for pb in 0 1; do
  t_wait "pb$pb" || { t_show_all; t_fail "PB $pb: init_probe failed (exit status $(t_rc "pb$pb"))"; }
done
t_show pb0
t_expect pb0 "$want" "PB 0's start-up error"
t_pass "verbs without an RDMA device: '$want'"
