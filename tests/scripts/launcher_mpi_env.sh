#!/usr/bin/env bash
# launcher_mpi_env.sh — PBs launched through mpirun.openmpi and mpirun.mpich (2 ranks each):
# every rank sees its PB's WAITIO_PBID, WAITIO_NPB, WAITIO_MASTER_HOST/PORT and the instance key
# (both launchers hand their environment to locally started ranks; waitiorun injects nothing).
# When a plain PB fails, the MPI PBs — whose ranks run in process groups/sessions of their own,
# outside the PB's group — are stopped with all their ranks, and nothing is left.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
W=$WAITIO_BUILD_DIR/tools/waitiorun
[ -x "$W" ] || t_fail "$W is not built"
tag=wiolaunchmpi$$x$RANDOM
OMPI=mpirun.openmpi
MPICH=mpirun.mpich
have_ompi=0; have_mpich=0
command -v $OMPI >/dev/null && have_ompi=1
command -v $MPICH >/dev/null && have_mpich=1
[ $have_ompi = 1 ] || [ $have_mpich = 1 ] || { echo "SKIP: neither $OMPI nor $MPICH installed"; exit 0; }

no_leftovers() {
  if pgrep -f "$tag" >/dev/null; then
    ps -eo pid,ppid,pgid,sid,args | grep "$tag" | grep -v grep
    t_fail "processes left behind after $1"
  fi
}

# 1. variables reach every rank
report='echo "$WAITIO_PBID $WAITIO_NPB $WAITIO_MASTER_HOST $WAITIO_MASTER_PORT $WAITIO_KEY $WAITIO_LOG"'
pbs=(-- sh -c "$report > $T_DIR/plain")
names=(plain)
[ $have_ompi = 1 ] && { pbs+=(: -- $OMPI --oversubscribe -np 2 sh -c "$report >> $T_DIR/ompi"); names+=(ompi); }
# (MPICH's ranks stay 0.3 s: mpiexec.hydra whose ranks exit within its own start-up was once
# killed by SIGPIPE, status 141, in 0.07 s — a race inside hydra, not in what is tested here)
[ $have_mpich = 1 ] && { pbs+=(: -- $MPICH -np 2 sh -c "$report >> $T_DIR/mpich; sleep 0.3"); names+=(mpich); }
rc=0
WAITIO_LOG=info timeout -k 2 40 "$W" -q "${pbs[@]}" >"$T_DIR/vars.log" 2>&1 </dev/null || rc=$?
[ $rc = 0 ] || { cat "$T_DIR/vars.log"; t_fail "run with MPI PBs exited with status $rc"; }
read -r _ npb host port key _ <"$T_DIR/plain"
[ "$npb" = ${#names[@]} ] || t_fail "plain PB saw NPB=$npb, expected ${#names[@]}"
for ((i = 1; i < ${#names[@]}; i++)); do
  f=$T_DIR/${names[$i]}
  [ "$(wc -l <"$f")" = 2 ] || t_fail "${names[$i]}: $(wc -l <"$f") ranks reported, expected 2: $(cat "$f")"
  [ "$(sort -u "$f")" = "$i $npb $host $port $key info" ] \
    || t_fail "${names[$i]} ranks saw '$(sort -u "$f" | tr '\n' '|')', expected '$i $npb $host $port $key info'"
  t_log "ok: both ${names[$i]} ranks of PB $i saw PBID $i, NPB $npb, $host:$port, the key, WAITIO_LOG"
done

# 2. a plain PB fails: the MPI PBs and all their ranks are stopped
pbs=(-- sh -c 'sleep 2; exit 5')
[ $have_ompi = 1 ] && pbs+=(: -- $OMPI --oversubscribe -np 2 bash -c "exec -a $tag-ompi sleep 100")
[ $have_mpich = 1 ] && pbs+=(: -- $MPICH -np 2 bash -c "exec -a $tag-mpich sleep 100")
start=$(t_now)
rc=0
timeout -k 2 40 "$W" -q --grace 2 "${pbs[@]}" >"$T_DIR/fail.log" 2>&1 </dev/null || rc=$?
took=$(t_since "$start")
[ $rc = 5 ] || { cat "$T_DIR/fail.log"; t_fail "status $rc, expected 5"; }
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || t_fail "took $took s to stop the MPI PBs"
no_leftovers "a failing PB beside MPI PBs"
t_log "ok: a failing plain PB stopped the MPI PBs and their ranks (status 5 in $took s)"
t_pass
