#!/usr/bin/env bash
# ml_example.sh — the simulation + Python learner coupling runs to completion and the learned
# initial guess saves solver iterations.
# timeout: 240
set -euo pipefail
cd "$WAITIO_SOURCE_DIR"
# a Debian python3 refuses pip installs outside a venv (PEP 668); a test machine installs anyway
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy 2>&1 | grep -v "as the 'root' user" || true
# this tree's binding, in a directory of this build (not site-packages): another checkout's
# tests installing theirs meanwhile cannot swap it under us, and an older one cannot shadow it
site=$WAITIO_BUILD_DIR/python-site
rm -rf "$site"
python3 -m pip install -q --no-deps --target "$site" . 2>&1 | grep -v "as the 'root' user" || true
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
case $(python3 -c "import waitio; print(waitio.__file__)" 2>&1) in
  "$site"/*) ;;
  *) echo "FAIL: the binding of this tree did not install into $site"; exit 1 ;;
esac
out=$(bash examples/ml/run.sh "$WAITIO_BUILD_DIR" 40)
echo "$out"
echo "$out" | grep -q "learner (NumPy): trained" || { echo "FAIL: learner did not report"; exit 1; }
pct=$(echo "$out" | sed -n 's/.*, \([0-9]*\)% fewer.*/\1/p')
[ -n "$pct" ] && [ "$pct" -gt 0 ] || { echo "FAIL: the prediction saved no iterations"; exit 1; }
echo PASS
