#!/usr/bin/env bash
# python_sdist.sh — the Python binding as a user gets it from an sdist: `python3 setup.py sdist`
# (the archive must carry the C headers and sources it compiles, LICENSE, py.typed and the .pyi
# stubs), `pip install` of that archive into a fresh virtual environment (no system packages;
# pip builds it in isolation), then:
#   - the package metadata: licence BSD-3-Clause with LICENSE, NumPy as the `numpy` extra,
#     matplotlib as the `plot` extra;
#   - the console scripts waitiorun, waitio-info and waitio-trace in the venv's bin: --help and
#     --version of each (the project's version); waitio-info's transports are those that
#     `python -m waitio.info` reports;
#   - two Python PBs of that venv coupled by the venv's waitiorun (traced) exchange 1 MiB each
#     way (every byte compared) and a pickled object, reduce objects with waitio.SUM (mpi4py's
#     way: the sum checked on the root) and MAX, and pass a barrier; the venv's waitio-trace
#     merges their traces, and its --plot DIR, without matplotlib in the venv, fails advising
#     pip install 'waitio[plot]' (not the distribution's packages);
#   - typing: mypy (from PyPI, into the venv) --strict accepts tests/python/typing_user.py and,
#     with NumPy installed, typing_numpy.py (arrays as buffers on Pythons before 3.12 too),
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
assert any(r.replace(" ", "").startswith("matplotlib;extra==\"plot\"") for r in req), req
assert any(f.endswith("LICENSE") for f in files), files
assert any(f.endswith("waitio/_core.pyi") for f in files) and any(f.endswith("py.typed") for f in files), files
assert importlib.util.find_spec("numpy") is None, "numpy was installed without the extra"
import waitio
print("metadata ok", waitio.__version__)
'
t_wait meta || { t_show meta; t_fail "the installed package's metadata is wrong"; }
t_log "metadata: BSD-3-Clause, LICENSE, stubs, numpy and matplotlib only as extras"

version=$("$vpy" -c 'import waitio; print(waitio.__version__)') || t_fail "import waitio failed"
for s in waitiorun waitio-info waitio-trace; do
  [ -x "$venv/bin/$s" ] || t_fail "pip install gave no console script $s"
  out=$("$venv/bin/$s" --version 2>&1) || t_fail "$s --version failed: $out"
  [ "$out" = "$s (WaitIO) $version" ] || t_fail "$s --version says '$out', not '$s (WaitIO) $version'"
  "$venv/bin/$s" --help >"$T_DIR/help.out" 2>&1 || { cat "$T_DIR/help.out"; t_fail "$s --help failed"; }
  grep -qi "usage" "$T_DIR/help.out" || t_fail "$s --help printed no usage"
done
# the C tool's transports and the extension's, as python -m waitio.info reports them: the same
env -u WAITIO_NPB -u WAITIO_PBID "$venv/bin/waitio-info" >"$T_DIR/info.out" 2>&1 || { cat "$T_DIR/info.out"; t_fail "waitio-info failed"; }
"$vpy" -m waitio.info >"$T_DIR/pyinfo.out" 2>&1 || { cat "$T_DIR/pyinfo.out"; t_fail "python -m waitio.info failed"; }
c_tp=$(sed -n 's/^transports:\([^(]*\).*/\1/p' "$T_DIR/info.out" | tr -s ' ' '\n' | grep . | sort | tr '\n' ' ')
py_tp=$(sed -n 's/^transports: //p' "$T_DIR/pyinfo.out" | sed 's/ ([^)]*)//g' | tr -d ' ' | tr ',' '\n' | sort | tr '\n' ' ')
[ -n "$c_tp" ] && [ "$c_tp" = "$py_tp" ] || { cat "$T_DIR/info.out" "$T_DIR/pyinfo.out"; t_fail "python -m waitio.info reports transports '$py_tp', waitio-info '$c_tp'"; }
t_log "console scripts waitiorun, waitio-info, waitio-trace $version; transports $c_tp"

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
    # objects reduced with the library's operations, as mpi4py's MPI.SUM: each value is a
    # digest of what the peer sent, so the sum depends on data that crossed
    value = int.from_bytes(hashlib.sha256(got).digest()[:4], "little")
    total = w.reduce(value, op=waitio.SUM, root=1)
    expect = sum(int.from_bytes(hashlib.sha256(random.Random(r).randbytes(1 << 20)).digest()[:4], "little")
                 for r in (0, 1))
    assert total == (expect if me == 1 else None), (total, expect)
    peer_value = int.from_bytes(hashlib.sha256(mine).digest()[:4], "little")  # what the peer reduces
    assert w.allreduce(value, op=waitio.MAX) == max(value, peer_value), "MAX"
    assert w.allreduce(me + 2, op=waitio.PROD) == 6, "PROD"
    w.Barrier()
    print(f"sdist pair ok on rank {me}: {waitio.__file__}")
PY
t_start pair 40 env -u WAITIO_NPB -u WAITIO_PBID -u WAITIO_MASTER_PORT -u WAITIO_MASTER_HOST -u WAITIO_KEY \
  WAITIO_TRACE="$T_DIR/trace" "$venv/bin/waitiorun" -- "$vpy" "$T_DIR/pair.py" : -- "$vpy" "$T_DIR/pair.py"
t_wait pair || { t_show pair; t_fail "the venv's waitiorun with two PBs failed"; }
grep -q "sdist pair ok on rank 0: $venv/" "$T_DIR/pair.out" && grep -q "sdist pair ok on rank 1: $venv/" "$T_DIR/pair.out" \
  || { t_show pair; t_fail "the two venv PBs did not both report success from the venv's waitio"; }
t_log "two PBs of the venv's waitiorun exchanged 1 MiB each way, an object, reduced with waitio.SUM"

# waitio-trace --plot DIR (DIR the directory to read): the trace merged, then no matplotlib here
"$venv/bin/waitio-trace" --plot "$T_DIR/trace" >"$T_DIR/plot.out" 2>&1 && { cat "$T_DIR/plot.out"; t_fail "waitio-trace --plot succeeded without matplotlib"; }
grep -q "WaitIO trace: 2 processes" "$T_DIR/plot.out" && [ -s "$T_DIR/trace/trace.json" ] \
  || { cat "$T_DIR/plot.out"; t_fail "waitio-trace --plot DIR did not merge DIR's traces"; }
grep -q "pip install 'waitio\[plot\]'" "$T_DIR/plot.out" && ! grep -q "apt-get" "$T_DIR/plot.out" \
  || { cat "$T_DIR/plot.out"; t_fail "waitio-trace in a venv without matplotlib does not advise pip install 'waitio[plot]'"; }
t_log "waitio-trace --plot DIR merged the traces and advised: $(grep -o "pip install 'waitio\[plot\]'[^)]*" "$T_DIR/plot.out" | head -1)"

t_start mypy-install 180 "$vpy" -m pip install --disable-pip-version-check -q mypy numpy
t_wait mypy-install || { t_show mypy-install; t_fail "pip install mypy numpy failed"; }
# the second run reuses the first's cache (in this test's own directory) of NumPy's and the
# standard library's stubs, which is most of mypy's work
t_start mypy-user 120 sh -c "cd '$T_DIR' && '$vpy' -m mypy --strict '$src/tests/python/typing_user.py' '$src/tests/python/typing_numpy.py'"
t_wait mypy-user || { t_show mypy-user; t_fail "mypy --strict rejects a correct user program"; }
t_start mypy-errors 120 sh -c "cd '$T_DIR' && '$vpy' -m mypy --strict '$src/tests/python/typing_errors.py'"
t_wait mypy-errors && { t_show mypy-errors; t_fail "mypy accepted wrong calls: the stubs type nothing"; }
t_expect mypy-errors 'typing_errors.py:6: error: .*"dest".*incompatible type "str"; expected "int"'
t_expect mypy-errors 'typing_errors.py:7: error: .*incompatible type "int"; expected "Buffer( \| _ArrayBuffer)?( \| _CudaArray \| _DLPackArray)?"'
t_expect mypy-errors 'typing_errors.py:8: error: Incompatible types in assignment'
t_expect mypy-errors 'Found 3 errors'
t_start stubtest 120 sh -c "cd '$T_DIR' && '$vpy' -m mypy.stubtest waitio"
t_wait stubtest || { t_show stubtest; t_fail "stubtest: the stubs differ from the compiled module"; }
t_pass "sdist complete; installs into a fresh venv with its console scripts; 2 PBs exchange and reduce with waitio.SUM; --plot advice; metadata, mypy --strict (NumPy buffers) and stubtest agree"
