#!/usr/bin/env bash
# sec_python_pickle.sh — issue 25 item 2: a key holder's object messages must not run code in a
# Python PB, nor make it allocate what the peer only announced. PB 0 (the victim, Python,
# tests/python/pb_pickle.py victim) is attacked by PB 1, a key holder (pb_pickle.py attacker),
# which frames its object messages with upper-case calls (an 8-byte length, then the pickle), as
# the lower-case calls do, so it speaks to an old binding too:
#   - length: a 1 GiB length, then 100 bytes: the victim's peak memory must grow < 64 MB;
#   - recv (by source, and ANY_SOURCE/ANY_TAG), bcast, gather, scatter, allgather, allreduce,
#     reduce: a pickle whose reduce is `os.system("touch FILE")`. Each call must raise
#     waitio.Error naming the refused global ("refused to unpickle posix.system"), FILE must
#     not exist, and the next legit message of the same call must arrive;
#   - by default NumPy arrays (many dtypes, structured, Fortran-ordered, object, 40 MB: several
#     chunks), NumPy scalars and dtypes and nested builtins round trip, checksummed; a custom
#     class is refused by its name; allow_pickle(True) without WAITIO_PYTHON_PICKLE=1 is refused.
# Then an opt-in run: PB 0 with WAITIO_PYTHON_PICKLE=1 calls waitio.allow_pickle(True) and gets a
# custom class's objects by recv and bcast; after allow_pickle(False) they are refused again.
# The attacker runs as the victim's user: the key, not the uid, is what lets it send (another
# uid's Python here could not read the pyenv interpreter under /root).
# Before the fix (old main's binding) the pickle ran the command in every case, and the 1 GiB
# announcement made the victim allocate 1 GiB.
# The binding is built from a copy of this tree into T_DIR (not the source tree's build/, which
# python_binding.sh may be using); WAITIO_TEST_PYTHON_SITE=DIR uses one already built in DIR.
# timeout: 300
set -uo pipefail
source "$(dirname "$0")/lib.sh"
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy >/dev/null 2>&1 ||
  t_fail "NumPy is missing and pip cannot install it"
site=${WAITIO_TEST_PYTHON_SITE:-}
if [ -z "$site" ]; then
  mkdir "$T_DIR/src"
  (cd "$WAITIO_SOURCE_DIR" && cp -r setup.py pyproject.toml MANIFEST.in README.md LICENSE include src python tools "$T_DIR/src/") ||
    t_fail "cannot copy the sources"
  t_start install 240 python3 -m pip install -q --no-deps --target "$T_DIR/site" "$T_DIR/src"
  t_wait install || { t_show install; t_fail "pip install of the binding failed"; }
  site=$T_DIR/site
fi
export PYTHONPATH=$site
case $(python3 -c "import waitio; print(waitio.__file__)" 2>&1) in
  "$site"/*) ;;
  *) t_fail "the binding in $site does not import" ;;
esac
pb=$WAITIO_SOURCE_DIR/tests/python/pb_pickle.py
file=$T_DIR/command-ran

t_instance 2
t_start victim 120 env WAITIO_PBID=0 python3 "$pb" victim "$file"
t_start attacker 120 env WAITIO_PBID=1 python3 "$pb" attacker "$file"
t_wait victim
t_wait attacker
t_show victim
t_show attacker
[ -e "$file" ] && t_fail "a key holder's pickle ran a command in the victim (created $file)"
t_reject victim "command ran: YES" "a key holder's pickle ran a command in the victim"
t_reject victim "check .*: FAILED"
for c in recv recv-any-source bcast gather scatter allgather allreduce reduce; do
  t_expect victim "^case $c: waitio.Error: refused to unpickle posix.system in the object message from rank 1" \
    "$c refuses the pickle with waitio.Error naming the class"
done
t_expect victim "check length: under 64 MB allocated: ok"
t_expect_rc victim 0
t_expect_rc attacker 0
t_expect victim "^pb_pickle victim ok"
t_log "$(grep -m1 'peak memory grew' "$(t_out victim)")"

t_instance 2
t_start optin 120 env WAITIO_PBID=0 WAITIO_PYTHON_PICKLE=1 python3 "$pb" optin "$file"
t_start peer 120 env WAITIO_PBID=1 python3 "$pb" peer "$file"
t_wait optin
t_wait peer
t_show optin
t_show peer
t_reject optin "check .*: FAILED"
t_expect_rc optin 0
t_expect_rc peer 0
t_expect optin "^pb_pickle optin ok"
t_pass "8 object-message calls refuse a key holder's os.system pickle by name and go on; a 1 GiB announcement is not allocated; NumPy and builtins round trip; the opt-in decodes a custom class"
