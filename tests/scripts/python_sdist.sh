#!/usr/bin/env bash
# python_sdist.sh — the Python binding as a user gets it from an sdist: `python3 setup.py sdist`
# (the archive must carry the C headers and sources it compiles, LICENSE, py.typed and the .pyi
# stubs), `pip install` of that archive into a fresh virtual environment (no system packages;
# pip builds it in isolation), then:
#   - the package metadata: licence BSD-3-Clause with LICENSE, NumPy as the `numpy` extra;
#   - two Python PBs of that venv coupled by waitiorun exchange 1 MiB each way (every byte
#     compared) and a pickled object, and pass a barrier;
#   - typing: mypy (from PyPI, into the venv) --strict accepts tests/python/typing_user.py,
#     rejects the three wrong calls of typing_errors.py, and stubtest finds the stubs equal to
#     the compiled module (names, signatures, types of the runtime objects).
# timeout: 240
set -uo pipefail
source "$(dirname "$0")/lib.sh"
src=$WAITIO_SOURCE_DIR
py=${WAITIO_TEST_PYTHON:-python3}

t_start sdist 60 sh -c "cd '$src' && '$py' setup.py -q sdist -d '$T_DIR/dist'"
t_wait sdist || { t_show sdist; t_fail "python3 setup.py sdist failed"; }
sdist=$(ls "$T_DIR"/dist/waitio-*.tar.gz 2>/dev/null | head -1)
[ -n "$sdist" ] || t_fail "no sdist in $T_DIR/dist"
tar tzf "$sdist" >"$T_DIR/contents"
for f in include/waitio.h include/waitio_mpi.h src/core/engine.c src/core/common.h src/boot/boot.c \
         src/transport/tcp.c python/waitio/_core.c python/waitio/_core.pyi python/waitio/py.typed LICENSE setup.py; do
  grep -q "^waitio-[0-9.]*/$f\$" "$T_DIR/contents" || t_fail "the sdist lacks $f"
done
t_log "sdist $(basename "$sdist"): headers, sources, stubs and LICENSE included"

venv=$T_DIR/venv
"$py" -m venv "$venv" || t_fail "python3 -m venv failed (scripts/install-deps.sh --test installs python3-venv)"
vpy=$venv/bin/python
t_start install 180 "$vpy" -m pip install --disable-pip-version-check -q "$sdist"
t_wait install || { t_show install; t_fail "pip install of the sdist into a fresh venv failed"; }
t_start meta 20 "$vpy" -c '
import importlib.metadata as m, importlib.util
md = m.metadata("waitio")
req = m.requires("waitio") or []
files = [str(f) for f in (m.files("waitio") or [])]
assert md["License"] == "BSD-3-Clause", md["License"]
assert any(r.replace(" ", "").startswith("numpy;extra==\"numpy\"") for r in req), req
assert any(f.endswith("LICENSE") for f in files), files
assert any(f.endswith("waitio/_core.pyi") for f in files) and any(f.endswith("py.typed") for f in files), files
assert importlib.util.find_spec("numpy") is None, "numpy was installed without the extra"
import waitio
print("metadata ok", waitio.__version__)
'
t_wait meta || { t_show meta; t_fail "the installed package's metadata is wrong"; }
t_log "metadata: BSD-3-Clause, LICENSE, stubs, numpy only as an extra"

cat >"$T_DIR/pair.py" <<'PY'
import hashlib, random, waitio
with waitio.session(timeout=30):
    w = waitio.universe()
    me, other = w.rank, 1 - w.rank
    mine = random.Random(me).randbytes(1 << 20)
    got = bytearray(1 << 20)
    r = w.Irecv(got, source=other, tag=5)
    w.Send(mine, dest=other, tag=5)
    src, tag, n = r.wait()
    assert (src, tag, n) == (other, 5, 1 << 20), (src, tag, n)
    assert got == random.Random(other).randbytes(1 << 20), "payload differs"
    w.send({"from": me, "sha": hashlib.sha256(mine).hexdigest()}, dest=other, tag=6)
    obj = w.recv(source=other, tag=6)
    assert obj == {"from": other, "sha": hashlib.sha256(got).hexdigest()}, obj
    w.Barrier()
    print(f"sdist pair ok on rank {me}: {waitio.__file__}")
PY
t_run_job pair 40 -- "$vpy" "$T_DIR/pair.py" : -- "$vpy" "$T_DIR/pair.py"
grep -q "sdist pair ok on rank 0: $venv/" "$T_DIR/pair.out" && grep -q "sdist pair ok on rank 1: $venv/" "$T_DIR/pair.out" \
  || { t_show pair; t_fail "the two venv PBs did not both report success from the venv's waitio"; }
t_log "two PBs of the venv exchanged 1 MiB each way and an object"

t_start mypy-install 180 "$vpy" -m pip install --disable-pip-version-check -q mypy
t_wait mypy-install || { t_show mypy-install; t_fail "pip install mypy failed"; }
t_start mypy-user 120 sh -c "cd '$T_DIR' && '$vpy' -m mypy --strict --no-incremental '$src/tests/python/typing_user.py'"
t_wait mypy-user || { t_show mypy-user; t_fail "mypy --strict rejects a correct user program"; }
t_start mypy-errors 120 sh -c "cd '$T_DIR' && '$vpy' -m mypy --strict --no-incremental '$src/tests/python/typing_errors.py'"
t_wait mypy-errors && { t_show mypy-errors; t_fail "mypy accepted wrong calls: the stubs type nothing"; }
t_expect mypy-errors 'typing_errors.py:6: error: .*"dest".*incompatible type "str"; expected "int"'
t_expect mypy-errors 'typing_errors.py:7: error: .*incompatible type "int"; expected "Buffer"'
t_expect mypy-errors 'typing_errors.py:8: error: Incompatible types in assignment'
t_expect mypy-errors 'Found 3 errors'
t_start stubtest 120 sh -c "cd '$T_DIR' && '$vpy' -m mypy.stubtest waitio"
t_wait stubtest || { t_show stubtest; t_fail "stubtest: the stubs differ from the compiled module"; }
t_pass "sdist complete; installs into a fresh venv; 2 PBs exchange; metadata, mypy --strict and stubtest agree"
