#!/usr/bin/env python3
"""gen-mpi-world-wrappers.py — generates the MPMD world wrappers of one MPI adapter.

In a one-job MPMD launch (`mpiexec -np 2 ./A : -np 1 ./B`, docs/launcher.md, "MPMD: what
MPI_COMM_WORLD means") the adapter makes MPI_COMM_WORLD mean the program's own processes, through
the MPI profiling interface: every MPI routine that takes a communicator by value gets a wrapper
that replaces the world handle with the program's communicator and calls the PMPI_ routine.
The wrappers depend on the MPI (its routines, its Fortran libraries), so they are generated at
build time, once per adapter, from that MPI's own files (adapters/CMakeLists.txt):

  C        the prototypes of the preprocessed <mpi.h> (`MPICC -E`): every PMPI_X with an MPI_Comm
           parameter (by value) whose MPI_X is declared and is not a macro;
  Fortran  the Fortran bindings do not all reach the C layer through MPI_X (Open MPI's mpif.h,
           `use mpi` and mpi_f08 call PMPI_X; MPICH's mpi_f08 too), so the Fortran entry points
           are wrapped as well: every mpi_x_, mpi_x_f08_, mpi_x_f08ts_ (and _large_) symbol that
           the Fortran libraries of MPIFC export, for a C routine above. Each is forwarded to the
           next definition of the same symbol (dlsym RTLD_NEXT, resolved once in the adapter's
           constructor); the world's Fortran handle is replaced by the program's. A Fortran
           argument list is the C one, by reference, + ierror, + one hidden length (size_t, at
           the end) per character argument — except MPI_Init/MPI_Init_thread (no argc/argv).

Per routine, what happens to a world argument (POLICY below):
  translate (default)  replaced by the program's communicator;
  keep                 passed as is (MPI_Abort: the whole job ends; MPI_Comm_c2f: a Fortran
                       world handle then translates in the Fortran wrappers);
  attr                 the predefined attributes (MPI_TAG_UB, MPI_APPNUM, ...) exist on the real
                       world only: those keys read it, user keys the program's communicator;
  both                 error handlers: set on the real world too, where errors that belong to no
                       communicator are raised.
  init                 MPI_Init/MPI_Init_thread (and Fortran's): after MPI's, the adapter builds
                       the program's communicator (wio_world_start, adapters/mpi/mpi_world.c).

Usage: tools/gen-mpi-world-wrappers.py --cc MPICC [--fc MPIFC] --out FILE
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

POLICY = {
    "MPI_Abort": "keep",
    "MPI_Comm_c2f": "keep",
    "MPI_Comm_get_attr": "attr",
    "MPI_Attr_get": "attr",
    "MPI_Comm_set_errhandler": "both",
    "MPI_Errhandler_set": "both",
}
INIT = {"MPI_Init": 1, "MPI_Init_thread": 3}  # routine -> Fortran argument count (with ierror)
FORTRAN_SUFFIX = re.compile(r"^(mpix?_[a-z0-9_]*?[a-z0-9])(_f08(?:ts)?)?(_large)?_$")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def strip_attributes(text):
    """The text without its __attribute__((...)) (balanced parentheses). Routines an MPI has
    removed are macros there (Open MPI), so the attributes themselves need not be read."""
    out, i = [], 0
    while True:
        j = text.find("__attribute__", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("(", j)
        depth = 0
        while k < len(text):
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def split_params(plist):
    params, depth, cur = [], 0, []
    for ch in plist:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            params.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last and last != "void":
        params.append(last)
    return [" ".join(p.split()) for p in params]


def param_name(p, index):
    """(declaration with a name, name): MPI headers name their parameters; unnamed ones get aN."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)  # function pointer
    if m:
        return p, m.group(1)
    m = re.match(r"^(.*?)(\w+)\s*((?:\[[^\]]*\]\s*)*)$", p)
    base_types = {"int", "char", "void", "double", "float", "long", "short", "unsigned", "const"}
    if m and m.group(2) not in base_types and not m.group(2).startswith("MPI_") \
            and (m.group(1).strip() or m.group(3)):
        return p, m.group(2)
    name = f"a{index}"
    if "[" in p:
        k = p.index("[")
        return f"{p[:k]} {name}{p[k:]}", name
    return f"{p} {name}", name


def parse_prototypes(pre):
    """{name: (return type, [params])} for every P?MPIX?_ routine declared in preprocessed text."""
    text = strip_attributes(pre)
    protos = {}
    for m in re.finditer(r"([;}{]|^)\s*((?:extern\s+)?[A-Za-z_][\w\s\*]*?)\b(P?MPIX?_\w+)\s*\(", text):
        rtype, name = " ".join(m.group(2).replace("extern", "").split()), m.group(3)
        k, depth = m.end(), 1
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        if not text[k:].lstrip().startswith(";") or not rtype or "typedef" in rtype:
            continue
        protos[name] = (rtype, split_params(text[m.end():k - 1]))
    return protos


def is_comm_value(p):
    return re.match(r"^(const\s+)?MPI_Comm\s+\w+$", p) is not None


def is_char(p):
    return re.search(r"\bchar\b", p) is not None


def c_wrapper(name, rtype, params):
    named = [param_name(p, i) for i, p in enumerate(params)]
    # a world argument is replaced in place: no const on it
    decls = [re.sub(r"^const\s+", "", d) if is_comm_value(p) else d for (d, _), p in zip(named, params)]
    names = [n for _, n in named]
    comms = [n for (d, n), p in zip(named, params) if is_comm_value(p)]
    policy = POLICY.get(name, "translate")
    call = f"P{name}({', '.join(names)})"
    body = []
    if policy == "translate":
        body += [f"    WIO_WORLD_C({c});" for c in comms]
    elif policy == "attr":
        key = next(n for n in names if "keyval" in n)
        body.append(f"    if ({comms[0]} == MPI_COMM_WORLD && !wio_world_predefined_key({key}))")
        body.append(f"        {comms[0]} = wio_world_comm;")
    elif policy == "both":
        body.append(f"    if ({comms[0]} == MPI_COMM_WORLD && wio_world_comm != MPI_COMM_WORLD) {{")
        body.append(f"        int rc = {call};")
        body.append("        if (rc != MPI_SUCCESS)")
        body.append("            return rc;")
        body.append(f"        {comms[0]} = wio_world_comm;")
        body.append("    }")
    return f"{rtype} {name}({', '.join(decls) or 'void'})\n{{\n" + "\n".join(body) + \
        ("\n" if body else "") + f"    return {call};\n}}\n"


def fortran_wrapper(sym, cname, params):
    """The wrapper of Fortran entry point sym for C routine cname (params: its C parameters)."""
    policy = POLICY.get(cname, "translate")
    if cname in INIT:
        args = [("void *", f"a{i}", False) for i in range(INIT[cname])]
    else:
        args = [("MPI_Fint *" if is_comm_value(p) else "void *", f"a{i}", is_comm_value(p))
                for i, p in enumerate(params)]
        args.append(("void *", "ierr", False))
        args += [("size_t", f"len{i}", False) for i, p in enumerate(params) if is_char(p)]
    decl = ", ".join(f"{t}{'' if t.endswith('*') else ' '}{n}" for t, n, _ in args)
    types = ", ".join(t for t, _, _ in args)
    names = ", ".join(n for _, n, _ in args)
    ptr = f"next_{sym}"
    comms = [n for _, n, c in args if c]
    body = []
    if cname in INIT:
        body = [f"    {ptr}({names});", "    wio_world_start();"]
    elif policy == "translate":
        body = [f"    WIO_WORLD_F({c});" for c in comms] + [f"    {ptr}({names});"]
    elif policy == "attr":
        key = next(f"a{i}" for i, p in enumerate(params) if "keyval" in param_name(p, i)[1])
        body = [f"    if (*{comms[0]} == wio_world_f && !wio_world_predefined_key((int)*(MPI_Fint *){key}))",
                f"        {comms[0]} = &wio_app_f;", f"    {ptr}({names});"]
    elif policy == "both":
        body = [f"    if (*{comms[0]} == wio_world_f) {{", f"        {ptr}({names});",
                f"        {comms[0]} = &wio_app_f;", "    }", f"    {ptr}({names});"]
    else:
        body = [f"    {ptr}({names});"]
    return (f"static void (*{ptr})({types});\n"
            f"void {sym}({decl});\n"
            f"void {sym}({decl})\n{{\n" + "\n".join(body) + "\n}\n")


def fortran_symbols(fc, workdir):
    """Symbols exported by the shared libraries a program linked with MPIFC depends on."""
    src = os.path.join(workdir, "probe.f90")
    exe = os.path.join(workdir, "probe")
    with open(src, "w") as f:
        f.write("program probe\n  include 'mpif.h'\n  integer ierr\n  call mpi_finalize(ierr)\nend program\n")
    try:
        run([fc, "-Wl,--no-as-needed", src, "-o", exe], cwd=workdir)
    except (subprocess.CalledProcessError, OSError) as e:
        # a wrapper whose compiler is missing or broken (an Open MPI with mpifort but no
        # gfortran): the MPI has no usable Fortran, so there is nothing to wrap
        print(f"gen-mpi-world-wrappers: {fc} cannot build a Fortran program ({e}); no Fortran wrappers",
              file=sys.stderr)
        return set()
    libs = re.findall(r"=>\s*(\S+)\s+\(", run(["ldd", exe]))
    syms = set()
    for lib in libs:
        if "mpi" not in os.path.basename(lib).lower():
            continue
        for line in run(["nm", "-D", "--defined-only", lib]).splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TW":
                syms.add(parts[2])
    return syms


def generate(cc, fc):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "h.c")
        with open(src, "w") as f:
            f.write("#include <mpi.h>\n")
        pre = run([cc, "-E", "-P", src])
        macros = set(re.findall(r"#define\s+(\w+)", run([cc, "-E", "-dM", src])))
        fsyms = fortran_symbols(fc, tmp) if fc else set()
    protos = parse_prototypes(pre)
    routines = {}
    for name, (rtype, params) in sorted(protos.items()):
        if name.startswith("P") or "P" + name not in protos or name in macros or "P" + name in macros:
            continue
        if name in INIT or any(is_comm_value(p) for p in params):
            routines[name] = (rtype, params)
    lower = {n.lower(): n for n in routines}
    out = ["/* Generated by tools/gen-mpi-world-wrappers.py from the <mpi.h> of " + os.path.basename(cc)
           + (" and the Fortran libraries of " + os.path.basename(fc) if fc else "")
           + ": do not edit. */",
           "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"",
           "#include \"mpi_world.h\"", ""]
    ncw = 0
    for name, (rtype, params) in routines.items():
        if name in INIT or POLICY.get(name) == "keep":
            continue
        out.append(c_wrapper(name, rtype, params))
        ncw += 1
    fortran = []
    for sym in sorted(fsyms):
        m = FORTRAN_SUFFIX.match(sym)
        if not m:
            continue
        cname = lower.get(m.group(1) + ("_c" if m.group(3) else ""))
        if not cname or POLICY.get(cname) == "keep":
            continue
        out.append(fortran_wrapper(sym, cname, routines[cname][1]))
        fortran.append(sym)
    out.append("void wio_world_resolve_fortran(void)\n{")
    out += [f"    WIO_NEXT(next_{s}, \"{s}\");" for s in fortran]
    out.append("}")
    out.append(f"/* {ncw} C wrappers, {len(fortran)} Fortran wrappers */")
    return "\n".join(out) + "\n", ncw, len(fortran)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", required=True, help="the MPI's C compiler wrapper")
    ap.add_argument("--fc", help="the MPI's Fortran compiler wrapper (none: no Fortran wrappers)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    text, ncw, nfw = generate(a.cc, a.fc)
    if ncw < 50:
        sys.exit(f"gen-mpi-world-wrappers: only {ncw} routines with a communicator found in "
                 f"{a.cc}'s <mpi.h>: the header was not understood")
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
