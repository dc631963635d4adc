#!/usr/bin/env bash
# sec_file_replay_direction.sh — issue 25 item 3: a file connection is two streams of segment
# files with one nonce, one per direction (c<connector>-<nonce> in the acceptor's inbox,
# a<acceptor>-<nonce> in the connector's). Before the fix a segment's MAC covered its bytes, the
# nonce and its position but not its direction, so a segment copied from one direction into the
# other was accepted and parsed as if the peer had written it. Now the MAC binds the direction,
# the writer and the reader (segment version 2), and the copy is refused before a byte is parsed.
# A 2-PB job of tests/progs/idle: PB 0 opens its connection to PB 1 at once (its receive names
# PB 1), while PB 1 sleeps 8 s without calling WaitIO, so PB 0's HELLO (segment 0 of direction
# 0 -> 1) waits unread in PB 1's inbox. The attacker (same user, no key needed) copies it into
# PB 0's inbox as segment 0 of the reply direction 1 -> 0, which PB 0 is waiting for. PB 0 must
# reject it at its MAC, before a byte of it is parsed. (A tampered stream then fails that
# connection, as a reset would: whoever can write the inbox can always stop the job; what the
# MAC guarantees is that nothing forged or replayed is ever taken as the peer's data.) Both
# processes must end by themselves (no crash, no hang).
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs idle
scratch=$T_DIR/scratch
mkdir -p "$scratch"
chmod 700 "$scratch"
job=replay-$$
inst=$scratch/.waitio-file-$job
common=(WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$scratch" WAITIO_JOB_ID=$job WAITIO_NPB=2
        WAITIO_KEY="$(t_random_key)" WAITIO_LOG=info)
for pb in 0 1; do
  t_start "pb$pb" 45 env "${common[@]}" WAITIO_PBID=$pb "$TEST_PROGS/idle" --sleep 8 --max-cores 100 --alarm 40
done
hello=
for ((i = 0; i < 200; i++)); do
  hello=$(ls "$inst"/in-1.0/c0-*/0000000000000000 2>/dev/null | head -1)
  [ -n "$hello" ] && break
  sleep 0.05
done
[ -n "$hello" ] || t_fail "PB 0's connection to PB 1 (its HELLO in PB 1's inbox) did not appear"
stream=$(basename "$(dirname "$hello")")
nonce=${stream#c0-}
reply=$inst/in-0.0/a1-$nonce
mkdir -p -m 0700 "$reply"
cp "$hello" "$reply/.replay" && mv "$reply/.replay" "$reply/0000000000000000"
t_log "copied $stream/0000000000000000 (direction 0 -> 1) to a1-$nonce/0000000000000000 (direction 1 -> 0)"
t_wait_line pb0 "a1-$nonce: segment 0 rejected|rror" 5 || true
bad=()
for n in pb0 pb1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
grep -h "a1-$nonce\|HELLO\|rror" "$T_DIR/pb0.out" | head -5 | sed 's/^/  /'
t_expect pb0 "a1-$nonce: segment 0 rejected: its MAC does not match" \
  "the segment replayed into the other direction must be refused at its MAC, before it is parsed"
for n in pb0 pb1; do
  case $(t_rc $n) in 0|1) ;; *) t_fail "$n ended with exit status $(t_rc $n) (a crash or a hang)" ;; esac
done
t_pass "a segment replayed in the other direction was refused at its MAC (job: ${bad[*]:-completed})"
