# lib.sh — shared helpers of the multi-process test scripts (tests/scripts/*.sh). Sourced by
# them; ctest also runs it directly as "mp.lib", a self-test of the helpers (end of this file).
# timeout: 30
#
#   source "$(dirname "$0")/lib.sh"
#
# What it gives a script:
#   - WAITIO_SOURCE_DIR, WAITIO_BUILD_DIR, TEST_PROGS (defaults when run by hand, outside ctest),
#     Open MPI allowed to run as root, T_DIR (a private temporary directory, removed at exit);
#   - every process started through t_start/t_job runs in its own session/process group under
#     `timeout` (a deadline), with WAITIO_TEST_MARKER=<unique> in its environment; on exit (pass,
#     fail, signal) every such process group is killed, and any process that still carries the
#     marker (escaped its group) is killed too. Nothing else is ever touched;
#   - t_instance NPB: a fresh free port and random key for an instance started by hand;
#   - t_job NAME SECS [VAR=VAL...] -- CMD... : -- CMD...: a whole multi-PB job, through waitiorun
#     when it is built (else by hand, or always by hand with WAITIO_TEST_LAUNCH=manual);
#   - t_fail MSG (prints the outputs of everything started, then exits 1), t_expect, t_wait...
#
# Environment knobs: WAITIO_TEST_LAUNCH=auto|manual|waitiorun, WAITIO_TEST_KEEP=1 (keep T_DIR).

: "${WAITIO_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${WAITIO_BUILD_DIR:=$WAITIO_SOURCE_DIR/build}"
: "${TEST_PROGS:=$WAITIO_BUILD_DIR/tests/progs}"
export WAITIO_SOURCE_DIR WAITIO_BUILD_DIR TEST_PROGS

T_NAME=$(basename "${0%.sh}")
T_T0=$(date +%s.%N)
T_MARKER="waitio-test-$T_NAME-$$-$RANDOM$RANDOM"
export WAITIO_TEST_MARKER="$T_MARKER"
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/waitio-$T_NAME.XXXXXX")
declare -A T_PID=()      # name -> pid (= process group id) of a started command
declare -A T_RC=()       # name -> exit status once waited for
T_ORDER=()               # names in start order
T_SHOWN=()               # names whose output was already printed

# MPI as root, oversubscribed, in a container without ptrace-based single copy
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI's top session directory (TMPDIR/ompi.<node>.<uid>) is removed by the last job to end
# while another may be creating its own in it ("mkdir ... File exists", orte_init fails: seen
# with two mpiruns started together). A subdirectory of ours keeps it from ever being empty.
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
# nothing from the caller's environment may leak into an instance
unset WAITIO_PBID WAITIO_NPB WAITIO_MASTER_HOST WAITIO_MASTER_PORT WAITIO_KEY WAITIO_KEY_FILE \
      WAITIO_RENDEZVOUS WAITIO_PB_RANK WAITIO_PB_SIZE WAITIO_TRANSPORTS WAITIO_LOG
# ...except the transports a ctest variant asks for (tests/CMakeLists.txt: the *.tcp and *.file
# tests; the latter with the scratch directory it gives)
[ -n "${WAITIO_TEST_TRANSPORTS:-}" ] && export WAITIO_TRANSPORTS=$WAITIO_TEST_TRANSPORTS

t_elapsed() { awk -v a="$T_T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
t_log() { echo "[$T_NAME +$(t_elapsed)s] $*"; }
t_now() { date +%s.%N; }
# t_since T0: seconds since T0 (from t_now), 3 decimals
t_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }

# Kills every process still carrying this run's marker (processes that left their group).
t_kill_marked() {
  local d pid kv
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = "$$" ] && continue
    [ "$pid" = "$BASHPID" ] && continue
    {
      while IFS= read -r -d '' kv; do
        if [ "$kv" = "WAITIO_TEST_MARKER=$T_MARKER" ]; then
          kill -9 "$pid"
          break
        fi
      done <"$d/environ"
    } 2>/dev/null
  done
}

t_cleanup() {
  local rc=$? name
  trap - EXIT INT TERM
  unset WAITIO_TEST_MARKER
  for name in "${T_ORDER[@]}"; do
    kill -9 -- "-${T_PID[$name]}" 2>/dev/null || kill -9 "${T_PID[$name]}" 2>/dev/null
  done
  t_kill_marked
  for name in "${T_ORDER[@]}"; do
    [ -n "${T_RC[$name]:-}" ] || wait "${T_PID[$name]}" 2>/dev/null
  done
  if [ "${WAITIO_TEST_KEEP:-0}" = 1 ]; then
    echo "[$T_NAME] outputs kept in $T_DIR"
  else
    rm -rf "$T_DIR"
  fi
  exit "$rc"
}
trap t_cleanup EXIT
trap 'echo "[$T_NAME] interrupted" >&2; exit 130' INT TERM HUP

# A free port below the ephemeral range: one the kernel hands out may meanwhile become the
# source port of some test's outgoing connection, and the master's listen then fails.
t_free_port() {
  python3 "$WAITIO_SOURCE_DIR/tests/scripts/free_port.py" 2>/dev/null || echo $((15000 + RANDOM % 15000))
}

t_random_key() { echo "test-$T_NAME-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')"; }

# t_instance NPB: exports a fresh instance (port, key) for PBs started by hand
t_instance() {
  export WAITIO_NPB=$1 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT
  WAITIO_MASTER_PORT=$(t_free_port)
  export WAITIO_KEY
  WAITIO_KEY=$(t_random_key)
}

# t_start NAME SECS CMD...: runs CMD in the background in its own session, killed after SECS
# (SIGTERM, then SIGKILL 3 s later); output (stdout+stderr) in $T_DIR/NAME.out
t_start() {
  local name=$1 secs=$2
  shift 2
  [ -n "${T_PID[$name]:-}" ] && t_fail "t_start: name '$name' used twice"
  setsid timeout -k 3 "$secs" "$@" >"$T_DIR/$name.out" 2>&1 </dev/null &
  T_PID[$name]=$!
  T_ORDER+=("$name")
}

# t_running NAME: true while it runs
t_running() { kill -0 "${T_PID[$1]}" 2>/dev/null && [ -z "${T_RC[$1]:-}" ]; }

# t_wait NAME: waits for it; returns (and records) its exit status (124/137: deadline hit)
t_wait() {
  local name=$1 rc=0
  if [ -n "${T_RC[$name]:-}" ]; then return "${T_RC[$name]}"; fi
  wait "${T_PID[$name]}" 2>/dev/null || rc=$?
  T_RC[$name]=$rc
  return "$rc"
}

# t_rc NAME: its exit status once t_wait'ed (never call t_wait in $(...): a subshell)
t_rc() { echo "${T_RC[$1]:-running}"; }

# t_kill NAME [SIGNAL]: signals its whole process group
t_kill() { kill -"${2:-9}" -- "-${T_PID[$1]}" 2>/dev/null || kill -"${2:-9}" "${T_PID[$1]}" 2>/dev/null || true; }

# t_wait_line NAME REGEX SECS: waits until NAME's output matches REGEX (returns 0), NAME exits
# or SECS pass (returns 1)
t_wait_line() {
  local name=$1 re=$2 secs=$3 end
  end=$(awk -v a="$(date +%s.%N)" -v s="$secs" 'BEGIN { printf "%.3f", a + s }')
  while :; do
    grep -qE -- "$re" "$T_DIR/$name.out" 2>/dev/null && return 0
    t_running "$name" || { grep -qE -- "$re" "$T_DIR/$name.out" 2>/dev/null; return; }
    awk -v e="$end" -v n="$(date +%s.%N)" 'BEGIN { exit !(n > e) }' && return 1
    sleep 0.05
  done
}

t_out() { echo "$T_DIR/$1.out"; }

t_show() {
  local name=$1 rc=${T_RC[$1]:-running}
  echo "----- $name (exit status: $rc) -----"
  cat "$T_DIR/$name.out" 2>/dev/null
  echo "----- end of $name -----"
  T_SHOWN+=("$name")
}

t_show_all() {
  local name s skip
  for name in "${T_ORDER[@]}"; do
    skip=0
    for s in "${T_SHOWN[@]}"; do [ "$s" = "$name" ] && skip=1; done
    [ $skip = 1 ] || t_show "$name"
  done
}

# t_fail MESSAGE: shows every output not shown yet, prints the reason, exits 1
t_fail() {
  t_show_all
  echo "FAIL: $T_NAME: $*" >&2
  echo "FAIL: $T_NAME: $*"
  exit 1
}

t_pass() { echo "PASS: $T_NAME${1:+: $*} ($(t_elapsed) s)"; exit 0; }

# t_expect NAME REGEX [WHY]: NAME's output must match the extended regex
t_expect() {
  grep -qE -- "$2" "$T_DIR/$1.out" || t_fail "output of $1 lacks /$2/${3:+ ($3)}"
}
# t_reject NAME REGEX [WHY]: NAME's output must not match
t_reject() {
  if grep -qE -- "$2" "$T_DIR/$1.out"; then t_fail "output of $1 contains /$2/${3:+ ($3)}"; fi
}
# t_expect_rc NAME RC...: NAME's exit status must be one of RC...
t_expect_rc() {
  local name=$1 rc want
  shift
  t_wait "$name" || true
  rc=${T_RC[$name]}
  for want in "$@"; do [ "$rc" = "$want" ] && return 0; done
  case $rc in
    124|137) t_fail "$name hit its deadline (exit status $rc), expected exit status $*" ;;
    *) t_fail "$name exited with status $rc, expected $*" ;;
  esac
}

# t_require_progs NAME...: programs that must be built in $TEST_PROGS
t_require_progs() {
  local p
  for p in "$@"; do
    [ -x "$TEST_PROGS/$p" ] || t_fail "test program $TEST_PROGS/$p is missing (cmake --build $WAITIO_BUILD_DIR)"
  done
}

# t_sanitized: true when the build under test uses ASan/UBSan (WAITIO_SANITIZE=ON); programs a
# test compiles itself against it then need t_sanitize_flags
t_sanitized() { grep -q '^WAITIO_SANITIZE:BOOL=ON' "$WAITIO_BUILD_DIR/CMakeCache.txt" 2>/dev/null; }
t_sanitize_flags() { t_sanitized && echo "-fsanitize=address,undefined -fno-omit-frame-pointer"; return 0; }

t_waitiorun() { echo "$WAITIO_BUILD_DIR/tools/waitiorun"; }

# t_launch_mode: "waitiorun" or "manual"
t_launch_mode() {
  case ${WAITIO_TEST_LAUNCH:-auto} in
    manual) echo manual ;;
    waitiorun)
      [ -x "$(t_waitiorun)" ] || t_fail "WAITIO_TEST_LAUNCH=waitiorun but $(t_waitiorun) is not built"
      echo waitiorun ;;
    *) if [ -x "$(t_waitiorun)" ]; then echo waitiorun; else echo manual; fi ;;
  esac
}

# t_job NAME SECS [VAR=VAL...] -- CMD... [: -- CMD...]...
# Runs one instance: every "-- CMD..." is one PB (PB 0 first). With waitiorun the whole job is
# "waitiorun -- CMD : -- CMD"; output in NAME.out. By hand (no waitiorun built, or
# WAITIO_TEST_LAUNCH=manual): a fresh port and key, PB i started as NAME.pbI with WAITIO_PBID=i,
# the others killed as soon as one fails (as waitiorun does), outputs concatenated into NAME.out.
# Returns the job's exit status (first failing PB's status by hand).
t_job() {
  local name=$1 secs=$2 mode
  shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] || t_fail "t_job: expected -- CMD..."
  mode=$(t_launch_mode)
  if [ "$mode" = waitiorun ]; then
    t_log "job $name (waitiorun, deadline ${secs}s):${envs[*]+ ${envs[*]}} waitiorun $(printf '%q ' "$@")"
    t_start "$name" "$secs" env -u WAITIO_NPB -u WAITIO_PBID -u WAITIO_MASTER_PORT \
      -u WAITIO_MASTER_HOST -u WAITIO_KEY "${envs[@]}" "$(t_waitiorun)" "$@"
    t_wait "$name"
    return
  fi
  # by hand: split the PB commands
  local cmds=() cur="" a
  shift # the first --
  for a in "$@"; do
    if [ "$a" = ":" ]; then cmds+=("$cur"); cur=""; continue; fi
    if [ "$a" = "--" ] && [ -z "$cur" ]; then continue; fi
    cur+="$(printf '%q ' "$a")"
  done
  cmds+=("$cur")
  local npb=${#cmds[@]} i port key
  port=$(t_free_port)
  key=$(t_random_key)
  t_log "job $name (by hand, $npb PBs, port $port, deadline ${secs}s)"
  for ((i = 0; i < npb; i++)); do
    t_log "  PB $i: ${cmds[$i]}"
    local -a c=()
    eval "c=(${cmds[$i]})"
    t_start "$name.pb$i" "$secs" env "${envs[@]}" WAITIO_NPB="$npb" WAITIO_PBID="$i" \
      WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT="$port" WAITIO_KEY="$key" "${c[@]}"
  done
  local status=0 left=$npb rc j
  while [ $left -gt 0 ]; do
    for ((i = 0; i < npb; i++)); do
      [ -n "${T_RC[$name.pb$i]:-}" ] && continue
      t_running "$name.pb$i" && continue
      t_wait "$name.pb$i"
      rc=${T_RC[$name.pb$i]}
      left=$((left - 1))
      if [ "$rc" != 0 ] && [ $status = 0 ]; then
        status=$rc
        t_log "  PB $i of $name failed (exit status $rc): stopping the other PBs"
        for ((j = 0; j < npb; j++)); do t_running "$name.pb$j" && t_kill "$name.pb$j" TERM; done
      fi
    done
    [ $left -gt 0 ] && sleep 0.1
  done
  : >"$T_DIR/$name.out"
  for ((i = 0; i < npb; i++)); do
    { echo "=== PB $i (exit status ${T_RC[$name.pb$i]}) ==="; cat "$T_DIR/$name.pb$i.out"; } >>"$T_DIR/$name.out"
    T_SHOWN+=("$name.pb$i")
  done
  T_ORDER+=("$name")
  T_RC[$name]=$status
  T_PID[$name]=${T_PID[$name.pb0]}
  return "$status"
}

# t_run_job NAME SECS [VAR=VAL...] -- ...: t_job that must succeed; shows the output either way
t_run_job() {
  local name=$1 rc=0
  t_job "$@" || rc=$?
  t_show "$name"
  case $rc in
    0) ;;
    124|137) t_fail "job $name hit its deadline of $2 s (exit status $rc)" ;;
    *) t_fail "job $name failed (exit status $rc)" ;;
  esac
}

# t_oshmem_job NAME SECS LAYOUT PROG [VAR=VAL...]: PROG as an OpenSHMEM job through waitio-oshrun
# that must succeed; LAYOUT "N" is one PB of N PEs, "N+M+..." separately launched PBs of N, M, ...
# T_PES is set to the number of PEs.
t_oshmem_job() {
  local name=$1 secs=$2 layout=$3 prog=$4 k first=1 pbs=() job=()
  shift 4
  IFS=+ read -ra pbs <<<"$layout"
  T_PES=0
  for k in "${pbs[@]}"; do
    T_PES=$((T_PES + k))
    [ $first = 1 ] || job+=(:)
    job+=(-- "$WAITIO_BUILD_DIR/tools/waitio-oshrun" -np "$k" "$prog")
    first=0
  done
  t_run_job "$name" "$secs" "$@" "${job[@]}"
}

# t_python_binding PY DIR: T_PYLIB = a directory holding this tree's Python binding for PY, put
# first on PYTHONPATH: python_binding's install in this build when newer than every source it is
# built from, else a build of its own into $WAITIO_BUILD_DIR/DIR (setup.py build: ~20-60 s;
# T_PYJOBS compilers at once, default 2).
t_python_binding() {
  local py=$1 dir=$2 site=$WAITIO_BUILD_DIR/python-site src=$WAITIO_SOURCE_DIR so
  so=$(ls "$site"/waitio/_core*.so 2>/dev/null | head -1)
  if [ "$py" = python3 ] && [ -n "$so" ] && [ -z "$(find "$src/python" "$src/src" "$src/include" "$src/setup.py" \
       -newer "$so" -type f 2>/dev/null | head -1)" ]; then
    T_PYLIB=$site
    t_log "using the binding python_binding installed ($T_PYLIB)"
  else
    t_start pybuild 200 sh -c "cd '$src' && '$py' setup.py -q build --build-base '$WAITIO_BUILD_DIR/$dir' -j${T_PYJOBS:-2}"
    t_wait pybuild || { t_show pybuild; t_fail "building the Python binding failed"; }
    T_PYLIB=$(ls -d "$WAITIO_BUILD_DIR/$dir"/lib.* 2>/dev/null | head -1)
    [ -n "$T_PYLIB" ] || t_fail "no lib.* directory in $WAITIO_BUILD_DIR/$dir"
  fi
  export PYTHONPATH=$T_PYLIB${PYTHONPATH:+:$PYTHONPATH}
  case $(cd /tmp && "$py" -c "import waitio; print(waitio.__file__)" 2>&1) in
    "$T_PYLIB"/*) ;;
    *) t_fail "the binding of this tree is not the one imported" ;;
  esac
}

# t_python_fake_cuda: T_FAKE_CUDA = the CUDA test double (tests/gpu/fake_cuda.c) for a Python
# process: the build's, or in a sanitizer build (whose copy Python, not built with ASan, cannot
# load) a plain one compiled into this test's directory.
t_python_fake_cuda() {
  T_FAKE_CUDA=$WAITIO_BUILD_DIR/tests/libwaitio_fakecuda.so
  if t_sanitized; then
    T_FAKE_CUDA=$T_DIR/libwaitio_fakecuda.so
    cc -std=c11 -O1 -shared -fPIC -o "$T_FAKE_CUDA" "$WAITIO_SOURCE_DIR/tests/gpu/fake_cuda.c" -lpthread ||
      t_fail "compiling tests/gpu/fake_cuda.c without the sanitizers failed"
  fi
  [ -f "$T_FAKE_CUDA" ] || t_fail "$T_FAKE_CUDA is not built (cmake --build $WAITIO_BUILD_DIR --target waitio_fakecuda)"
}

if [ "$T_NAME" = lib ]; then
  # run directly (ctest runs every scripts/*.sh): a self-test of the helpers
  t_start self 5 sh -c 'echo hello; sleep 30'
  t_wait_line self '^hello$' 3 || t_fail "t_wait_line did not see the line"
  t_kill self
  t_wait self || true
  [ "$(t_rc self)" = 137 ] || t_fail "killed process reported $(t_rc self), expected 137"
  # a process that left its process group is still found through the marker
  t_start escaper 5 sh -c 'setsid sleep 30 & echo "pid=$!"; wait'
  t_wait_line escaper '^pid=' 3 || t_fail "escaper did not start"
  esc=$(sed -n 's/^pid=//p' "$(t_out escaper)")
  kill -0 "$esc" 2>/dev/null || t_fail "escaped process $esc not running"
  t_kill_marked
  sleep 0.1
  if [ -r "/proc/$esc/status" ] && ! grep -q '^State:.*Z' "/proc/$esc/status"; then
    t_fail "t_kill_marked left the escaped process $esc alive"
  fi
  t_pass "helpers load; processes start, are seen and are killed"
fi
