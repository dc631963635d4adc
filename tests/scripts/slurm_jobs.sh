#!/usr/bin/env bash
# slurm_jobs.sh — WaitIO under a real Slurm (Debian's slurm-wlm and munge), without waitiorun
# (docs/launcher.md, "Slurm"). The test configures a private Slurm in its temporary directory:
# its own munged (own key and socket), one slurmctld and two slurmd on this host as two nodes
# (the host's short name and "localhost", both 127.0.0.1, each on its own port: Slurm's backfill
# scheduler plans the components of a het job on separate nodes, so one node could not run a
# 2-component job), ProctrackType=proctrack/linuxproc, no cgroups, free ports, a random
# FirstJobId. HOME is a temporary directory: the instance key is the user's key file
# ~/.waitio/key, created by the first process. Jobs (every byte checked by tests/progs/exchange
# or mpi_exchange; --expect-nprocs checks the PB sizes):
#   0. (no Slurm needed) waitio-info on made-up het-job variables: PB, PB rank and master from a
#      het step and from a component's own step, explicit WAITIO_* winning, the errors for a
#      node shared by two components and for unreadable step variables;
#   1. het step `srun -n2 exchange : -n3 exchange`: PB = component, PB ranks from SLURM_PROCID
#      less the earlier components' tasks, master = component 0's first node, no WAITIO_*;
#   2. sbatch het job, each component its own MPI step: `srun --het-group=0 --mpi=pmix
#      mpi_exchange.ompi` (Open MPI over PMIx) and `srun --het-group=1 --mpi=pmi2
#      mpi_exchange.mpich` (MPICH over PMI-2), PB ranks from SLURM_PROCID of each step; and one
#      MPI het step `srun --mpi=pmi2 -n2 mpi_exchange.mpich : -n3 ...` (MPICH): MPI_COMM_WORLD is
#      all 5 processes (checked: --world-is-job), the PBs are the components;
#   3. two separate sbatch jobs coupled through waitio-serv (PB 0 publishes its host and port,
#      PB 1 waits for them), as docs/launcher.md describes.
# Skipped with a message where Slurm is not installed, not root (slurmd runs jobs as any user),
# or the daemons do not come up within 15 s. Every daemon and task is killed at exit (lib.sh).
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
skip() { echo "SKIP: $*"; exit 0; }

# 0. without Slurm: waitio-info reads a het job's layout from made-up Slurm variables (a het
# step of 3 nodes of component 0 with 2 tasks each, then component 1's node n07 with 4 tasks)
info=$WAITIO_BUILD_DIR/tools/waitio-info
[ -x "$info" ] || t_fail "$info is not built"
het=(SLURM_HET_SIZE=2 SLURMD_NODENAME=n07 "SLURM_JOB_NODELIST_HET_GROUP_0=n[01-03]"
     "SLURM_JOB_NODELIST_HET_GROUP_1=gpu1,n[04-09]" "SLURM_STEP_NODELIST=n[01-03,07]"
     "SLURM_STEP_TASKS_PER_NODE=2(x3),4" SLURM_PROCID=8 SLURM_STEP_NUM_TASKS=10 SLURM_JOB_ID=123456)
# info_case NAME REGEX VAR=VAL...: waitio-info's output (stdout and stderr) must match REGEX
info_case() {
  local name=$1 re=$2
  shift 2
  env "${het[@]}" "$@" "$info" >"$T_DIR/info.$name" 2>&1
  grep -qE -- "$re" "$T_DIR/info.$name" || { cat "$T_DIR/info.$name"; t_fail "waitio-info, $name: no /$re/"; }
}
info_case het_step 'WAITIO_NPB=2 WAITIO_PBID=1'
info_case het_step 'PB-local rank 2 of 4 \(from Slurm: SLURM_PROCID in the heterogeneous step'
info_case het_step 'master: n01:27638$'
info_case own_step 'PB-local rank 1 of 4 \(from Slurm: SLURM_PROCID in the component' \
  SLURM_STEP_NODELIST=n07 SLURM_STEP_TASKS_PER_NODE=4 SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=4
info_case explicit 'WAITIO_NPB=3 WAITIO_PBID=2' WAITIO_NPB=3 WAITIO_PBID=2 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1
info_case explicit_master 'master: h0:5000$' WAITIO_MASTER_HOST=h0 WAITIO_MASTER_PORT=5000
info_case shared_node 'belongs to several components.*WAITIO_PBID' "SLURM_JOB_NODELIST_HET_GROUP_0=n[01-03,07]"
info_case bad_tasks "cannot map the step's nodes" "SLURM_STEP_TASKS_PER_NODE=2(x3"
t_log "het job layouts from Slurm's variables: ok (waitio-info)"

for cmd in slurmctld slurmd srun sbatch sinfo munged; do
  command -v $cmd >/dev/null 2>&1 || skip "$cmd is not installed (scripts/install-deps.sh --test installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root"
t_require_progs exchange
serv=$WAITIO_BUILD_DIR/tools/waitio-serv
[ -x "$serv" ] || t_fail "$serv is not built"
node0=$(hostname -s)
[ "$node0" != localhost ] && getent hosts "$node0" >/dev/null || skip "the host name '$node0' does not resolve (or is localhost): no second node name"

S=$T_DIR/slurm
mkdir -p "$S/state" "$S/spool" "$T_DIR/home" && chmod 700 "$S" || t_fail "mkdir $S"
export HOME=$T_DIR/home SLURM_CONF=$S/slurm.conf
# munge: own key, socket, pid and log; -f because the temporary directory is not munge's usual
head -c 128 /dev/urandom >"$S/munge.key" && chmod 600 "$S/munge.key"
t_start munged 110 munged -F -f --socket="$S/munge.sock" --key-file="$S/munge.key" \
  --pid-file="$S/munged.pid" --log-file="$S/munged.log" --seed-file="$S/munged.seed"
for _ in $(seq 50); do [ -S "$S/munge.sock" ] && break; sleep 0.1; done
[ -S "$S/munge.sock" ] || { cat "$S/munged.log" 2>/dev/null; skip "munged did not start"; }

ctld_port=$(t_free_port) d0_port=$(t_free_port) d1_port=$(t_free_port)
cat >"$SLURM_CONF" <<EOF
ClusterName=waitio
SlurmctldHost=$node0(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.%n.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=5
FirstJobId=$((1000 + RANDOM % 30000))
NodeName=$node0 NodeAddr=127.0.0.1 Port=$d0_port CPUs=8 State=UNKNOWN
NodeName=localhost NodeAddr=127.0.0.1 Port=$d1_port CPUs=8 State=UNKNOWN
PartitionName=waitio Nodes=$node0,localhost Default=YES MaxTime=5 State=UP OverSubscribe=FORCE:4
EOF
t_start slurmctld 110 slurmctld -D -f "$SLURM_CONF"
t_start slurmd0 110 slurmd -D -f "$SLURM_CONF" -N "$node0"
t_start slurmd1 110 slurmd -D -f "$SLURM_CONF" -N localhost
up=0
for _ in $(seq 150); do
  [ "$(sinfo -h -o '%T' 2>/dev/null | sort -u)" = idle ] && [ "$(sinfo -h -o '%D' 2>/dev/null)" = 2 ] && { up=1; break; }
  sleep 0.1
done
if [ $up = 0 ]; then
  t_show_all
  tail -n 20 "$S"/*.log 2>/dev/null
  skip "Slurm did not come up here within 15 s (daemons' output above)"
fi
t_log "Slurm $(sinfo -V | cut -d' ' -f2) up: nodes $node0 and localhost ($(sinfo -h -o '%D nodes %T'))"

common=(--alarm 40 --op-timeout 30 --init-timeout 30 --phases AC)

# 1. het step, plain processes: no WAITIO_* variable anywhere
# (WAITIO_LOG=info: each process's "initialised" line says its PB, PB rank and their source)
t_start het_plain 60 env WAITIO_LOG=info srun -t 2 -n2 "$TEST_PROGS/exchange" "${common[@]}" --expect-nprocs 2,3 : \
  -n3 "$TEST_PROGS/exchange" "${common[@]}" --expect-nprocs 2,3
t_expect_rc het_plain 0
t_show het_plain
t_expect het_plain '^exchange ok: 5 processes, 2 PBs' "5 plain processes in 2 PBs, the components"
# expect_ranks NAME SOURCE: PB 0 ranks 0-1 of 2 and PB 1 ranks 0-2 of 3, each once, from SOURCE
expect_ranks() {
  local got want
  got=$(grep -oE "PB [01] of 2, local rank [0-9]+ of [0-9]+ \(from Slurm: $2" "$(t_out "$1")" | cut -d' ' -f2,7,9 | sort | tr '\n' ' ')
  want="0 0 2 0 1 2 1 0 3 1 1 3 1 2 3 "
  [ "$got" = "$want" ] || t_fail "$1: PB, rank and size from Slurm ($2...) were '$got', expected '$want'"
}
expect_ranks het_plain "SLURM_PROCID in the heterogeneous step"
[ -s "$HOME/.waitio/key" ] || t_fail "the instance key was not the user's key file ~/.waitio/key"

# 2. het job, one MPI step per component: Open MPI (PMIx) and MPICH (PMI-2) coupled
mpi_args="--alarm 40 --op-timeout 30 --init-timeout 30 --phases AC --expect-nprocs 2,3"
ompi=$TEST_PROGS/mpi_exchange.ompi mpich=$TEST_PROGS/mpi_exchange.mpich
have_pmix=0 have_pmi2=0
srun --mpi=list 2>&1 | grep -q pmix && have_pmix=1
srun --mpi=list 2>&1 | grep -q pmi2 && have_pmi2=1
if [ -x "$ompi" ] && [ -x "$mpich" ] && [ $have_pmix = 1 ] && [ $have_pmi2 = 1 ]; then
  cat >"$T_DIR/het_mpi.sh" <<EOF
#!/bin/bash
#SBATCH -n2 -t 2
#SBATCH hetjob
#SBATCH -n3
export WAITIO_LOG=info
srun --het-group=0 --mpi=pmix $ompi $mpi_args &
srun --het-group=1 --mpi=pmi2 $mpich $mpi_args &
wait -n && wait -n
EOF
  t_start het_mpi 60 sbatch --wait -o "$T_DIR/het_mpi.log" "$T_DIR/het_mpi.sh"
  t_wait het_mpi
  cat "$T_DIR/het_mpi.log" >>"$(t_out het_mpi)"
  t_expect_rc het_mpi 0
  t_show het_mpi
  t_expect het_mpi '^mpi_exchange ok: 5 processes, 2 PBs' "Open MPI PB 0 (2) + MPICH PB 1 (3)"
  expect_ranks het_mpi "SLURM_PROCID in the component's own step"
  # one MPI het step: MPI_COMM_WORLD is all 5 processes (Slurm's semantics, no MPI_APPNUM from its
  # PMI), the PBs are still the components; WaitIO then uses no MPI inside the PBs
  t_start het_mpi_world 60 env WAITIO_LOG=info srun -t 2 --mpi=pmi2 -n2 "$mpich" $mpi_args --world-is-job : \
    -n3 "$mpich" $mpi_args --world-is-job
  t_expect_rc het_mpi_world 0
  t_show het_mpi_world
  t_expect het_mpi_world '^mpi_exchange ok: 5 processes, 2 PBs' "MPICH het step: one MPI world, two PBs"
  expect_ranks het_mpi_world "SLURM_PROCID in the heterogeneous step"
else
  t_log "no het MPI job: needs mpi_exchange.ompi/.mpich and Slurm's pmix and pmi2 plugins (srun --mpi=list: $(srun --mpi=list 2>&1 | tr '\n' ' '))"
fi

# 3. separate batch jobs coupled through waitio-serv (the original's job scripts)
port=$(t_free_port)
cat >"$T_DIR/pb0.sh" <<EOF
#!/bin/bash
#SBATCH -n2 -t 2
export WAITIO_NPB=2 WAITIO_PBID=0 WAITIO_MASTER_PORT=$port
export WAITIO_MASTER_HOST=\$(hostname)
$serv -d -m \$WAITIO_MASTER_HOST || exit 1
srun $TEST_PROGS/exchange ${common[*]} --expect-nprocs 2,3
rc=\$?
$serv -x
exit \$rc
EOF
cat >"$T_DIR/pb1.sh" <<EOF
#!/bin/bash
#SBATCH -n3 -t 2
export WAITIO_NPB=2 WAITIO_PBID=1
export WAITIO_MASTER_HOST=\$($serv -c -t 30) || exit 1
export WAITIO_MASTER_PORT=\$($serv -c -P -t 30) || exit 1
srun $TEST_PROGS/exchange ${common[*]} --expect-nprocs 2,3
EOF
rm -f "$HOME/.waitio/master_host"
t_start sep_pb1 60 sbatch --wait -o "$T_DIR/pb1.log" "$T_DIR/pb1.sh"
sleep 0.5
t_start sep_pb0 60 sbatch --wait -o "$T_DIR/pb0.log" "$T_DIR/pb0.sh"
t_wait sep_pb0
t_wait sep_pb1
cat "$T_DIR/pb0.log" >>"$(t_out sep_pb0)"
cat "$T_DIR/pb1.log" >>"$(t_out sep_pb1)"
t_expect_rc sep_pb0 0
t_expect_rc sep_pb1 0
t_show sep_pb0
t_show sep_pb1
t_expect sep_pb0 '^exchange ok: 5 processes, 2 PBs' "two batch jobs, one instance"
[ ! -e "$HOME/.waitio/master_host" ] || t_fail "waitio-serv -x did not remove the published host"
t_pass "het step (plain), het job (Open MPI + MPICH steps), MPICH het step, separate jobs through waitio-serv"
