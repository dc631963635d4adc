"""``python -m waitio.info``: prints WaitIO's build and runtime settings as this Python sees them:
the version, the transports compiled into the extension (the library's own table, in its order of
preference), where the extension and the C tools of the installation are, and the WAITIO_*
variables set. The full report of the effective settings is the ``waitio-info`` tool's."""
import os
import sys

from . import _core, _tools

_WHAT = {"shm": "processes of one host", "tcp": "any", "file": "a directory the PBs share",
         "ucx": "InfiniBand, RoCE (UCX)"}


def main() -> int:
    info = _core.build_info()
    print(f"WaitIO {info['version']} (Python binding, {sys.implementation.name} "
          f"{sys.version.split()[0]})")
    names = [t for t in info["transports"].split(",") if t]
    print("transports: " + ", ".join(f"{t} ({_WHAT.get(t, 'built in')})" for t in names))
    if "ucx" not in names:
        print("  (ucx is not built into the Python extension: WAITIO_TRANSPORTS=ucx is refused here)")
    chosen = os.environ.get("WAITIO_TRANSPORTS")
    if chosen:
        print(f"  WAITIO_TRANSPORTS={chosen} selects among them")
    print(f"extension: {_core.__file__}")
    tools = [n for n in ("waitiorun", "waitio-info") if os.access(_tools.tool_path(n), os.X_OK)]
    if tools:
        print(f"C tools: {', '.join(tools)} in {os.path.dirname(_tools.tool_path(tools[0]))} "
              f"(console scripts of the same names; waitio-info: every effective setting)")
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
