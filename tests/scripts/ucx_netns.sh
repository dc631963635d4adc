#!/usr/bin/env bash
# ucx_netns.sh — the ucx transport between two hosts' worth of network: PB 0 and PB 1 run in two
# network namespaces created here, linked only by a veth pair (10.213.7.1 <-> 10.213.7.2, nothing
# else reachable), with WAITIO_TRANSPORTS=ucx over UCX's tcp on that link (UCX_TLS=tcp,
# UCX_NET_DEVICES=the veth). Start-up goes through the master in PB 0's namespace; every phase of
# the exchange test (0 B .. 8 MiB, the large ones read in place by rendezvous gets; order;
# wildcards; truncation; random sizes and tags; every byte checked) crosses the veth.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs exchange
if ! "$WAITIO_BUILD_DIR/tools/waitio-info" | grep -q "^ucx transport: UCX "; then
  echo "SKIP: built without UCX"; exit 0
fi
if [ "$(id -u)" != 0 ] || ! ip netns add wio-probe-$$ 2>/dev/null; then
  echo "SKIP: creating network namespaces needs root"; exit 0
fi
ip netns del wio-probe-$$
a=wiouA$$ b=wiouB$$
cleanup_ns() { ip netns del $a 2>/dev/null || true; ip netns del $b 2>/dev/null || true; }
trap 'cleanup_ns; t_cleanup' EXIT
ip netns add $a
ip netns add $b
ip link add wuA$$ type veth peer name wuB$$
ip link set wuA$$ netns $a
ip link set wuB$$ netns $b
ip -n $a link set wuA$$ name wioveth
ip -n $b link set wuB$$ name wioveth
ip -n $a addr add 10.213.7.1/24 dev wioveth
ip -n $b addr add 10.213.7.2/24 dev wioveth
for ns in $a $b; do ip -n $ns link set lo up; ip -n $ns link set wioveth up; done
port=$(t_free_port)
seed=${WAITIO_TEST_SEED:-$RANDOM}
common=(WAITIO_TRANSPORTS=ucx UCX_TLS=tcp UCX_NET_DEVICES=wioveth WAITIO_NPB=2 WAITIO_KEY="$(t_random_key)"
        WAITIO_MASTER_HOST=10.213.7.1 WAITIO_MASTER_PORT=$port WAITIO_LOG=debug)
args=(--alarm 90 --op-timeout 80 --init-timeout 30 --phases ABCDE --seed "$seed")
t_start pb0 100 ip netns exec $a env "${common[@]}" WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 \
  "$TEST_PROGS/exchange" "${args[@]}"
for r in 0 1; do
  t_start "pb1.r$r" 100 ip netns exec $b env "${common[@]}" WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 \
    "$TEST_PROGS/exchange" "${args[@]}"
done
bad=()
for n in pb0 pb1.r0 pb1.r1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "processes failed (name:exit status): ${bad[*]}"; }
t_expect pb0 '^exchange ok: 3 processes, 2 PBs, phases ABCDE' "universe rank 0's verdict"
t_expect pb0 'over ucx' "PB 0's connections did not go over ucx"
t_expect pb0 'read by single copy' "no finalize statistics"
t_reject pb0 ' 0 messages \([0-9]+ bytes\) read by single copy' "no large message was read in place"
t_show pb0 | grep -E "exchange ok|over ucx|single copy|ucx:" | head; t_pass "2 namespaces over a veth, UCX's tcp, phases ABCDE (seed $seed)"
