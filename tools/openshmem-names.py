#!/usr/bin/env python3
"""openshmem-names.py — every C routine name of OpenSHMEM 1.5, each with its section.

Why: "all of OpenSHMEM 1.5" must be checkable. The specification gives most routines as
synopses with placeholders (shmem_TYPENAME_put, shmem_putSIZE, a shmem_ctx_ form beside most
RMA/AMO/signal routines) and the types in tables; this script holds those synopsis names and
tables (names only, written from the 1.5 specification: chapter 9 and 10, the type tables of
sections 9.6, 9.7, 9.9.x reductions and the deprecated routines still in 1.5, annex F) and
expands them. Its output is committed as tests/data/openshmem-1.5-names.tsv (name<TAB>section);
tests/scripts/shmem_names.sh checks the library against that file and tools/shmem-coverage.sh
makes docs/one-sided.md's coverage table from it.

Decisions where the 1.5 text is not a plain table lookup:
  - point-to-point synchronization routines (wait_until, test and their _all/_any/_some and
    _vector forms) take the standard AMO types in 1.5 (12 types; the 1.4 table also had short
    and unsigned short: 1.5 deprecates those, so shmem_{short,ushort}_{wait_until,test} are
    listed as deprecated names still to be provided);
  - deprecated shmem_TYPENAME_wait: short, int, long, long long; shmem_wait and the long-typed
    shmem_wait_until also stay;
  - deprecated AMO names (shmem_TYPENAME_fetch ... _add, 1.4): fetch/set/swap on int, long,
    long long, float, double; cswap/finc/inc/fadd/add on int, long, long long;
  - shmem_team_ptr and shmem_finalized are 1.6 additions and are not listed; the Fortran API
    was removed in 1.5.
C11 type-generic names (shmem_put, shmem_atomic_fetch, ...) are macros, not symbols: they are
not in the list (--generics prints them).

Usage: tools/openshmem-names.py [--out FILE] [--count] [--generics] [--tex DIR]
  --out FILE   write the TSV there (default: stdout)
  --count      print the number of names per section instead
  --generics   print the C11 generic names of 1.5 instead
  --tex DIR    also read the specification's content/*.tex files copied into DIR, expand the
               C synopsis names found there (\\FuncDecl{...} inside Csynopsis blocks, with
               TYPENAME/SIZE placeholders) into templates and report any template that this
               script does not know (exit 1 if one is found)
"""
import argparse
import glob
import os
import re
import sys

# ---- type tables (TYPENAME lists) -------------------------------------------------------------
RMA = ["float", "double", "longdouble", "char", "schar", "short", "int", "long", "longlong",
       "uchar", "ushort", "uint", "ulong", "ulonglong", "int8", "int16", "int32", "int64",
       "uint8", "uint16", "uint32", "uint64", "size", "ptrdiff"]
AMO_STD = ["int", "long", "longlong", "uint", "ulong", "ulonglong", "int32", "int64", "uint32",
           "uint64", "size", "ptrdiff"]
AMO_EXT = ["float", "double"] + AMO_STD
AMO_BIT = ["uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64"]
P2P = AMO_STD
# team-based reductions (table "Reduction Types, Names, and Supporting Operations")
RED_BIT = ["uchar", "ushort", "uint", "ulong", "ulonglong", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64", "size"]
RED_MINMAX = (["char", "schar", "short", "int", "long", "longlong", "ptrdiff"] + RED_BIT
              + ["float", "double", "longdouble"])
RED_ARITH = RED_MINMAX + ["complexd", "complexf"]
# active-set-based reductions (deprecated shmem_TYPENAME_OP_to_all)
ASET_BIT = ["short", "int", "long", "longlong"]
ASET_MINMAX = ASET_BIT + ["float", "double", "longdouble"]
ASET_ARITH = ASET_MINMAX + ["complexd", "complexf"]
SIZES = ["8", "16", "32", "64", "128"]

S_SETUP = "9.1 Setup/query"
S_THREAD = "9.2 Thread support"
S_MEM = "9.3 Memory management"
S_TEAM = "9.4 Teams"
S_CTX = "9.5 Contexts"
S_RMA = "9.6 RMA"
S_AMO = "9.7 AMO"
S_SIG = "9.8 Signaling"
S_COLL = "9.9 Collectives"
S_P2P = "9.10 P2P sync"
S_ORD = "9.11 Memory ordering"
S_LOCK = "9.12 Locks"
S_CACHE = "9.13 Cache management"
S_PROF = "10 Profiling"
SECTIONS = [S_SETUP, S_THREAD, S_MEM, S_TEAM, S_CTX, S_RMA, S_AMO, S_SIG, S_COLL, S_P2P, S_ORD,
            S_LOCK, S_CACHE, S_PROF]

# ---- synopsis templates: (section, template, TYPENAME list or None, has a shmem_ctx_ form) ----
# A template is the synopsis name with TYPENAME and SIZE left in, as the specification writes it.
T = []


def add(section, names, types=None, ctx=False):
    for n in names.split():
        T.append((section, n, types, ctx))


add(S_SETUP, "shmem_init shmem_finalize shmem_my_pe shmem_n_pes shmem_pe_accessible "
             "shmem_addr_accessible shmem_ptr shmem_info_get_version shmem_info_get_name "
             "shmem_global_exit start_pes _my_pe _num_pes")
add(S_THREAD, "shmem_init_thread shmem_query_thread")
add(S_MEM, "shmem_malloc shmem_free shmem_realloc shmem_align shmem_malloc_with_hints "
           "shmem_calloc shmalloc shfree shrealloc shmemalign")
add(S_TEAM, "shmem_team_my_pe shmem_team_n_pes shmem_team_get_config shmem_team_translate_pe "
            "shmem_team_split_strided shmem_team_split_2d shmem_team_destroy")
add(S_CTX, "shmem_ctx_create shmem_team_create_ctx shmem_ctx_destroy shmem_ctx_get_team")
# 9.6 RMA
add(S_RMA, "shmem_TYPENAME_put shmem_TYPENAME_p shmem_TYPENAME_iput shmem_TYPENAME_get "
           "shmem_TYPENAME_g shmem_TYPENAME_iget shmem_TYPENAME_put_nbi shmem_TYPENAME_get_nbi",
    RMA, ctx=True)
add(S_RMA, "shmem_putSIZE shmem_iputSIZE shmem_getSIZE shmem_igetSIZE shmem_putSIZE_nbi "
           "shmem_getSIZE_nbi", SIZES, ctx=True)
add(S_RMA, "shmem_putmem shmem_getmem shmem_putmem_nbi shmem_getmem_nbi", ctx=True)
# 9.7 AMO
add(S_AMO, "shmem_TYPENAME_atomic_fetch shmem_TYPENAME_atomic_set shmem_TYPENAME_atomic_swap "
           "shmem_TYPENAME_atomic_fetch_nbi shmem_TYPENAME_atomic_swap_nbi", AMO_EXT, ctx=True)
add(S_AMO, "shmem_TYPENAME_atomic_compare_swap shmem_TYPENAME_atomic_fetch_inc "
           "shmem_TYPENAME_atomic_inc shmem_TYPENAME_atomic_fetch_add shmem_TYPENAME_atomic_add "
           "shmem_TYPENAME_atomic_compare_swap_nbi shmem_TYPENAME_atomic_fetch_inc_nbi "
           "shmem_TYPENAME_atomic_fetch_add_nbi", AMO_STD, ctx=True)
add(S_AMO, "shmem_TYPENAME_atomic_fetch_and shmem_TYPENAME_atomic_and "
           "shmem_TYPENAME_atomic_fetch_or shmem_TYPENAME_atomic_or "
           "shmem_TYPENAME_atomic_fetch_xor shmem_TYPENAME_atomic_xor "
           "shmem_TYPENAME_atomic_fetch_and_nbi shmem_TYPENAME_atomic_fetch_or_nbi "
           "shmem_TYPENAME_atomic_fetch_xor_nbi", AMO_BIT, ctx=True)
# deprecated since 1.4, still in 1.5
add(S_AMO, "shmem_TYPENAME_fetch shmem_TYPENAME_set shmem_TYPENAME_swap",
    ["int", "long", "longlong", "float", "double"])
add(S_AMO, "shmem_TYPENAME_cswap shmem_TYPENAME_finc shmem_TYPENAME_inc shmem_TYPENAME_fadd "
           "shmem_TYPENAME_add", ["int", "long", "longlong"])
# 9.8 Signaling
add(S_SIG, "shmem_TYPENAME_put_signal shmem_TYPENAME_put_signal_nbi", RMA, ctx=True)
add(S_SIG, "shmem_putSIZE_signal shmem_putSIZE_signal_nbi", SIZES, ctx=True)
add(S_SIG, "shmem_putmem_signal shmem_putmem_signal_nbi", ctx=True)
add(S_SIG, "shmem_signal_fetch")
# 9.9 Collectives (team-based, then the deprecated active-set-based forms)
add(S_COLL, "shmem_barrier_all shmem_barrier shmem_sync_all shmem_team_sync shmem_sync")
for coll in ("alltoall", "alltoalls", "broadcast", "collect", "fcollect"):
    add(S_COLL, "shmem_TYPENAME_%s" % coll, RMA)
    add(S_COLL, "shmem_%smem shmem_%s32 shmem_%s64" % (coll, coll, coll))
for op, team, aset in (("and", RED_BIT, ASET_BIT), ("or", RED_BIT, ASET_BIT),
                       ("xor", RED_BIT, ASET_BIT), ("max", RED_MINMAX, ASET_MINMAX),
                       ("min", RED_MINMAX, ASET_MINMAX), ("sum", RED_ARITH, ASET_ARITH),
                       ("prod", RED_ARITH, ASET_ARITH)):
    add(S_COLL, "shmem_TYPENAME_%s_reduce" % op, team)
    add(S_COLL, "shmem_TYPENAME_%s_to_all" % op, aset)
# 9.10 Point-to-point synchronization
add(S_P2P, " ".join("shmem_TYPENAME_%s%s" % (f, v) for f in ("wait_until", "test")
                    for v in ("", "_all", "_any", "_some", "_all_vector", "_any_vector",
                              "_some_vector")), P2P)
add(S_P2P, "shmem_TYPENAME_wait_until shmem_TYPENAME_test", ["short", "ushort"])  # deprecated
add(S_P2P, "shmem_TYPENAME_wait", ["short", "int", "long", "longlong"])  # deprecated
add(S_P2P, "shmem_wait shmem_wait_until shmem_signal_wait_until")
# 9.11 .. 9.13, 10
add(S_ORD, "shmem_fence shmem_quiet", ctx=True)
add(S_LOCK, "shmem_set_lock shmem_test_lock shmem_clear_lock")
add(S_CACHE, "shmem_clear_cache_inv shmem_set_cache_inv shmem_clear_cache_line_inv "
             "shmem_set_cache_line_inv shmem_udcflush shmem_udcflush_line")
add(S_PROF, "shmem_pcontrol")

# C11 type-generic selections of 1.5: name -> (section, also takes a context first)
GENERICS = {}
for g in ("put p iput get g iget put_nbi get_nbi").split():
    GENERICS["shmem_" + g] = (S_RMA, True)
for g in ("fetch set swap compare_swap fetch_inc inc fetch_add add fetch_and and fetch_or or "
          "fetch_xor xor fetch_nbi swap_nbi compare_swap_nbi fetch_inc_nbi fetch_add_nbi "
          "fetch_and_nbi fetch_or_nbi fetch_xor_nbi").split():
    GENERICS["shmem_atomic_" + g] = (S_AMO, True)
for g in "fetch set cswap swap finc inc fadd add".split():  # deprecated since 1.4
    GENERICS["shmem_" + g] = (S_AMO, False)
GENERICS["shmem_put_signal"] = GENERICS["shmem_put_signal_nbi"] = (S_SIG, True)
for g in ("alltoall alltoalls broadcast collect fcollect and_reduce or_reduce xor_reduce "
          "max_reduce min_reduce sum_reduce prod_reduce").split():
    GENERICS["shmem_" + g] = (S_COLL, False)
for f in ("wait_until", "test"):
    for v in ("", "_all", "_any", "_some", "_all_vector", "_any_vector", "_some_vector"):
        GENERICS["shmem_" + f + v] = (S_P2P, False)


# synopsis names of later versions that a copy of a newer content/*.tex may show: not in 1.5
LATER = {"shmem_team_ptr": "1.6", "shmem_finalized": "1.6", "shmem_ctx_set_team": "1.6",
         "shmem_ibget": "1.6", "shmem_ibput": "1.6"}


def expand(template, values):
    key = "TYPENAME" if "TYPENAME" in template else "SIZE"
    return [template.replace(key, v) for v in values]


def names():
    """[(name, section)] in section order, each name once."""
    out, seen = [], set()
    for section in SECTIONS:
        for sec, tpl, types, ctx in T:
            if sec != section:
                continue
            forms = [tpl] + ([tpl.replace("shmem_", "shmem_ctx_", 1)] if ctx else [])
            for form in forms:
                for n in (expand(form, types) if types else [form]):
                    if n in seen:
                        sys.exit("duplicate name %s" % n)
                    seen.add(n)
                    out.append((n, section))
    return out


def templates():
    """Every synopsis name this script knows, with its placeholders (ctx forms included)."""
    out = set()
    for _sec, tpl, _types, ctx in T:
        out.add(tpl)
        if ctx:
            out.add(tpl.replace("shmem_", "shmem_ctx_", 1))
    return out


DECL = re.compile(r"\\FuncDecl\{((?:[^{}]|\{[^{}]*\})*)\}")
CBLOCK = re.compile(r"\\begin\{Csynopsis(?:Col)?\}(.*?)\\end\{Csynopsis(?:Col)?\}", re.S)


def tex_templates(texdir):
    """Synopsis names of the C (not C11, not Fortran) synopsis blocks of DIR/*.tex."""
    found = {}
    for path in sorted(glob.glob(os.path.join(texdir, "*.tex"))):
        text = open(path, encoding="utf-8", errors="replace").read()
        for block in CBLOCK.findall(text):
            for raw in DECL.findall(block):
                n = raw.replace("\\FuncParam{TYPENAME}", "TYPENAME")
                n = n.replace("\\FuncParam{SIZE}", "SIZE").replace("\\_", "_")
                n = re.sub(r"[{}\s]", "", n)
                found.setdefault(n, os.path.basename(path))
            # older drafts: plain "TYPE shmem_<TYPENAME>_put(" lines without \FuncDecl
            for m in re.finditer(r"\b(shmem_[\w<>]+|start_pes|_my_pe|_num_pes|shmalloc|shfree|"
                                 r"shrealloc|shmemalign)\s*\(", block):
                n = m.group(1).replace("<TYPENAME>", "TYPENAME").replace("<SIZE>", "SIZE")
                found.setdefault(n, os.path.basename(path))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--count", action="store_true")
    ap.add_argument("--generics", action="store_true")
    ap.add_argument("--tex")
    a = ap.parse_args()
    rows = names()
    if a.tex:
        known = templates()
        found = tex_templates(a.tex)
        for n in sorted(set(found) & set(LATER)):
            print("later than 1.5, not listed: %s (%s, OpenSHMEM %s)" % (n, found[n], LATER[n]))
        unknown = {n: f for n, f in found.items() if n not in known and n not in LATER}
        for n, f in sorted(unknown.items()):
            print("not in this script: %s (%s)" % (n, f))
        print("%d synopsis names checked against %s" % (len(found), a.tex))
        return 1 if unknown else 0
    if a.generics:
        text = "".join("%s\t%s\t%s\n" % (g, s, "ctx" if c else "-")
                       for g, (s, c) in GENERICS.items())
    elif a.count:
        text = "".join("%s\t%d\n" % (s, sum(1 for _n, x in rows if x == s)) for s in SECTIONS)
        text += "total\t%d\n" % len(rows)
    else:
        text = "".join("%s\t%s\n" % r for r in rows)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
