#!/usr/bin/env bash
# mp_init_timeout.sh — start-up with missing participants, all by hand (plain processes):
#  missing-pb:     NPB=2, only PB 0 runs: waitio_init(3) returns WAITIO_ERR_TIMEOUT after ~3 s
#                  (2.5 .. 6 s) and the message names PB 1 as missing;
#  missing-master: NPB=2, PB 0 never starts: PB 1's waitio_init(3) times out the same way and
#                  its message names the master (and its address);
#  partial:        NPB=3, PB 0 runs, PB 1 declares 2 processes but only its rank 0 runs, PB 2 never
#                  starts: the master's message names PB 1 and PB 2; PB 1's rank 0 (registered,
#                  waiting) also times out in time;
#  late:           PB 1 starts 2 s after PB 0 and both use timeout 10: success and a checked
#                  exchange (a late PB within the timeout is fine).
# The four instances run concurrently on their own ports.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
probe=$TEST_PROGS/init_probe
inst() { # prints "WAITIO_NPB=.. WAITIO_MASTER_HOST=.. WAITIO_MASTER_PORT=.. WAITIO_KEY=.."
  echo "WAITIO_NPB=$1 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$(t_free_port) WAITIO_KEY=$(t_random_key)"
}
timing=(--timeout 3 --expect TIMEOUT --min-secs 2.5 --max-secs 6 --alarm 20)

# missing-pb
read -ra i1 <<<"$(inst 2)"
t_start missing-pb 25 env "${i1[@]}" WAITIO_PBID=0 "$probe" --label missing-pb "${timing[@]}" \
  --msg 'PB 1'

# missing-master
read -ra i2 <<<"$(inst 2)"
port2=${i2[2]#WAITIO_MASTER_PORT=}
t_start missing-master 25 env "${i2[@]}" WAITIO_PBID=1 "$probe" --label missing-master \
  "${timing[@]}" --msg 'master|PB 0' --msg "$port2"

# partial
read -ra i3 <<<"$(inst 3)"
t_start partial-master 25 env "${i3[@]}" WAITIO_PBID=0 "$probe" --label partial-master \
  "${timing[@]}" --msg 'PB 1' --msg 'PB 2' --msg-soft '1 of 2'
t_start partial-pb1 25 env "${i3[@]}" WAITIO_PBID=1 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=2 "$probe" \
  --label partial-pb1 "${timing[@]}" --msg-soft 'PB 2'

# late
read -ra i4 <<<"$(inst 2)"
t_start late-pb0 25 env "${i4[@]}" WAITIO_PBID=0 "$probe" --label late-pb0 --timeout 10 \
  --min-secs 1.5 --max-secs 8 --exchange
sleep 2
t_start late-pb1 25 env "${i4[@]}" WAITIO_PBID=1 "$probe" --label late-pb1 --timeout 10 \
  --max-secs 8 --exchange

bad=()
for n in missing-pb missing-master partial-master partial-pb1 late-pb0 late-pb1; do
  t_wait "$n" || bad+=("$n:$(t_rc "$n")")
done
t_show_all
[ ${#bad[@]} -eq 0 ] || t_fail "failed (name:exit status): ${bad[*]}"
for n in missing-pb missing-master partial-master partial-pb1 late-pb0 late-pb1; do
  t_expect "$n" "^init_probe\\[$n\\]: ok"
done
t_expect late-pb0 'ring exchange among 2 processes ok'
t_pass
