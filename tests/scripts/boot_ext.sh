#!/usr/bin/env bash
# boot_ext.sh — address-table extensions (the bytes a transport such as ucx adds to a process's
# entry: docs/protocol.md, "Start-up") reach every process through every start-up path. Each
# process takes its extension from the test hook WAITIO_TEST_PROC_EXT (a comma-separated list of
# hex strings, PB rank r takes the (r mod n)-th; src/boot/boot.c) and, once started, logs the
# SHA-256 over every process's id, extension length and bytes in process order. Every process
# must log the digest this script computes from what it gave each process: so each one saw every
# other's bytes exactly. Extensions: none, 1 byte, 300 bytes and the largest (2048), mixed inside
# PBs (so the MPI paths' padded gathers see different lengths). Paths: master/client over tcp
# (init_probe with its checked ring exchange), the shared directory (file mode, no master host),
# PBs started through the MPI adapter (Open MPI and MPICH PBs, mpi_exchange's fixed sizes), and
# a one-job MPMD launch over MPI (Open MPI). Then an extension of 2049 bytes is refused at
# start-up with a message that names the limit.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe mpi_exchange.ompi mpi_exchange.mpich mpi_job.ompi
unset WAITIO_INIT_TIMEOUT WAITIO_TRANSPORTS
# Transports are named in every run: one that sets its own extension (ucx) would make the hook
# stand aside (its own worker address is then what travels).

hexbytes() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
E0=""; E1=$(hexbytes 1); E300=$(hexbytes 300); EMAX=$(hexbytes 2048)

# digest EXT...: what every process must log, given the extensions in process order
digest() {
  python3 - "$@" <<'EOF'
import hashlib, struct, sys
h = hashlib.sha256()
for i, x in enumerate(sys.argv[1:]):
    b = bytes.fromhex(x)
    h.update(struct.pack("<IH", i, len(b)) + b)
print(h.hexdigest())
EOF
}

# check NAME NPROCS EXT...: every one of the NPROCS processes logged the expected digest
check() {
  local name=$1 n=$2 want got
  shift 2
  want=$(digest "$@")
  got=$(grep -oE "WAITIO_TEST_PROC_EXT: process [0-9]+ sees the extensions of $n processes: sha256 $want" \
        "$(t_out "$name")" | sort -u | wc -l)
  [ "$got" = "$n" ] || {
    grep -E 'WAITIO_TEST_PROC_EXT' "$(t_out "$name")"
    t_fail "$name: $got of $n processes saw every extension (expected sha256 $want)"
  }
  local lens=() x
  for x in "$@"; do lens+=($((${#x} / 2))); done
  t_log "ok: $name: each of $n processes saw every extension (${lens[*]} bytes; sha256 ${want:0:16}...)"
}

# -- master/client over tcp, and the directory: PB 0 of 2 processes, PB 1 of 1 ---------------
probe_pbs() { # NAME ENV... : three init_probe processes of a 2-PB instance
  local name=$1 r p
  shift
  for r in 0 1; do
    t_start "$name.0.$r" 40 env "$@" WAITIO_PBID=0 WAITIO_PB_SIZE=2 WAITIO_PB_RANK=$r \
      WAITIO_TEST_PROC_EXT="$EMAX,$E1" "$TEST_PROGS/init_probe" --exchange --alarm 35 --label "$name.0.$r"
  done
  t_start "$name.1.0" 40 env "$@" WAITIO_PBID=1 WAITIO_TEST_PROC_EXT="$E300" \
    "$TEST_PROGS/init_probe" --exchange --alarm 35 --label "$name.1.0"
  : >"$T_DIR/$name.out"
  for p in 0.0 0.1 1.0; do
    t_expect_rc "$name.$p" 0
    cat "$(t_out "$name.$p")" >>"$T_DIR/$name.out"
  done
}
port=$(t_free_port)
probe_pbs tcp WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT="$port" \
  WAITIO_KEY="$(t_random_key)" WAITIO_TRANSPORTS=tcp WAITIO_LOG=info
t_expect tcp 'rendezvous master listening' "start-up through the master"
check tcp 3 "$EMAX" "$E1" "$E300"

mkdir -p "$T_DIR/scratch"
probe_pbs dir WAITIO_NPB=2 WAITIO_COMM_TYPE=file WAITIO_TRANSPORTS=file WAITIO_SCRATCH_DIR="$T_DIR/scratch" \
  WAITIO_JOB_ID=bootext$$ WAITIO_KEY="$(t_random_key)" WAITIO_LOG=info
t_expect dir 'start-up through the directory' "start-up through the shared directory"
check dir 3 "$EMAX" "$E1" "$E300"

# -- through the MPI adapter: an Open MPI PB and an MPICH PB of 2 processes each ---------------
xargs=(--phases A --max-size 70000 --alarm 40 --op-timeout 30 --expect-nprocs 2,2)
t_run_job adapter 50 WAITIO_LOG=info WAITIO_TRANSPORTS=shm,tcp \
  -- env WAITIO_TEST_PROC_EXT="$E300,$EMAX" mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_exchange.ompi" "${xargs[@]}" \
  : -- env WAITIO_TEST_PROC_EXT="$E0,$E1" mpirun.mpich -np 2 "$TEST_PROGS/mpi_exchange.mpich" "${xargs[@]}"
[ "$(grep -c 'start-up through the MPI adapter' "$(t_out adapter)")" -ge 2 ] || t_fail "adapter: no start-up through the MPI adapter"
t_expect adapter 'mpi_exchange ok: 4 processes, 2 PBs'
check adapter 4 "$E300" "$EMAX" "$E0" "$E1"

# -- one-job MPMD launch (Open MPI): applications = PBs, the table gathered over MPI (the
# adapter initialises MPI: what the programs' own MPI_COMM_WORLD means is not this test's) -----
mkdir -p "$T_DIR/home"
t_start mpmd 50 env HOME="$T_DIR/home" WAITIO_LOG=info WAITIO_TRANSPORTS=shm,tcp mpirun.openmpi --oversubscribe \
  -np 2 env WAITIO_TEST_PROC_EXT="$E1,$E300" "$TEST_PROGS/mpi_job.ompi" --no-mpi \
  : -np 1 env WAITIO_TEST_PROC_EXT="$EMAX" "$TEST_PROGS/mpi_job.ompi" --no-mpi
t_expect_rc mpmd 0
t_expect mpmd 'start-up through MPI \(one-job launch'
[ "$(grep -oE 'mpi_job PB [0-9]+ rank [0-9]+: ok' "$(t_out mpmd)" | wc -l)" = 3 ] || { t_show mpmd; t_fail "mpmd: not every process ok"; }
check mpmd 3 "$E1" "$E300" "$EMAX"

# -- over the maximum: refused at start-up, naming the limit ----------------------------------
t_start over 20 env WAITIO_NPB=1 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT="$(t_free_port)" \
  WAITIO_KEY="$(t_random_key)" WAITIO_TEST_PROC_EXT="${EMAX}00" \
  "$TEST_PROGS/init_probe" --expect ENV --msg 'WIO_PROC_EXT_MAX' --max-secs 5 --label over
t_expect_rc over 0
t_expect over '2049 bytes exceeds WIO_PROC_EXT_MAX'
t_log "ok: an extension of 2049 bytes is refused at start-up"
t_pass "tcp, directory, MPI adapter (Open MPI + MPICH), one-job MPMD; over-max refused"
