#!/usr/bin/python3
"""Stacked per-core phase chart of one rank of an MoE dispatch or MoE layer run.

    python3 tools/plot_phases.py PROFILE.csv [--rank N|slowest] [--out FILE.png] [--title TEXT]

PROFILE.csv comes from `npusim run ... --profile PROFILE.csv` (one row per
rank/core: rank, core, start_ns, then one column per phase with the time the
phase ended). One bar per AIV core of the rank (48 on an A3 die), split into
its phases, so load imbalance and waiting show at a glance: a phase that ends
late on a few cores, or a barrier that everyone waits in. Default rank: the
slowest one (latest end). Needs matplotlib (Debian: apt-get install
python3-matplotlib). Exit codes: 0 ok, 2 bad input.
"""
import csv
import sys

from debian_deps import require
import tool_args

# One colour per phase name of the bundled kernels (others get the cycle).
COLOURS = {
    "addr": "#8c564b", "send": "#1f77b4", "sync_send": "#d62728", "status": "#ff7f0e",
    "wait": "#bcbd22", "sync_wait": "#e377c2", "cumsum": "#9467bd", "reorder": "#2ca02c",
    "bitmap": "#8c564b", "counts": "#ff7f0e",
    # The MoE layer (models/moe_layer.json): the wait for the expert GEMMs, then the Combine.
    "ready": "#7f7f7f", "experts": "#c7c7c7", "combine_watch": "#17becf", "combine_send": "#aec7e8",
    "combine_sync_send": "#ff9896", "combine_status": "#ffbb78", "combine_wait": "#dbdb8d",
    "combine_sync_wait": "#f7b6d2", "combine_sum": "#98df8a",
}


def fail(msg):
    print(f"plot_phases: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read_profile(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not rows or rows[0][:3] != ["rank", "core", "start_ns"]:
        fail(f"{path}: not a phase profile (expected a header 'rank,core,start_ns,...')")
    phases = rows[0][3:]
    data = {}
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(rows[0]):
            fail(f"{path}:{n}: expected {len(rows[0])} columns, got {len(row)}")
        try:
            rank, core, start = int(row[0]), int(row[1]), float(row[2])
            stamps = [float(x) if x else None for x in row[3:]]
        except ValueError:
            fail(f"{path}:{n}: expected numbers")
        data.setdefault(rank, {})[core] = (start, stamps)
    if not data:
        fail(f"{path}: no rows")
    return phases, data


def end_of(stamps):
    vals = [s for s in stamps if s is not None]
    return max(vals) if vals else 0.0


def main():
    ap = tool_args.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile")
    ap.add_argument("--rank", default="slowest", help="rank to draw, or 'slowest' (default)")
    ap.add_argument("--out", default="phases.png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    phases, data = read_profile(args.profile)
    if args.rank == "slowest":
        rank = max(data, key=lambda r: max(end_of(s) for _, s in data[r].values()))
    else:
        try:
            rank = int(args.rank)
        except ValueError:
            fail(f"--rank: expected an integer or 'slowest', got '{args.rank}'")
        if rank not in data:
            fail(f"--rank {rank}: the profile has ranks {min(data)}..{max(data)}")

    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot")

    cores = sorted(data[rank])
    fig, ax = plt.subplots(figsize=(12, 5.5))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn = set()
    for core in cores:
        start, stamps = data[rank][core]
        prev = start
        for i, (name, t) in enumerate(zip(phases, stamps)):
            if t is None:
                continue
            colour = COLOURS.get(name, cycle[i % len(cycle)])
            dur = (t - prev) / 1000.0
            ax.bar(core, dur, bottom=prev / 1000.0, color=colour, width=0.85,
                   label=name if name not in drawn else None, edgecolor="none")
            drawn.add(name)
            prev = t
    ends = [end_of(data[rank][c][1]) / 1000.0 for c in cores]
    ax.axhline(max(ends), color="black", linewidth=0.8, linestyle=":")
    ax.set_xlabel(f"AIV core of rank {rank}")
    ax.set_ylabel("time (us)")
    ax.set_xlim(-0.7, len(cores) - 0.3)
    ax.set_title(args.title or f"{args.profile}: rank {rank}, phase ends per core (last core done at {max(ends):.1f} us)")
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(p) for p in phases if p in labels]
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
              bbox_to_anchor=(1.0, 1.0), title="phase")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot_phases: rank {rank}, {len(cores)} cores -> {args.out}")


if __name__ == "__main__":
    main()
