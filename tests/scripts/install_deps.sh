#!/usr/bin/env bash
# install_deps.sh — scripts/install-deps.sh installs for each use what that use needs, and picks
# release-dependent package names from the archive. Run against a stand-in system: a PATH with
# only basic tools and stubs of apt-get (records what it is asked to install), apt-cache (knows a
# given set of packages), dpkg-query (nothing installed), id (root) and a clang 15 without
# libFuzzer. Nothing is installed for real. Checked:
#   --demo installs the MPIs, compilers and gfortran but no clang/valgrind; --test adds clang's
#   libFuzzer package for the clang found (libclang-common-15-dev when the archive has no
#   libclang-rt-15-dev: no Debian-12-only pin), valgrind and iproute2; --bench adds
#   python3-matplotlib and ucx-utils (ucx_perftest) only; --test Slurm and munge (slurm_jobs);
#   every mode installs libucx-dev (the
#   optional ucx transport), --test ucx-utils too; scripts/demo.sh and scripts/test.sh call it with --demo / --test.
# timeout: 30
set -uo pipefail
source "$(dirname "$0")/lib.sh"
script=$WAITIO_SOURCE_DIR/scripts/install-deps.sh
stub=$T_DIR/bin
mkdir -p "$stub"
for tool in bash sh grep sed cut cat env; do
  ln -s "$(command -v "$tool")" "$stub/$tool" || t_fail "no $tool"
done
cat >"$stub/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$T_DIR/apt.log"
EOF
cat >"$stub/apt-cache" <<EOF
#!/bin/sh
# show PKG: known only if listed in \$T_DIR/archive
[ "\$1" = show ] && grep -qx "\$2" "$T_DIR/archive"
EOF
printf '#!/bin/sh\nexit 1\n' >"$stub/dpkg-query"
printf '#!/bin/sh\necho 0\n' >"$stub/id"
cat >"$stub/clang" <<'EOF'
#!/bin/sh
case "$*" in
  *-dumpversion*) echo 15.0.7 ;;
  *fuzzer*) exit 1 ;;
esac
EOF
chmod +x "$stub"/*
printf '%s\n' libclang-common-15-dev >"$T_DIR/archive"

run_mode() { # run_mode NAME ARGS...: the packages install-deps asks apt-get for, one per line
  local name=$1
  shift
  : >"$T_DIR/apt.log"
  env -i PATH="$stub" HOME="$T_DIR" bash "$script" "$@" >"$T_DIR/$name.out" 2>&1 \
    || { cat "$T_DIR/$name.out"; t_fail "install-deps.sh $* failed"; }
  grep '^apt-get install' "$T_DIR/apt.log" | tr ' ' '\n' | grep -v '^-\|^apt-get$\|^install$' | sort -u \
    >"$T_DIR/$name.pkgs"
}
has() { grep -qx "$2" "$T_DIR/$1.pkgs" || t_fail "install-deps.sh --$1 does not install $2 (it installs: $(tr '\n' ' ' <"$T_DIR/$1.pkgs"))"; }
hasnt() { ! grep -qx "$2" "$T_DIR/$1.pkgs" || t_fail "install-deps.sh --$1 installs $2, which it does not need"; }

run_mode demo --demo
for p in gcc cmake pkg-config libssl-dev libopenmpi-dev openmpi-bin libmpich-dev mpich gfortran python3; do has demo "$p"; done
for p in valgrind iproute2 python3-matplotlib libclang-common-15-dev slurmd munge; do hasnt demo "$p"; done
grep -q 'apt-get update' "$T_DIR/apt.log" || t_fail "no apt-get update before installing"

run_mode test --test
for p in gcc libmpich-dev gfortran valgrind iproute2 python3-pip libclang-common-15-dev libucx-dev ucx-utils \
  slurmctld slurmd slurm-client munge; do has test "$p"; done
grep -q 'libclang-rt' "$T_DIR/test.pkgs" && t_fail "--test asked for a libclang-rt package the archive lacks"
hasnt test python3-matplotlib
printf '%s\n' libclang-rt-15-dev libclang-common-15-dev >"$T_DIR/archive"
run_mode test2 --test
has test2 libclang-rt-15-dev

run_mode bench --bench
for p in python3-matplotlib libopenmpi-dev libucx-dev ucx-utils; do has bench "$p"; done
for p in valgrind gfortran libclang-common-15-dev; do hasnt bench "$p"; done

run_mode build
has build cmake
has build libucx-dev
hasnt build ucx-utils
hasnt build gfortran
hasnt build valgrind

grep -q 'install-deps.sh --demo' "$WAITIO_SOURCE_DIR/scripts/demo.sh" || t_fail "scripts/demo.sh does not call install-deps.sh --demo"
grep -q 'install-deps.sh --test' "$WAITIO_SOURCE_DIR/scripts/test.sh" || t_fail "scripts/test.sh does not call install-deps.sh --test"
t_pass "--demo, --test (libFuzzer package by clang version and archive), --bench and the default install what each needs"
