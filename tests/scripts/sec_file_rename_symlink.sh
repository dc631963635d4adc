#!/usr/bin/env bash
# sec_file_rename_symlink.sh — issue 25 item 3: a group member of a shared scratch directory
# without the sticky bit (mode 2770, as HPC project directories often are; used here with the
# explicit WAITIO_FILE_UNSAFE_DIR=1, as the previous release used it without a word) renames
# the running job's instance directory .waitio-file-<ID> away and puts its own in its place, in
# which in-0.0 and in-1.0 are symbolic links to a directory of the victim's. The attacker runs as
# another uid (setpriv --reuid=65534 --regid=65534 --clear-groups, group 65534 owning the scratch
# directory). The job (root) then finalizes. Before the fix the paths were rebuilt from strings,
# so finalize emptied the victim's directory through the links ("remove my inbox"). Now the
# job works relative to the descriptors it opened at the start: the victim's files survive,
# the job completes, and what it cleans up is its own inboxes in the renamed directory.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "SKIP: needs root and setpriv to run the attacker as another uid"; exit 0
fi
as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 711 "$T_DIR"           # the attacker may pass through to the scratch directory
scratch=$T_DIR/scratch
victim=$T_DIR/victim
mkdir -p "$scratch" "$victim/sub"
chgrp 65534 "$scratch"
chmod 2770 "$scratch"
for f in a b c; do echo "victim's file $f $RANDOM" >"$victim/$f"; done
echo "nested" >"$victim/sub/d"
sum0=$(cd "$victim" && find . -type f | sort | xargs sha256sum)
job=swap-$$
inst=$scratch/.waitio-file-$job
common=(WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$scratch" WAITIO_JOB_ID=$job WAITIO_NPB=2
        WAITIO_KEY="$(t_random_key)" WAITIO_LOG=warn WAITIO_FILE_UNSAFE_DIR=1)
for pb in 0 1; do
  t_start "pb$pb" 40 env "${common[@]}" WAITIO_PBID=$pb "$TEST_PROGS/init_probe" --label "pb$pb" \
    --timeout 20 --exchange --hold "$T_DIR/go" --alarm 35
done
for pb in 0 1; do
  t_wait_line "pb$pb" 'holding' 30 || t_fail "PB $pb did not start up and exchange"
done
# the attack, as another user: only write permission on the scratch directory is needed
"${as_other[@]}" sh -c '
  set -e
  mv "$1" "$1.moved-away"
  mkdir -m 0755 "$1" "$1/hb"
  ln -s "$2" "$1/in-0.0"
  ln -s "$2" "$1/in-1.0"
' sh "$inst" "$victim" || t_fail "the attacker (uid 65534) could not swap the instance directory"
t_log "swapped: $(ls -la "$inst" | tail -n +2 | tr '\n' ';')"
touch "$T_DIR/go"
bad=()
for n in pb0 pb1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
sum1=$( (cd "$victim" && find . -type f | sort | xargs -r sha256sum) 2>/dev/null)
if [ "$sum0" != "$sum1" ]; then
  echo "the victim's directory now holds: $(ls -laR "$victim" 2>&1 | tr '\n' ';')"
  t_fail "the job deleted or changed the victim's files through the planted links"
fi
[ ${#bad[@]} -eq 0 ] || t_fail "the job failed (name:exit status): ${bad[*]}"
t_expect pb0 'ring exchange among 2 processes ok' "the job must complete"
left=$(ls "$inst.moved-away" 2>/dev/null | grep -c '^in-' || true)
[ "$left" -eq 0 ] || t_fail "the job did not remove its own inboxes in the (renamed) instance directory: $(ls "$inst.moved-away")"
[ -L "$inst/in-0.0" ] || t_fail "the attacker's link was followed or removed as if it were the inbox"
t_pass "the victim's $(echo "$sum0" | wc -l) files survived; the job cleaned up its own, renamed directory"
