#!/usr/bin/env bash
# fault_link_cut.sh — a network link breaks under a running job: two PBs in two network
# namespaces created here (veth pair 10.231.0.1 <-> 10.231.0.2, nothing else), exchanging a
# checked ring; the link is taken down mid-run. With WAITIO_PEER_TIMEOUT=3 every pending request
# on both sides must fail with a "connection lost" error within 12 s, and no process may linger.
# timeout: 90
set -euo pipefail
if [ "$(id -u)" != 0 ] || ! ip netns add wio-probe-$$ 2>/dev/null; then
  echo "SKIP: creating network namespaces needs root"; exit 0
fi
ip netns del wio-probe-$$
source "$(dirname "$0")/pbs.inc"
a=wioa$$ b=wiob$$
cleanup_ns() { ip netns del $a 2>/dev/null || true; ip netns del $b 2>/dev/null || true; }
trap 'pbs_cleanup; cleanup_ns' EXIT
ip netns add $a
ip netns add $b
ip link add va$$ type veth peer name vb$$
ip link set va$$ netns $a
ip link set vb$$ netns $b
ip -n $a addr add 10.231.0.1/24 dev va$$
ip -n $b addr add 10.231.0.2/24 dev vb$$
ip -n $a link set va$$ up
ip -n $b link set vb$$ up
ip -n $a link set lo up
ip -n $b link set lo up
pbs_instance 2
# TCP between the namespaces: shared memory (through /dev/shm) does not cross the cut link
export WAITIO_MASTER_HOST=10.231.0.1 WAITIO_PEER_TIMEOUT=3 WAITIO_TRANSPORTS=tcp
WAITIO_PBID=0 setsid timeout 60 ip netns exec $a "$TEST_PROGS/core_ring" 100000 30 20 >"$PBS_DIR/pb0" 2>&1 &
PBS_PIDS+=($!)
WAITIO_PBID=1 setsid timeout 60 ip netns exec $b "$TEST_PROGS/core_ring" 100000 30 20 >"$PBS_DIR/pb1" 2>&1 &
PBS_PIDS+=($!)
sleep 3
echo "cutting the link between the namespaces"
ip -n $a link set va$$ down
cut=$(date +%s%N)
status=0
for p in "${PBS_PIDS[@]}"; do
  wait "$p" && { echo "FAIL: a PB finished normally despite the cut link"; status=1; }
done
PBS_PIDS=()
ms=$(( ($(date +%s%N) - cut) / 1000000 ))
cat "$PBS_DIR"/pb*
echo "both PBs stopped $ms ms after the cut"
for pb in 0 1; do
  grep -q "connection to the peer lost\|timed out" "$PBS_DIR/pb$pb" ||
    { echo "FAIL: PB $pb did not report the lost connection"; status=1; }
  grep -q "Terminated\|timeout: the monitored command" "$PBS_DIR/pb$pb" &&
    { echo "FAIL: PB $pb had to be killed"; status=1; }
done
[ $ms -lt 12000 ] || { echo "FAIL: detection took $ms ms"; status=1; }
[ $status = 0 ] && echo PASS
exit $status
