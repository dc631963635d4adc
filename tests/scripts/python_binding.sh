#!/usr/bin/env bash
# python_binding.sh — builds the Python binding (pip install --target into the build directory, with
# NumPy and pytest if missing) and runs its pytest suite.
# timeout: 300
set -euo pipefail
cd "$WAITIO_SOURCE_DIR"
# a Debian python3 refuses pip installs outside a venv (PEP 668); a test machine installs anyway
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -c "import numpy, pytest" 2>/dev/null || python3 -m pip install -q numpy pytest
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
cd /tmp
python3 -m pytest -q -p no:cacheprovider "$WAITIO_SOURCE_DIR/tests/python"
