# gpu_lib.sh — what the GPU test scripts (tests/gpu/ci_*.sh) share; sourced after lib.sh.
#   gpu_driver             sets the array `driver`: the environment that picks the CUDA driver —
#                          nothing with WAITIO_TEST_GPU_REAL=1 (tests/gpu/run.sh on a GPU machine),
#                          else the test double (WAITIO_TEST_FAKE_CUDA, default the build's
#                          libwaitio_fakecuda.so), which must exist
#   gpu_run_3 PROG SECS    PROG as 3 processes in 2 PBs (1 + 2) under that driver, each bounded by
#                          SECS; all must exit 0 and rank 0 must print "PROG ok: rank 0 of 3"

gpu_driver() {
  if [ "${WAITIO_TEST_GPU_REAL:-0}" = 1 ]; then
    driver=()
    return
  fi
  : "${WAITIO_TEST_FAKE_CUDA:=$WAITIO_BUILD_DIR/tests/libwaitio_fakecuda.so}"
  [ -f "$WAITIO_TEST_FAKE_CUDA" ] || t_fail "no fake driver at $WAITIO_TEST_FAKE_CUDA"
  driver=(WAITIO_CUDA_LIBRARY="$WAITIO_TEST_FAKE_CUDA")
}

gpu_run_3() {
  local prog=$1 secs=$2 r n
  gpu_driver
  t_instance 2
  t_start pb0 "$secs" env WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "${driver[@]}" "$TEST_PROGS/$prog"
  for r in 0 1; do
    t_start "pb1.$r" "$secs" env WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 "${driver[@]}" "$TEST_PROGS/$prog"
  done
  for n in pb0 pb1.0 pb1.1; do t_wait "$n" || { t_show_all; t_fail "$n failed (exit $(t_rc "$n"))"; }; done
  t_expect pb0 "^$prog ok: rank 0 of 3" "rank 0's verdict"
}
