#!/usr/bin/env python3
"""compare_report.py — turns bench/compare's raw results into performance.md and the plots.

Usage: compare_report.py DATADIR OUTDIR
DATADIR holds KIND.CONFIG.RUN.csv (waitio-bench/mpi_bench CSV rows, benchmark column = CONFIG),
KIND.CONFIG.err (why a configuration could not run) and `meta` (key=value lines); it is kept,
and summary.csv (median, min and max over the runs of every figure) is written into it. Writes
OUTDIR/performance.md and OUTDIR/img/{latency,bandwidth}.png (the plots are skipped, with a note
in the Markdown saying what to install, when matplotlib cannot be imported). Medians over the
runs with their spread (min-max: in the tables when the runs differ, as error bars in the plots);
nothing is invented: a missing figure is printed as "n/a" and the configuration's error is quoted.
"""
import csv
import glob
import os
import statistics
import sys

CONFIGS = {
    "waitio-shm": ("WaitIO shm", "2 PBs of 1 process, default transports (shared memory)",
                   "waitiorun -- waitio-bench MODE : -- waitio-bench MODE"),
    "waitio-tcp": ("WaitIO tcp", "2 PBs of 1 process, TCP only",
                   "WAITIO_TRANSPORTS=tcp waitiorun -- waitio-bench MODE : -- waitio-bench MODE"),
    "ompi-shm": ("Open MPI shm", "ranks 0 and 1 of one job, default (vader shared memory)",
                 "mpirun.openmpi --oversubscribe -np 2 mpi_bench MODE"),
    "ompi-tcp": ("Open MPI tcp", "ranks 0 and 1 of one job, TCP forced",
                 "mpirun.openmpi --oversubscribe --mca btl tcp,self --mca pml ob1 -np 2 mpi_bench MODE"),
    "mpich-shm": ("MPICH shm", "ranks 0 and 1 of one job, default (ch4 shared memory)",
                  "mpirun.mpich -np 2 mpi_bench MODE"),
    "ompi-connect": ("Open MPI connect/accept",
                     "two separately launched 1-rank jobs, MPI_Open_port / MPI_Comm_accept / "
                     "MPI_Comm_connect, intercommunicator (TCP: vader cannot reach another job)",
                     "ompi-server --no-daemonize --report-uri URI; then twice "
                     "mpirun.openmpi --ompi-server file:URI --bind-to none -np 1 mpi_bench "
                     "connect[-stream] --role accept|connect --port-file F"),
    "raw-tcp": ("raw TCP", "one 127.0.0.1 socket, TCP_NODELAY, receiver polls",
                "waitio-bench raw-pingpong / raw-stream (forks its peer)"),
    "raw-shm": ("raw shm", "the physical limit: bare shared memory between 2 processes, no library; "
                "per direction a ring of slots, a sequence word beside the data in one cache line, "
                "copied in, published, spun on, copied out",
                "waitio-bench rawshm-pingpong / rawshm-stream (forks its peer)"),
    "waitio-file-tmpfs": ("WaitIO file (tmpfs)", "2 PBs of 1 process, file transport only, the "
                          "shared directory in /dev/shm", "WAITIO_TRANSPORTS=file WAITIO_SCRATCH_DIR=/dev/shm/... "
                          "waitiorun -- waitio-bench MODE : -- waitio-bench MODE"),
    "waitio-file-disk": ("WaitIO file (disk)", "as above, the shared directory on the machine's disk "
                         "(ext4 on a virtual disk)", "WAITIO_TRANSPORTS=file WAITIO_SCRATCH_DIR=<build dir> ..."),
    "waitio-hybrid": ("WaitIO hybrid", "2 PBs of 1 process, WAITIO_COMM_TYPE=hybrid: shared memory, and "
                      "files (on disk) for the data of messages of 512 KiB and more",
                      "WAITIO_COMM_TYPE=hybrid WAITIO_SCRATCH_DIR=<build dir> waitiorun -- ..."),
    "waitio-ucx-tcp": ("WaitIO ucx (tcp)", "2 PBs of 1 process, the ucx transport, UCX's tcp over loopback",
                       "WAITIO_TRANSPORTS=ucx UCX_TLS=tcp UCX_NET_DEVICES=lo waitiorun -- waitio-bench MODE : -- ..."),
    "waitio-ucx-sm": ("WaitIO ucx (sm)", "2 PBs of 1 process, the ucx transport, UCX's shared-memory transports",
                      "WAITIO_TRANSPORTS=ucx UCX_TLS=sm,self waitiorun -- waitio-bench MODE : -- ..."),
    "ucx-perftest-tcp": ("ucx_perftest (tcp)", "UCX's own ping-pong (tag_lat: UCP tag API), server and client "
                         "on loopback, the same UCX_TLS; mean half round trip (\"overall\"); ping-pong only",
                         "UCX_TLS=tcp UCX_NET_DEVICES=lo ucx_perftest -p P & ucx_perftest 127.0.0.1 -p P "
                         "-t tag_lat -s BYTES -n ITERS -w 10 -f"),
    "ucx-perftest-sm": ("ucx_perftest (sm)", "as above with UCX's shared-memory transports",
                        "UCX_TLS=sm,self ucx_perftest -p P & ucx_perftest 127.0.0.1 -p P -t tag_lat ..."),
}
PAIR_CONFIGS = {
    "waitio-shm-1pb": ("WaitIO shm, 1 PB", "1 PB of 4 processes, rank r with r^1",
                       "waitiorun -- waitio-bench pairs --procs 4"),
    "waitio-shm-2pb": ("WaitIO shm, 2 PBs", "2 PBs of 2 processes, rank i of PB 0 with rank i of PB 1",
                       "waitiorun -- waitio-bench pairs --procs 2 : -- waitio-bench pairs --procs 2"),
    "waitio-tcp-2pb": ("WaitIO tcp, 2 PBs", "as above, TCP only",
                       "WAITIO_TRANSPORTS=tcp waitiorun -- waitio-bench pairs --procs 2 : -- ..."),
    "ompi-shm-adjacent": ("Open MPI, r^1", "one job of 4 ranks, rank r with r^1",
                          "mpirun.openmpi --oversubscribe -np 4 mpi_bench pairs --pairing adjacent"),
    "ompi-shm-half": ("Open MPI, r+N/2", "one job of 4 ranks, rank r with r+2",
                      "mpirun.openmpi --oversubscribe -np 4 mpi_bench pairs --pairing half"),
    "mpich-shm-adjacent": ("MPICH, r^1", "one job of 4 ranks, rank r with r^1",
                           "mpirun.mpich -np 4 mpi_bench pairs --pairing adjacent"),
    "mpich-shm-half": ("MPICH, r+N/2", "one job of 4 ranks, rank r with r+2",
                       "mpirun.mpich -np 4 mpi_bench pairs --pairing half"),
}
# (numerator, denominator): ratio tables; latency ratios < 1 and bandwidth ratios > 1 favour
# the numerator.
RATIOS = [("waitio-shm", "ompi-shm"), ("waitio-shm", "mpich-shm"), ("waitio-shm", "raw-shm"),
          ("waitio-shm", "ompi-connect"),
          ("waitio-shm", "waitio-tcp"), ("waitio-tcp", "raw-tcp"), ("waitio-tcp", "ompi-tcp"),
          ("waitio-file-tmpfs", "waitio-tcp"), ("waitio-file-disk", "waitio-tcp"),
          ("waitio-hybrid", "waitio-shm"),
          ("waitio-ucx-tcp", "ucx-perftest-tcp"), ("waitio-ucx-sm", "ucx-perftest-sm"),
          ("waitio-ucx-tcp", "waitio-tcp")]
PAIR_RATIOS = [("waitio-shm-1pb", "ompi-shm-adjacent"), ("waitio-shm-1pb", "mpich-shm-adjacent"),
               ("waitio-shm-2pb", "ompi-shm-half"), ("waitio-shm-2pb", "mpich-shm-half")]


def load(tmp):
    """{kind: {config: {bytes: [(half_us or None, max_us or None, mb_per_s, iterations)]}}}"""
    data = {}
    for path in glob.glob(os.path.join(tmp, "*.*.*.csv")):
        kind = os.path.basename(path).split(".")[0]
        if kind not in ("pingpong", "stream", "pairs") and not kind.startswith("goal-"):
            continue  # another report's CSVs in the same directory (compare-onesided's)
        names = ["benchmark", "bytes", "iterations", "pairs", "half_rtt_us", "max_half_rtt_us", "mb_per_s"]
        with open(path) as f:
            for row in csv.DictReader(f, fieldnames=names):
                half = float(row["half_rtt_us"]) if row["half_rtt_us"] else None
                mx = float(row["max_half_rtt_us"]) if row["max_half_rtt_us"] else None
                cell = data.setdefault(kind, {}).setdefault(row["benchmark"], {})
                cell.setdefault(int(row["bytes"]), []).append(
                    (half, mx, float(row["mb_per_s"]), int(row["iterations"])))
    return data


def errors(tmp):
    """{(kind, config): error text}"""
    out = {}
    for path in glob.glob(os.path.join(tmp, "*.*.err")):
        kind, config = os.path.basename(path)[:-4].split(".", 1)
        with open(path) as f:
            out[(kind, config)] = " ".join(line.strip() for line in f if line.strip())
    return out


def spread(cells, index):
    """(median, min, max) of column `index` over the runs, or None."""
    values = [c[index] for c in cells if c[index] is not None]
    return (statistics.median(values), min(values), max(values)) if values else None


def med(cell):
    return cell[0] if cell else None


def size_label(b):
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b} B"


def fmt(v, kind="us"):
    if v is None:
        return "n/a"
    if kind == "ratio":
        return f"{v:.2f}"
    if kind == "mbs":
        return f"{v:.2f}" if v < 10 else f"{v:.0f}"
    return f"{v:.2f}" if v < 1000 else f"{v:.0f}"


def fmt_cell(cell, kind):
    """median, and "(min–max)" after it when the runs differ in the printed digits."""
    if cell is None:
        return "n/a"
    m, lo, hi = (fmt(v, kind) for v in cell)
    return m if lo == hi else f"{m} ({lo}–{hi})"


def figures(data, kind, index):
    """{config: {bytes: (median, min, max)}} for column `index` (0 half-RTT, 1 max, 2 MB/s)."""
    return {c: {b: spread(cells, index) for b, cells in per.items()}
            for c, per in data.get(kind, {}).items()}


def medians(figs):
    return {c: {b: med(v) for b, v in per.items()} for c, per in figs.items()}


def write_summary(data, path):
    """summary.csv: one row per kind, configuration and size: runs, then median/min/max."""
    cols = (("half_rtt_us", 0), ("max_half_rtt_us", 1), ("mb_per_s", 2))
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kind", "config", "bytes", "runs"] +
                   [f"{n}_{s}" for n, _ in cols for s in ("median", "min", "max")])
        for kind in sorted(data):
            for config in sorted(data[kind]):
                for b in sorted(data[kind][config]):
                    cells = data[kind][config][b]
                    row = [kind, config, b, len(cells)]
                    for _, i in cols:
                        sp = spread(cells, i)
                        row += list(sp) if sp else ["", "", ""]
                    w.writerow(row)


def table(title, figs, configs, labels, unit, kind):
    sizes = sorted({b for c in configs for b in figs.get(c, {})})
    if not sizes:
        return [f"*{title}: no configuration produced figures.*", ""]
    cols = [c for c in configs if c in figs]
    lines = [f"**{title}**", "",
             "| size | " + " | ".join(f"{labels[c][0]} {unit}" for c in cols) + " |",
             "|---:" * (len(cols) + 1) + "|"]
    for b in sizes:
        lines.append(f"| {size_label(b)} | " + " | ".join(fmt_cell(figs[c].get(b), kind) for c in cols) + " |")
    return lines + [""]


def ratio_table(title, figs, pairs, labels, selected):
    usable = [(a, b) for a, b in pairs if a in figs and b in figs]
    missing = [(a, b) for a, b in pairs if (a, b) not in usable and a in selected and b in selected]
    sizes = sorted({s for a, b in usable for s in figs[a] if s in figs[b]})
    lines = [f"**{title}**", ""]
    if usable and sizes:
        lines += ["| size | " + " | ".join(f"{labels[a][0]} / {labels[b][0]}" for a, b in usable) + " |",
                  "|---:" * (len(usable) + 1) + "|"]
        for s in sizes:
            cells = []
            for a, b in usable:
                x, y = med(figs[a].get(s)), med(figs[b].get(s))
                cells.append(fmt(x / y if x is not None and y else None, "ratio"))
            lines.append(f"| {size_label(s)} | " + " | ".join(cells) + " |")
        lines.append("")
    for a, b in missing:
        lines.append(f"- {labels[a][0]} / {labels[b][0]}: not available (a configuration did not run).")
    if missing:
        lines.append("")
    return lines


# The goals of docs/benchmarks.md, measured in paired rounds (bench/compare's goal groups):
# (kind, WaitIO config, baseline config, figure, sizes, target, text). figure "lat": half round
# trip, ratio WaitIO / baseline, met when <= target; "bw": MB/s, ratio WaitIO / baseline, met
# when >= target. Sizes None: all the group measured.
GOALS = [
    ("goal-shm", "waitio-shm", "ompi-shm", "lat", [8, 16, 32, 64, 128, 256], 1.0,
     "shared memory half round trip ≤ 1.0x Open MPI"),
    ("goal-shm", "waitio-shm", "raw-shm", "lat", [8, 16, 32, 64, 128, 256], 3.0,
     "shared memory half round trip ≤ 3x raw shared memory"),
    ("goal-shm", "waitio-shm", "ompi-shm", "bw", [8 << 20], 1.2,
     "shared memory 8 MiB bandwidth ≥ 1.2x Open MPI"),
    ("goal-stream", "waitio-shm", "ompi-shm", "bw", [8, 16, 32, 64], 1.0,
     "streaming message rate ≥ 1.0x Open MPI"),
    ("goal-tcp", "waitio-tcp", "raw-tcp", "lat", [8], 1.1,
     "TCP 8 B half round trip ≤ 1.1x raw TCP"),
    ("goal-tcp", "waitio-tcp", "raw-tcp", "bw", [8 << 20], 1.0,
     "TCP 8 MiB bandwidth ≥ 1.0x raw TCP"),
    ("goal-ucx-tcp", "waitio-ucx-tcp", "ucx-perftest-tcp", "lat", [8], 1.1,
     "UCX tcp 8 B half round trip ≤ 1.1x ucx_perftest tag_lat"),
    ("goal-ucx-tcp", "waitio-ucx-tcp", "ucx-perftest-tcp", "bw", [8 << 20], 0.95,
     "UCX tcp 8 MiB ping-pong bandwidth ≥ 0.95x ucx_perftest tag_lat"),
    ("goal-ucx-sm", "waitio-ucx-sm", "ucx-perftest-sm", "lat", [8], 1.1,
     "UCX sm 8 B half round trip ≤ 1.1x ucx_perftest tag_lat"),
    ("goal-ucx-sm", "waitio-ucx-sm", "ucx-perftest-sm", "bw", [8 << 20], 0.95,
     "UCX sm 8 MiB ping-pong bandwidth ≥ 0.95x ucx_perftest tag_lat"),
    # not a goal: WaitIO over UCX's tcp beside WaitIO's own tcp transport (target 0: reported only)
    ("goal-ucx-tcp", "waitio-ucx-tcp", "waitio-tcp", "lat", [8], None,
     "for comparison: WaitIO ucx (tcp) 8 B half round trip / WaitIO tcp"),
    ("goal-ucx-tcp", "waitio-ucx-tcp", "waitio-tcp", "bw", [8 << 20], None,
     "for comparison: WaitIO ucx (tcp) 8 MiB bandwidth / WaitIO tcp"),
]


def load_rounds(tmp, kind):
    """{config: {run: {bytes: (half_us, mb_per_s)}}} of one goal kind, the rounds kept apart."""
    out = {}
    for path in glob.glob(os.path.join(tmp, f"{kind}.*.*.csv")):
        _, config, run, _ = os.path.basename(path).rsplit(".", 3)
        per = out.setdefault(config, {}).setdefault(int(run), {})
        with open(path) as f:
            for row in csv.reader(f):
                if len(row) >= 7 and row[1].isdigit():
                    per[int(row[1])] = (float(row[4]) if row[4] else None, float(row[6]))
    return out


def goals_section(tmp, meta, labels):
    """The goals table: per goal and size, the median (min-max) over the rounds of the ratio taken
    within each round, and in how many rounds WaitIO was ahead."""
    rounds = int(meta.get("goal_rounds", "0") or 0)
    if rounds == 0:
        return []
    L = ["## Goals, in paired rounds", "",
         f"{rounds} rounds; in each, the configurations a goal compares run back to back on the"
         " goal's sizes only (a few seconds each, order reversed every other round), and the ratio"
         " is taken within the round. This machine changes between a fast and a slow state within"
         " minutes, so the medians of whole runs above can set a run of one configuration in one"
         " state against a run of the other in the other; a ratio within a round cannot."
         f" Iteration counts: {meta.get('goal_scale', '?')}x the adapted ones, the same for both"
         " sides. Targets: [benchmarks.md](benchmarks.md#goals).", "",
         "| goal | size | WaitIO | baseline | ratio: median (min–max) | WaitIO ahead | met |",
         "|---|---:|---:|---:|---:|---:|:---:|"]
    for kind, mine, base, fig, sizes, target, text in GOALS:
        data = load_rounds(tmp, kind)
        if mine not in data or base not in data:
            L.append(f"| {text} | | | | not measured ({labels[mine][0]} or {labels[base][0]} did not run) | | |")
            continue
        col, unit = (0, "µs") if fig == "lat" else (1, "MB/s")
        for b in sizes:
            pairs = [(data[mine][r][b][col], data[base][r][b][col]) for r in sorted(data[mine])
                     if r in data[base] and b in data[mine][r] and b in data[base][r]
                     and data[mine][r][b][col] and data[base][r][b][col]]
            if not pairs:
                L.append(f"| {text} | {size_label(b)} | n/a | n/a | n/a | | |")
                continue
            ratios = [m / o for m, o in pairs]
            med_ratio = statistics.median(ratios)
            ahead = sum(1 for r in ratios if (r < 1 if fig == "lat" else r > 1))
            met = None if target is None else med_ratio <= target if fig == "lat" else med_ratio >= target
            mine_med = statistics.median(m for m, _ in pairs)
            base_med = statistics.median(o for _, o in pairs)
            kindfmt = "us" if fig == "lat" else "mbs"
            L.append(f"| {text} | {size_label(b)} | {fmt(mine_med, kindfmt)} {unit} | {fmt(base_med, kindfmt)} {unit} | "
                     f"{med_ratio:.2f} ({min(ratios):.2f}–{max(ratios):.2f}) | {ahead}/{len(ratios)} | "
                     f"{'–' if met is None else 'yes' if met else '**no**'} |")
    return L + ["", "Collectives (2 PBs x 4 against one MPI job of 8): `bench/run-collectives.sh`,"
                " [benchmarks.md](benchmarks.md#collectives).", ""]


def iterations_note(data):
    """One line on the iteration counts (they are the same for every configuration)."""
    per = {}
    for kind, confs in data.items():
        for c, sizes in confs.items():
            for b, cells in sizes.items():
                per.setdefault((kind, b), set()).add(cells[0][3])
    mismatched = sorted({k for k, v in per.items() if len(v) > 1})
    if mismatched:
        return f"Iteration counts differ between configurations for {mismatched} (should not happen)."
    return "Every configuration ran the same iteration counts per size (the CSV's iterations column)."


def errorbar(ax, per, label):
    """One line of medians with min-max error bars."""
    xs = sorted(b for b in per if per[b] is not None)
    ys = [per[b][0] for b in xs]
    err = [[per[b][0] - per[b][1] for b in xs], [per[b][2] - per[b][0] for b in xs]]
    ax.errorbar(xs, ys, yerr=err, marker="o", markersize=3, capsize=2, elinewidth=0.8, label=label)


def plot(data, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return (f"Plots skipped: matplotlib cannot be imported ({e}); "
                "`scripts/install-deps.sh --bench` installs it.")
    lat = figures(data, "pingpong", 0)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for c in CONFIGS:
        if c in lat:
            errorbar(ax, lat[c], CONFIGS[c][0])
    ax.set(xscale="log", yscale="log", xlabel="message size (bytes)", ylabel="half round trip (µs)",
           title="Ping-pong latency, 2 processes on this host (lower is better)\n"
                 "median of the runs, bars: min–max")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "img", "latency.png"), dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, kind, title in ((axes[0], "pingpong", "ping-pong"), (axes[1], "stream", "streaming, window 16")):
        bw = figures(data, kind, 2)
        for c in CONFIGS:
            if c in bw:
                errorbar(ax, bw[c], CONFIGS[c][0])
        ax.set(xscale="log", yscale="log", xlabel="message size (bytes)", title=f"Bandwidth, {title} (bars: min–max of the runs)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("MB/s (10^6 B/s, higher is better)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "img", "bandwidth.png"), dpi=110)
    plt.close(fig)
    return None


def main():
    tmp, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(tmp, "meta")) as f:
        meta = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    data, errs = load(tmp), errors(tmp)
    write_summary(data, os.path.join(tmp, "summary.csv"))
    data_rel = os.path.relpath(tmp, out)
    selected = set(meta.get("configs", " ".join(list(CONFIGS) + list(PAIR_CONFIGS))).split())
    labels = {**CONFIGS, **PAIR_CONFIGS}
    pp_lat, pp_bw = figures(data, "pingpong", 0), figures(data, "pingpong", 2)
    st_bw = figures(data, "stream", 2)
    pr_lat, pr_max, pr_bw = figures(data, "pairs", 0), figures(data, "pairs", 1), figures(data, "pairs", 2)
    plot_note = plot(data, out)
    L = ["# Performance: WaitIO beside MPI and raw sockets", "",
         "<!-- generated by bench/compare; do not edit by hand: run it again -->", "",
         f"Generated by `{meta['cmdline']}` on {meta['started']} ({meta['elapsed']} s of measurements).",
         "How each configuration is launched and what is measured: [benchmarks.md](benchmarks.md#benchmark-compare).",
         "",
         f"- machine: `{meta['host']}`, {meta['cores']} cores ({meta['cpu']}), {meta['kernel']}",
         f"- Open MPI: {meta['ompi']}; MPICH: {meta['mpich']}; UCX: {meta.get('ucx', 'n/a')}; WaitIO: `{meta['waitio']}`",
         f"- medians of {meta['runs']} run(s), with the spread over the runs as (min–max) where the"
         " runs differ (error bars in the plots); configurations interleaved inside every run",
         f"- raw figures: [`{data_rel}/`]({data_rel}/) (one CSV per pattern, configuration and run;"
         " `summary.csv`: median, min and max of every figure)",
         "- ratios are ratios of the medians; the goals are judged at the end of the page, in paired"
         " rounds ([Goals, in paired rounds](#goals-in-paired-rounds)): this machine changes state"
         " within minutes, and the medians of whole runs can set a run of one configuration in one"
         " state against a run of another in the other",
         f"- {iterations_note(data)} Multi-pair runs use {meta['pair_scale']}x the adapted counts "
         f"({2 * int(meta['pair_procs'])} processes on {meta['cores']} cores).",
         "- data checked byte by byte on the first and the last exchange of every size, on every side;"
         " a configuration that failed prints no figure",
         "- half-RTT: half round trip in µs; MB/s: 10^6 bytes per second; ratios of latency below 1"
         " and ratios of bandwidth above 1 favour the first configuration", ""]
    L += ["## Configurations", "", "| name | what | launched as |", "|---|---|---|"]
    L += [f"| {v[0]} | {v[1]} | `{v[2]}` |" for c, v in CONFIGS.items() if c in selected]
    L += [""]
    if errs:
        L += ["## Unavailable", ""]
        L += [f"- {kind} / {labels.get(c, (c,))[0]}: {text}" for (kind, c), text in sorted(errs.items())]
        L += [""]
    L += ["## Ping-pong (2 processes)", ""]
    if plot_note:
        L += [plot_note, ""]
    else:
        L += ["![latency](img/latency.png)", "", "![bandwidth](img/bandwidth.png)", ""]
    L += table("Half round trip", pp_lat, CONFIGS, labels, "µs", "us")
    L += table("Bandwidth (size / half round trip)", pp_bw, CONFIGS, labels, "MB/s", "mbs")
    L += ratio_table("Latency ratios (half round trip)", pp_lat, RATIOS, labels, selected)
    L += ratio_table("Bandwidth ratios", pp_bw, RATIOS, labels, selected)
    L += ["## Streaming (window of 16 messages in flight, 1-byte ack per window)", ""]
    L += table("Bandwidth", st_bw, CONFIGS, labels, "MB/s", "mbs")
    L += ratio_table("Bandwidth ratios", st_bw, RATIOS, labels, selected)
    L += ["## All pairs at once", "",
          "Every process ping-pongs with its partner at the same time (start synchronised per size);"
          " latency: mean half round trip over the pairs (max: the slowest pair); bandwidth: sum"
          " over the pairs.", "",
          "| name | what | launched as |", "|---|---|---|"]
    L += [f"| {v[0]} | {v[1]} | `{v[2]}` |" for c, v in PAIR_CONFIGS.items() if c in selected]
    L += [""]
    L += table("Mean half round trip", pr_lat, PAIR_CONFIGS, labels, "µs", "us")
    L += table("Slowest pair's half round trip", pr_max, PAIR_CONFIGS, labels, "µs", "us")
    L += table("Aggregate bandwidth", pr_bw, PAIR_CONFIGS, labels, "MB/s", "mbs")
    L += ratio_table("Latency ratios (mean half round trip)", pr_lat, PAIR_RATIOS, labels, selected)
    L += ratio_table("Aggregate bandwidth ratios", pr_bw, PAIR_RATIOS, labels, selected)
    L += goals_section(tmp, meta, labels)
    with open(os.path.join(out, "performance.md"), "w") as f:
        f.write("\n".join(L).rstrip() + "\n")


if __name__ == "__main__":
    main()
