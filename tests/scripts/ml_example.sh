#!/usr/bin/env bash
# ml_example.sh — the simulation + Python learner coupling runs to completion and the learned
# initial guess saves solver iterations.
# timeout: 240
set -euo pipefail
cd "$WAITIO_SOURCE_DIR"
# a Debian python3 refuses pip installs outside a venv (PEP 668); a test machine installs anyway
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy 2>&1 | grep -v "as the 'root' user" || true
# always this tree's binding: an older installed one may speak an older protocol
python3 -m pip install -q . 2>&1 | grep -v "as the 'root' user" || true
out=$(bash examples/ml/run.sh "$WAITIO_BUILD_DIR" 40)
echo "$out"
echo "$out" | grep -q "learner (NumPy): trained" || { echo "FAIL: learner did not report"; exit 1; }
pct=$(echo "$out" | sed -n 's/.*, \([0-9]*\)% fewer.*/\1/p')
[ -n "$pct" ] && [ "$pct" -gt 0 ] || { echo "FAIL: the prediction saved no iterations"; exit 1; }
echo PASS
