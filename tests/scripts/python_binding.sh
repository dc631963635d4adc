#!/usr/bin/env bash
# python_binding.sh — installs the Python binding (pip install . from the repository root, with
# NumPy and pytest if missing) and runs its pytest suite.
# timeout: 300
set -euo pipefail
cd "$WAITIO_SOURCE_DIR"
# a Debian python3 refuses pip installs outside a venv (PEP 668); a test machine installs anyway
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -c "import numpy, pytest" 2>/dev/null || python3 -m pip install -q numpy pytest
python3 -m pip install -q . 2>&1 | grep -v "as the 'root' user" || true
python3 -c "import waitio" || { echo "FAIL: the binding did not install"; exit 1; }
cd /tmp
python3 -m pytest -q -p no:cacheprovider "$WAITIO_SOURCE_DIR/tests/python"
