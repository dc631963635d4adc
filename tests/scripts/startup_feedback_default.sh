#!/usr/bin/env bash
# startup_feedback_default.sh — what a user sees with no WAITIO_LOG at all (issue 30), and the
# per-subsystem WAITIO_LOG; the cases run concurrently on their own instances:
#  late:    NPB=3, PB 1 starts 12 s after PBs 0 and 2: by default the master says at 5 s and at
#           10 s that it waits for PB 1 (and for nothing else), PB 2 (registered) says at 5 s
#           and 10 s that it waits; PB 1 itself, quick once started, says nothing; the exchange
#           then succeeds;
#  quick:   2 PBs of 2 processes, default WAITIO_LOG: nothing at all on stderr (no notice, no
#           harmless warning); the same with WAITIO_LOG=warn (a good run has nothing to warn
#           about);
#  subsys:  WAITIO_LOG=boot=debug shows boot debug lines and no other subsystem's debug or info
#           lines; WAITIO_LOG=warn,net=debug,core=info shows net debug and core info lines and
#           no boot debug line; every line names its subsystem and the time since waitio_init;
#  bad:     a bad WAITIO_LOG (unknown subsystem, unknown level) is refused by waitio_init with
#           WAITIO_ERR_ENV and a message naming the entry (and the known subsystems).
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
probe=$TEST_PROGS/init_probe
inst() { # prints "WAITIO_NPB=.. WAITIO_MASTER_HOST=.. WAITIO_MASTER_PORT=.. WAITIO_KEY=.."
  echo "WAITIO_NPB=$1 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$(t_free_port) WAITIO_KEY=$(t_random_key)"
}
# errstart NAME SECS CMD...: t_start with stderr alone in $T_DIR/NAME.err (stdout in NAME.out)
errstart() {
  local name=$1 secs=$2
  shift 2
  t_start "$name" "$secs" bash -c 'err=$1; shift; exec "$@" 2>"$err"' errstart "$T_DIR/$name.err" "$@"
}
line='waitio\[PB [0-9]+ rank [0-9]+ \+[0-9]+\.[0-9]s' # the prefix of every log line
good=(--exchange --alarm 40)

# late
read -ra il <<<"$(inst 3)"
t_start late0 45 env "${il[@]}" WAITIO_PBID=0 "$probe" --label late0 --timeout 30 "${good[@]}"
t_start late2 45 env "${il[@]}" WAITIO_PBID=2 "$probe" --label late2 --timeout 30 "${good[@]}"

# quick, default and warn
for lv in default warn; do
  read -ra iq <<<"$(inst 2)"
  logv=(); [ $lv = warn ] && logv=(WAITIO_LOG=warn)
  for pb in 0 1; do
    for r in 0 1; do
      errstart "quick-$lv.$pb.$r" 30 env "${iq[@]}" "${logv[@]}" WAITIO_PBID=$pb WAITIO_PB_RANK=$r \
        WAITIO_PB_SIZE=2 "$probe" --label "quick-$lv.$pb.$r" --timeout 20 "${good[@]}"
    done
  done
done

# subsys
read -ra is1 <<<"$(inst 2)"
read -ra is2 <<<"$(inst 2)"
for pb in 0 1; do
  t_start "boot.$pb" 30 env "${is1[@]}" WAITIO_LOG=boot=debug WAITIO_PBID=$pb "$probe" \
    --label "boot.$pb" --timeout 20 "${good[@]}"
  t_start "net.$pb" 30 env "${is2[@]}" WAITIO_LOG=warn,net=debug,core=info WAITIO_PBID=$pb "$probe" \
    --label "net.$pb" --timeout 20 "${good[@]}"
done

# bad
t_start bad-subsys 20 env WAITIO_LOG=warn,bogus=info "$probe" --label bad-subsys --expect ENV \
  --msg "'bogus' is not a subsystem (core, boot, net, tcp, shm"
t_start bad-level 20 env WAITIO_LOG=boot=loud "$probe" --label bad-level --expect ENV \
  --msg "'loud' is not a level (off, notice, error, warn, info, debug)"

# the late PB
sleep 12
t_start late1 30 env "${il[@]}" WAITIO_PBID=1 "$probe" --label late1 --timeout 30 "${good[@]}"

for p in bad-subsys bad-level boot.0 boot.1 net.0 net.1; do t_expect_rc $p 0; done
for lv in default warn; do
  for n in 0.0 0.1 1.0 1.1; do
    name=quick-$lv.$n
    t_expect_rc "$name" 0
    t_expect "$name" 'ring exchange among 4 processes ok'
    if [ -s "$T_DIR/$name.err" ]; then
      cat "$T_DIR/$name.err"
      t_fail "$name (WAITIO_LOG=$lv) wrote to stderr in a quick, good run"
    fi
  done
done
t_log "ok: quick good runs print nothing on stderr (default and WAITIO_LOG=warn)"

for pb in 0 1; do
  t_expect "boot.$pb" "$line boot\] DEBUG: " "boot=debug shows boot's debug lines"
  t_reject "boot.$pb" "$line (core|net|tcp|shm|file|rma|coll|trace)\] (DEBUG|INFO)" \
    "boot=debug shows no other subsystem's debug or info line"
  t_expect "net.$pb" "$line net\] DEBUG: " "net=debug shows net's debug lines"
  t_expect "net.$pb" "$line core\] INFO: initialised" "core=info shows core's info lines"
  t_reject "net.$pb" "$line boot\] (DEBUG|INFO)" "boot stays at warn"
done
t_log "ok: per-subsystem levels"

for p in late0 late1 late2; do t_expect_rc $p 0; done
master_lines=$(grep -cE "$line boot\] NOTICE: rendezvous master: waiting for " "$(t_out late0)")
[ "$master_lines" = 2 ] || t_fail "the master printed $master_lines progress lines, expected 2 (at 5 and 10 s)"
t_expect late0 "$line boot\] NOTICE: rendezvous master: waiting for PB 1 \(none of its processes registered\); 5 s of 30 s"
t_expect late0 "$line boot\] NOTICE: rendezvous master: waiting for PB 1 \(none of its processes registered\); 10 s of 30 s"
t_reject late0 'waiting for .*PB 2' "PB 2 registered on time"
t_expect late2 "$line boot\] NOTICE: registered with the master at .*; it waits for the other PBs; 5 s of 30 s"
t_expect late2 "$line boot\] NOTICE: registered with the master at .*; it waits for the other PBs; 10 s of 30 s"
t_reject late1 'waitio\[' "PB 1 was quick once started"
t_expect late1 'ring exchange among 3 processes ok'
t_log "ok: a PB 12 s late: 2 progress lines from the master naming it, and from the waiting PB 2"
t_pass
