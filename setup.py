"""Builds the waitio._core extension from the C library's own sources (one self-contained
module: no separately installed libwaitio is needed). Needs OpenSSL's libcrypto headers."""
import glob
import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
sources = ["python/waitio/_core.c"]
for layer in ("core", "boot", "transport", "coll", "mpi", "rma"):
    # without the ucx transport (the extension does not link UCX) and without the link-line
    # helper of the original's build names (it refers to an MPI adapter)
    sources += sorted(os.path.relpath(p, here) for p in glob.glob(os.path.join(here, "src", layer, "*.c"))
                      if not os.path.basename(p).startswith("ucx") and
                      os.path.basename(p) != "compat_adapter_ref.c")

setup(
    # keep setuptools' intermediate files apart from the CMake build tree
    options={"build": {"build_base": "build/python"}},
    ext_modules=[
        Extension(
            "waitio._core",
            sources=sources,
            depends=["python/waitio/_core_rma.c"],  # included by _core.c
            include_dirs=["include", "src"],
            define_macros=[("_GNU_SOURCE", None)],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                                "-Wno-cast-function-type"],
            libraries=["crypto"],
        )
    ]
)
