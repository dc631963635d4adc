#!/usr/bin/env bash
# python_gpu.sh — device (GPU) arrays as buffers of the Python binding (docs/python.md, "GPU
# arrays"; issue 31 item 4) without a GPU: the test double of the CUDA driver
# (tests/gpu/fake_cuda.c, libwaitio_fakecuda.so through WAITIO_CUDA_LIBRARY; its device memory
# crashes any CPU access) under tests/python/pb_gpu.py, two PBs of one process:
#   - "all" with the default transports (one host: CUDA IPC between the PBs) and over tcp
#     (staged through host memory): __cuda_array_interface__ and DLPack arrays sent and received
#     device<->device, device->host, host->device, 0 B..4 MiB + 1, both ways, every byte read
#     back through the driver; Isend/Irecv; DLPack deleters called once per export; a CPU DLPack
#     array received in place; Allreduce/Reduce/Bcast/Allgather on device arrays; the errors;
#     Put/Iput/put_async from and Get/Iget/get_async into device arrays on a host window;
#     device windows (Window.allocate(device=True), Window.create over a device array): Put/Get
#     from and into device (CAI, DLPack) and host buffers, fetch_add, parts read via their CAI;
#   - "nodriver": WAITIO_CUDA_LIBRARY names no library: device arrays raise waitio.Error with
#     WAITIO_ERR_DEVICE, host buffers still move.
# The binding: python_binding's (in this build) when newer than its sources, else built here.
# timeout: 240
set -uo pipefail
source "$(dirname "$0")/lib.sh"
src=$WAITIO_SOURCE_DIR
py=${WAITIO_TEST_PYTHON:-python3}
"$py" -c "import numpy" 2>/dev/null || t_fail "NumPy is missing (python3 -m pip install numpy)"
t_python_fake_cuda
fake=$T_FAKE_CUDA
t_python_binding "$py" python-gpu
prog=$src/tests/python/pb_gpu.py

t_run_job shm 60 WAITIO_CUDA_LIBRARY="$fake" -- "$py" "$prog" all : -- "$py" "$prog" all
t_run_job tcp 60 WAITIO_CUDA_LIBRARY="$fake" WAITIO_TRANSPORTS=tcp -- "$py" "$prog" all : -- "$py" "$prog" all
for job in shm tcp; do
  for r in 0 1; do
    t_expect "$job" "^pb_gpu ok: rank $r of 2: two-sided 15937593 bytes received and checked .*DLPack v1\+legacy \(4 deleter calls\), CPU DLPack; Allreduce/Reduce/Bcast/Allgather on device; errors; one-sided; device windows 1200036 bytes checked" \
      "rank $r's verdict ($job)"
  done
done
t_run_job nodriver 40 WAITIO_CUDA_LIBRARY="$T_DIR/no-such-libcuda.so" -- "$py" "$prog" nodriver : -- "$py" "$prog" nodriver
for r in 0 1; do
  t_expect nodriver "^pb_gpu nodriver ok: rank $r: device arrays raise WAITIO_ERR_DEVICE" "rank $r's verdict (no driver)"
done
t_pass "device arrays (CUDA array interface, DLPack) through the fake driver over shm+IPC and tcp, every byte checked; no driver: WAITIO_ERR_DEVICE"
