#!/usr/bin/env bash
# python_futures.sh — the futures of the Python one-sided API (python/waitio/futures.py, docs/
# python.md "Futures"), with two Python processes running tests/python/pb_futures.py:
#   - "all" (a chain of 1,000 then() callbacks carrying a value, when_all over put/get/atomic/RPC
#     futures with sha256 checks, put_nbi/get_nbi + quiet, fetch-add futures from both processes
#     with exact totals, min/max/floating-point add, strided put/get, non-blocking bcast/reduce/
#     barrier, distributed objects (register, lookup, read, write), bounds and RPC errors through
#     then/when_all) as one PB
#     of 2 processes (default transports: the window through shared memory) and as two
#     separately launched PBs over tcp (everything as frames);
#   - "kill": the second process dies (SIGKILL) while the first has RPC futures, a then() chain
#     and a when_all() pending on it: all must raise waitio.Error — one PB, and two PBs over tcp;
#   - the ```python blocks of docs/python.md's "Futures" section, run as two PBs.
# The binding of this tree is built into this build directory first (setup.py build: a no-op
# when nothing changed).
# timeout: 300
set -uo pipefail
source "$(dirname "$0")/lib.sh"
src=$WAITIO_SOURCE_DIR
py=${WAITIO_TEST_PYTHON:-python3}
"$py" -c "import numpy" 2>/dev/null || t_fail "NumPy is missing (python3 -m pip install numpy)"
# The binding python_binding installed into the build tree (it runs first) when it is newer than
# every source it is built from; else a build of our own (about 20 s).
t_python_binding "$py" python-futures
lib=$T_PYLIB
t_log "binding built in $lib"
prog=$src/tests/python/pb_futures.py
oshrun=$WAITIO_BUILD_DIR/tools/waitio-oshrun

t_run_job one-pb 60 -- "$oshrun" -np 2 "$py" "$prog" all
t_run_job tcp-2pb 60 WAITIO_TRANSPORTS=tcp -- "$py" "$prog" all : -- "$py" "$prog" all
for job in one-pb tcp-2pb; do
  for r in 0 1; do
    t_expect "$job" "^pb_futures ok: rank $r of 2, chain 1000 .*; when_all .*; nbi\+quiet; atomics 600 exact, min/max/fp-add; strided; bcast/reduce/barrier futures; objects; errors" \
      "rank $r's verdict"
  done
done

# kill: by hand (a launcher would stop the survivor with the victim); NAME NPB then per process
# the environment that places it
kill_case() {
  local name=$1 npb=$2
  shift 2
  t_instance "$npb"
  local r=0 env
  for env in "$@"; do
    # shellcheck disable=SC2086
    t_start "$name.$r" 40 env $env "$py" "$prog" kill
    r=$((r + 1))
  done
  t_expect_rc "$name.0" 0
  t_expect "$name.0" "^survivor: 5 futures failed after" "the survivor's verdict"
  t_expect_rc "$name.1" 137
  t_expect "$name.1" "^victim: dying"
  t_log "$name: $(grep -m1 '^survivor' "$T_DIR/$name.0.out")"
}
kill_case kill-one-pb 1 "WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=2" "WAITIO_PBID=0 WAITIO_PB_RANK=1 WAITIO_PB_SIZE=2"
kill_case kill-tcp 2 "WAITIO_TRANSPORTS=tcp WAITIO_PBID=0" "WAITIO_TRANSPORTS=tcp WAITIO_PBID=1"
unset WAITIO_NPB WAITIO_MASTER_HOST WAITIO_MASTER_PORT WAITIO_KEY

# the documentation's examples: every ```python block of the "Futures" section, one program
"$py" - "$src/docs/python.md" "$T_DIR/doc_futures.py" <<'PY' || t_fail "no python block in docs/python.md's Futures section"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^## Futures\b.*?(?=^## )", text, re.S | re.M)
blocks = re.findall(r"^```python\n(.*?)^```", m.group(0) if m else "", re.S | re.M)
if not blocks:
    sys.exit(1)
open(sys.argv[2], "w").write("\n".join(blocks))
PY
t_run_job docs 40 -- "$py" "$T_DIR/doc_futures.py" : -- "$py" "$T_DIR/doc_futures.py"
t_expect docs "^docs futures ok" "the documented example's last line"
t_pass "1,000-step chain, when_all, nbi, atomics, strided, collectives, objects, errors on one PB and two tcp PBs; a killed peer fails every pending future (one PB, tcp); the docs' example"
