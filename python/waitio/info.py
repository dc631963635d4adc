"""``python -m waitio.info``: prints WaitIO's build and runtime settings."""
import os
import sys

from . import _core


def main() -> int:
    info = _core.build_info()
    print(f"WaitIO {info['version']} (Python binding, {sys.implementation.name} "
          f"{sys.version.split()[0]})")
    print(f"transports: {info['transports']}")
    print(f"extension: {_core.__file__}")
    print("environment:")
    keys = sorted(k for k in os.environ if k.startswith("WAITIO_"))
    for k in keys:
        v = "(set, hidden)" if k == "WAITIO_KEY" else os.environ[k]
        print(f"  {k}={v}")
    if not keys:
        print("  (no WAITIO_* variables: a single-process instance)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
