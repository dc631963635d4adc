#!/usr/bin/env bash
# sec_file_unsafe_dir.sh — issue 25 item 3: file mode refuses a scratch directory in which
# another user could swap the instance directory for one of theirs (the rename + symlink attack
# of sec_file_rename_symlink.sh): one others may write without the sticky bit (mode 0777, or a
# group project directory of mode 2770 as HPC sites make them), or one that belongs to another
# user (its owner may always rename what is in it). waitio_init fails with WAITIO_ERR_ENV and a
# message that says why and how to fix it; a sticky directory (mode 1777, as /tmp) works, and so
# does an unsafe one with the explicit override WAITIO_FILE_UNSAFE_DIR=1 (with a warning).
# Before the fix every one of them was used without a word.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
probe=$TEST_PROGS/init_probe
key=$(t_random_key)

# refused: NAME MODE [OWNER] -- one process of a one-PB job
refused() {
  local name=$1 mode=$2 owner=${3:-} dir=$T_DIR/$1 want=$4
  mkdir -p "$dir"
  [ -n "$owner" ] && chown "$owner" "$dir"
  chmod "$mode" "$dir"
  t_start "$name" 30 env WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$dir" WAITIO_JOB_ID=j$$ WAITIO_NPB=1 \
    WAITIO_KEY="$key" "$probe" --label "$name" --timeout 10 --expect ENV --max-secs 8 \
    --msg "$want" --msg 'WAITIO_FILE_UNSAFE_DIR' --alarm 20
}
# works: NAME MODE [VAR=VAL...] -- a 2-PB job with a checked exchange
works() {
  local name=$1 mode=$2 dir=$T_DIR/$1 pb
  shift 2
  mkdir -p "$dir"
  chmod "$mode" "$dir"
  for pb in 0 1; do
    t_start "$name.pb$pb" 40 env WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$dir" WAITIO_JOB_ID=j$$ \
      WAITIO_NPB=2 WAITIO_PBID=$pb WAITIO_KEY="$key" WAITIO_LOG=warn "$@" "$probe" --label "$name.pb$pb" \
      --timeout 20 --exchange --alarm 35
  done
}

refused world 0777 "" 'writable by everyone'
refused group 2770 "" 'writable by its group'
if [ "$(id -u)" = 0 ]; then
  refused foreign 0755 65534:65534 'belongs to another user'
  chgrp 65534 "$T_DIR/group"
else
  t_log "not root: the directory of another user is not tried"
fi
works sticky 1777
works override 0777 WAITIO_FILE_UNSAFE_DIR=1

bad=()
for n in "${T_ORDER[@]}"; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
for n in world group foreign; do
  [ -n "${T_PID[$n]:-}" ] || continue
  t_expect "$n" "^init_probe\[$n\]: ok" "the $n-writable scratch directory must be refused with a clear message"
done
[ ${#bad[@]} -eq 0 ] || t_fail "failed (name:exit status): ${bad[*]}"
t_expect sticky.pb0 'ring exchange among 2 processes ok' "a sticky scratch directory must work"
t_expect override.pb0 'ring exchange among 2 processes ok' "WAITIO_FILE_UNSAFE_DIR=1 must accept an unsafe directory"
t_expect override.pb0 'WAITIO_FILE_UNSAFE_DIR=1' "the override must be logged"
grep -h "waitio_init returned" "$T_DIR"/world.out "$T_DIR"/group.out "$T_DIR"/foreign.out 2>/dev/null | sed 's/^/  /'
t_pass "unsafe scratch directories refused, sticky and overridden ones work"
