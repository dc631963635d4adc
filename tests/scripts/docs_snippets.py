#!/usr/bin/env python3
"""docs_snippets.py OUTDIR FILE.md... — extracts the ```c and ```fortran blocks of the given
Markdown files for tests/scripts/docs_snippets.sh (which documents the marker convention).
Writes OUTDIR/NNN.c|.f|.f90 and prints one manifest line per block:
    NNN <TAB> lang <TAB> kind <TAB> options <TAB> file:line
kind is program, fragment or skip; an unmarked block is printed with kind "unmarked" (an error
for the caller). Fragments are wrapped here into compilable units."""
import os
import re
import sys

MARK = re.compile(r"<!--\s*snippet:\s*(program|fragment|skip)\b(.*?)-->", re.S)
FENCE = re.compile(r"^```(\w+)\s*$")


def options(text):
    """'pbs=2 mpi=openmpi form=fixed prelude: int x;' -> dict (prelude: the rest of the text)"""
    opts = {}
    if "prelude:" in text:
        text, opts["prelude"] = text.split("prelude:", 1)
        opts["prelude"] = opts["prelude"].strip()
    for word in text.split():
        if "=" in word:
            k, v = word.split("=", 1)
            opts[k] = v
    return opts


def wrap_c(body, opts):
    return ("#include \"waitio_mpi.h\"\n"
            "void snippet(void);\n"
            "void snippet(void)\n{\n"
            + "".join("    " + l + "\n" for l in opts.get("prelude", "").split("\n") if l.strip())
            + body + "}\n")


def wrap_fortran(body, opts):
    fixed = opts.get("form", "free") == "fixed"
    ind = "      " if fixed else ""
    pre = "".join(ind + l.strip() + "\n" for l in opts.get("prelude", "").split(";") if l.strip())
    # declarations in the fragment must come before the prelude's statements: the prelude holds
    # only declarations and is put after the fragment's include/use lines
    lines = body.splitlines(keepends=True)
    head = [l for l in lines if re.match(r"\s*(include|use)\b", l, re.I)]
    rest = [l for l in lines if l not in head]
    return ind + "program snippet\n" + "".join(head) + pre + "".join(rest) + ind + "end program snippet\n"


def main():
    out = sys.argv[1]
    n = 0
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            text = f.read().split("\n")
        i = 0
        while i < len(text):
            m = FENCE.match(text[i])
            if not m:
                i += 1
                continue
            lang, start = m.group(1), i
            j = i + 1
            while j < len(text) and not text[j].startswith("```"):
                j += 1
            body = "".join(l + "\n" for l in text[i + 1:j])
            i = j + 1
            if lang not in ("c", "fortran"):
                continue
            # the marker: the closest HTML comment above the fence, blank lines allowed between
            k = start - 1
            while k >= 0 and not text[k].strip():
                k -= 1
            above = "\n".join(text[max(0, k - 5):k + 1])
            mm = MARK.search(above) if k >= 0 and text[k].strip().endswith("-->") else None
            n += 1
            name = "%03d" % n
            where = "%s:%d" % (path, start + 1)
            if not mm:
                print("\t".join([name, lang, "unmarked", "-", where]))
                continue
            kind, opts = mm.group(1), options(mm.group(2))
            if kind == "skip" and not mm.group(2).strip().startswith("because"):
                print("\t".join([name, lang, "skip-without-reason", "-", where]))
                continue
            if lang == "c":
                ext = ".c"
                src = body if kind == "program" else wrap_c(body, opts)
            else:
                ext = ".f" if opts.get("form") == "fixed" else ".f90"
                src = body if kind == "program" else wrap_fortran(body, opts)
            with open(os.path.join(out, name + ext), "w", encoding="utf-8") as f:
                f.write(src)
            optstr = " ".join("%s=%s" % (k, v) for k, v in opts.items() if k != "prelude")
            print("\t".join([name + ext, lang, kind, optstr or "-", where]))


if __name__ == "__main__":
    main()
