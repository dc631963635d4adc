"""Builds the waitio._core extension from the C library's own sources (one self-contained
module: no separately installed libwaitio is needed). Needs OpenSSL's libcrypto headers."""
import glob
import os
import re

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

here = os.path.dirname(os.path.abspath(__file__))
sources = ["python/waitio/_core.c"]
for layer in ("core", "boot", "transport", "coll", "mpi", "rma", "gpu"):  # gpu: CUDA loaded at run time
    # without the ucx transport (the extension does not link UCX) and without the link-line
    # helper of the original's build names (it refers to an MPI adapter)
    sources += sorted(os.path.relpath(p, here) for p in glob.glob(os.path.join(here, "src", layer, "*.c"))
                      if not os.path.basename(p).startswith("ucx") and
                      os.path.basename(p) != "compat_adapter_ref.c")

# The version: include/waitio_version.h, the one place it is written (CMake reads it too).
def project_version():
    with open(os.path.join(here, "include", "waitio_version.h")) as f:
        text = f.read()
    parts = [re.search(r"#define WAITIO_VERSION_%s (\d+)" % k, text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise SystemExit("setup.py: include/waitio_version.h lacks WAITIO_VERSION_MAJOR/MINOR/PATCH")
    return [m.group(1) for m in parts]


version_parts = project_version()

# The C tools behind the console scripts waitiorun and waitio-info (waitio/_tools.py runs them):
# built after the extension, with its compiler, flags and include path, into the package's bin/
# beside it (so they travel in the wheel), as tools/CMakeLists.txt builds them: waitio-info links
# the library's objects compiled for the extension; waitiorun only the settings registry,
# compiled alone. (name, sources, extra macros, links the library)
TOOLS = (("waitiorun", ["tools/waitiorun.c", "src/core/settings.c"], [("WIO_SETTINGS_STANDALONE", None)], False),
         ("waitio-info", ["tools/waitio_info.c"], [], True))


class build_ext_and_tools(build_ext):
    def run(self):
        super().run()
        ext = self.extensions[0]
        args = dict(macros=ext.define_macros, include_dirs=ext.include_dirs,
                    extra_postargs=ext.extra_compile_args)
        library = [s for s in ext.sources if s.startswith("src" + os.sep)]
        library_objects = self.compiler.object_filenames(library, output_dir=self.build_temp)
        if not all(os.path.exists(o) for o in library_objects):  # the extension was up to date
            library_objects = self.compiler.compile(library, output_dir=self.build_temp, **args)
        bin_dir = os.path.join(os.path.dirname(self.get_ext_fullpath(ext.name)), "bin")
        os.makedirs(bin_dir, exist_ok=True)
        for name, tool_sources, macros, with_library in TOOLS:
            objects = self.compiler.compile(tool_sources, output_dir=os.path.join(self.build_temp, "tools", name),
                                            **dict(args, macros=ext.define_macros + macros))
            self.compiler.link_executable(objects + (library_objects if with_library else []), name,
                                          output_dir=bin_dir,
                                          libraries=ext.libraries + ["pthread"] if with_library else [])


setup(
    version=".".join(version_parts),
    # keep setuptools' intermediate files apart from the CMake build tree
    options={"build": {"build_base": "build/python"}},
    cmdclass={"build_ext": build_ext_and_tools},
    ext_modules=[
        Extension(
            "waitio._core",
            sources=sources,
            depends=["python/waitio/_core_rma.c", "python/waitio/_core_dev.c"],  # included by _core.c
            include_dirs=["include", "src"],
            define_macros=[("_GNU_SOURCE", None)],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                                "-Wno-cast-function-type"],
            libraries=["crypto", "dl"],  # dl: the CUDA driver, loaded at run time (src/gpu/cuda.c)
        )
    ]
)
