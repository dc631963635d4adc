"""The console scripts ``waitiorun`` and ``waitio-info`` of a pip installation (pyproject.toml,
[project.scripts]): each replaces this Python process with the C program of that name, which
setup.py builds with the extension into the package's ``bin/`` directory beside it — the same
programs a CMake installation puts into its bin/ (docs/python.md). The process is replaced, not
a child started, so that signals (Ctrl-C to waitiorun) and the exit status are the program's own.
"""
import os
import sys
from typing import NoReturn


def tool_path(name: str) -> str:
    """Where the C program ``name`` of this installation is."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)


def _exec(name: str) -> NoReturn:
    path = tool_path(name)
    if not os.access(path, os.X_OK):
        sys.stderr.write(f"{name}: {path} is missing: this waitio package was installed without its C "
                         f"tools (reinstall it with pip from the source tree or the sdist)\n")
        raise SystemExit(127)
    try:
        os.execv(path, [name] + sys.argv[1:])
    except OSError as exc:
        sys.stderr.write(f"{name}: cannot run {path}: {exc}\n")
        raise SystemExit(126) from None


def waitiorun() -> NoReturn:
    """``waitiorun``: couples programs into one WaitIO instance (docs/launcher.md)."""
    _exec("waitiorun")


def waitio_info() -> NoReturn:
    """``waitio-info``: version, transports, network interfaces and effective settings."""
    _exec("waitio-info")
