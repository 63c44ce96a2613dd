#!/usr/bin/python3
"""Charts of a sweep folder (`npusim sweep STUDY.json --out DIR`).

    /usr/bin/python3 tools/plot_sweep.py DIR [--metric M]... [--kind auto|line|heatmap] [--x AXIS] [--out FILE.png]

Reads DIR/study.json (axes with their units, metrics) and DIR/results.jsonl,
and draws one panel per metric:

  line     x = the first axis (or --x), one line per combination of the other axes;
  heatmap  two axes: x = the first (or --x), y = the other, the metric as colour, values in the cells;
  auto     line (heatmap needs exactly two axes).

Axis labels carry units (from the configuration schema for study axes, from
the metric's name for metrics: *_cycles cycles, *_ns ns, utilization and
overlap as %). Failed points are left out and counted in the title.
Needs matplotlib (Debian: apt-get install python3-matplotlib). Exit codes:
0 ok, 2 bad input.
"""
import argparse
import difflib
import json
import math
import os
import sys

from debian_deps import require


def fail(msg):
    print(f"plot_sweep: error: {msg}", file=sys.stderr)
    sys.exit(2)


def is_fraction(metric):
    leaf = metric.rsplit(".", 1)[-1]
    return any(w in leaf for w in ("utilization", "overlap", "hit_rate", "fraction")) or metric.startswith("overlap.")


def metric_unit(metric):
    leaf = metric.rsplit(".", 1)[-1]
    if leaf.endswith("_cycles"):
        return "cycles"
    if leaf.endswith("_ns"):
        return "ns"
    if leaf.endswith("_ps"):
        return "ps"
    if leaf.endswith("_bytes"):
        return "bytes"
    if is_fraction(metric):
        return "%"
    return ""


def shown(metric, v):
    return v * 100.0 if is_fraction(metric) else v


def with_unit(name, unit):
    return f"{name} ({unit})" if unit else name


AXIS_PATHS = []  # set in main(): the sweep's axes, to keep short names unique


def tail(path, n):
    return ".".join(path.split(".")[-n:])


def short(path):
    """The last path segment, or the last two when another axis ends the same."""
    clash = any(p != path and tail(p, 1) == tail(path, 1) for p in AXIS_PATHS)
    return tail(path, 2 if clash else 1)


def text(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return v if isinstance(v, str) else json.dumps(v)


def load(folder):
    study_file = os.path.join(folder, "study.json")
    results_file = os.path.join(folder, "results.jsonl")
    if not os.path.isfile(study_file):
        fail(f"{study_file}: not found (is {folder} a sweep folder written by `npusim sweep`?)")
    try:
        with open(study_file, encoding="utf-8") as f:
            study = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{study_file}: {e}")
    rows = []
    if os.path.isfile(results_file):
        with open(results_file, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    print(f"plot_sweep: warning: {results_file}:{n}: unreadable line skipped", file=sys.stderr)
    return study, rows


def pick_axis(axes, name):
    for a in axes:
        if name in (a["path"], short(a["path"])):
            return a
    names = [a["path"] for a in axes]
    close = difflib.get_close_matches(name, names + [short(n) for n in names], n=1)
    fail(f"--x {name}: not an axis of this sweep" + (f" (did you mean '{close[0]}'?)" if close else "") +
         f"; axes: {', '.join(names)}")


def numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def log_base(values):
    """2 or 10 when the axis spans a factor of 8 or more (all positive), else None."""
    if not numeric(values) or min(values) <= 0 or max(values) / min(values) < 8:
        return None
    powers_of_two = all(math.log2(v).is_integer() for v in values)
    return 2 if powers_of_two else 10


def draw_line(ax, metric, rows, xa, others):
    from matplotlib.ticker import FuncFormatter, NullFormatter
    xs_all = xa["values"]
    num = numeric(xs_all)
    series = {}
    for r in rows:
        key = tuple(json.dumps(r["axes"].get(o["path"])) for o in others)
        series.setdefault(key, []).append(r)
    styles = ["-", "--", ":", "-."]
    for n, (key, pts) in enumerate(series.items()):
        if num:
            pts.sort(key=lambda r: r["axes"][xa["path"]])
            xs = [r["axes"][xa["path"]] for r in pts]
        else:
            order = [json.dumps(v) for v in xs_all]
            pts.sort(key=lambda r: order.index(json.dumps(r["axes"][xa["path"]])))
            xs = [order.index(json.dumps(r["axes"][xa["path"]])) for r in pts]
        ys = [shown(metric, r["metrics"][metric]) for r in pts]
        label = ", ".join(f"{short(o['path'])}={text(pts[0]['axes'].get(o['path']))}" for o in others) or metric
        # Line styles and shrinking markers keep coinciding series visible.
        ax.plot(xs, ys, marker="o", linestyle=styles[n % len(styles)], linewidth=1.8,
                markersize=max(3.0, 7.0 - 1.5 * n), label=label)
    base = log_base(xs_all)
    if num:
        if base:
            ax.set_xscale("log", base=base)
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(xs_all)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_xticks(range(len(xs_all)))
        ax.set_xticklabels([text(v) for v in xs_all])
    ax.set_xlabel(with_unit(xa["path"], xa.get("unit", "")) + (", log scale" if base else ""))
    ax.set_ylabel(with_unit(metric, metric_unit(metric)))
    ys = [shown(metric, r["metrics"][metric]) for r in rows]
    if ys and min(ys) >= 0 and min(ys) < 0.5 * max(ys):
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.6g}"))
    ax.grid(True, color="#e4e4e4", linewidth=0.8)
    if others:
        ax.legend(fontsize=8, frameon=False)


def draw_heatmap(fig, ax, metric, rows, xa, ya):
    np = require("numpy")
    xv, yv = xa["values"], ya["values"]
    grid = np.full((len(yv), len(xv)), np.nan)
    xi = {json.dumps(v): i for i, v in enumerate(xv)}
    yi = {json.dumps(v): i for i, v in enumerate(yv)}
    for r in rows:
        i = yi.get(json.dumps(r["axes"].get(ya["path"])))
        j = xi.get(json.dumps(r["axes"].get(xa["path"])))
        if i is not None and j is not None:
            grid[i, j] = shown(metric, r["metrics"][metric])
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xv)))
    ax.set_xticklabels([text(v) for v in xv])
    ax.set_yticks(range(len(yv)))
    ax.set_yticklabels([text(v) for v in yv])
    ax.set_xlabel(with_unit(xa["path"], xa.get("unit", "")))
    ax.set_ylabel(with_unit(ya["path"], ya.get("unit", "")))
    finite = grid[~np.isnan(grid)]
    lo, hi = (finite.min(), finite.max()) if finite.size else (0, 1)
    for i in range(len(yv)):
        for j in range(len(xv)):
            v = grid[i, j]
            t = 0.5 if hi == lo else (v - lo) / (hi - lo)
            label = "failed" if np.isnan(v) else (f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}")
            ax.text(j, i, label, ha="center", va="center", fontsize=8,
                    color="black" if (np.isnan(v) or t > 0.6) else "white")
    bar = fig.colorbar(im, ax=ax)
    bar.set_label(with_unit(metric, metric_unit(metric)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="sweep folder (npusim sweep --out DIR)")
    p.add_argument("--metric", action="append", help="metric to draw (repeatable; default: every metric of the study)")
    p.add_argument("--kind", choices=["auto", "line", "heatmap"], default="auto")
    p.add_argument("--x", help="axis on the x axis (path or last segment; default: the study's first axis)")
    p.add_argument("--out", help="PNG (or .svg/.pdf) to write (default: DIR/plot.png)")
    p.add_argument("--title", help="figure title (default: the study's name)")
    p.add_argument("--dpi", type=int, default=110)
    args = p.parse_args()

    study, rows = load(args.folder)
    axes = study.get("axes", [])
    AXIS_PATHS.extend(a["path"] for a in axes)
    if not axes:
        fail(f"{args.folder}/study.json: no axes")
    metrics = args.metric or study.get("metrics", [])
    for m in metrics:
        if m not in study.get("metrics", []):
            close = difflib.get_close_matches(m, study.get("metrics", []), n=1)
            fail(f"--metric {m}: not a metric of this sweep" + (f" (did you mean '{close[0]}'?)" if close else "") +
                 f"; metrics: {', '.join(study.get('metrics', []))}")
    xa = pick_axis(axes, args.x) if args.x else axes[0]
    others = [a for a in axes if a is not xa]
    kind = args.kind
    if kind == "auto":
        kind = "line"
    if kind == "heatmap" and len(axes) != 2:
        fail(f"--kind heatmap needs a sweep with exactly two axes; this one has {len(axes)}")

    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot")

    ok = [r for r in rows if r.get("status") == "ok"]
    failed = len(rows) - len(ok)
    n = len(metrics)
    cols = 1 if n == 1 else 2
    rows_n = math.ceil(n / cols)
    fig, grid = plt.subplots(rows_n, cols, figsize=(6.2 * cols, 4.2 * rows_n), squeeze=False)
    for k, m in enumerate(metrics):
        ax = grid[k // cols][k % cols]
        mrows = [r for r in ok if isinstance(r.get("metrics", {}).get(m), (int, float))]
        ax.set_title(with_unit(m, metric_unit(m)), fontsize=10)
        if not mrows:
            ax.text(0.5, 0.5, "no finished points", ha="center", va="center", transform=ax.transAxes)
            continue
        if kind == "heatmap":
            draw_heatmap(fig, ax, m, mrows, xa, others[0])
        else:
            draw_line(ax, m, mrows, xa, others)
    for k in range(n, rows_n * cols):
        grid[k // cols][k % cols].axis("off")
    title = args.title or study.get("name", "sweep")
    sub = f"{len(ok)} of {study.get('points', len(rows))} points"
    if failed:
        sub += f", {failed} failed (left out)"
    fig.suptitle(f"{title}  ({os.path.basename(study.get('workload', ''))} on {os.path.basename(study.get('chip', ''))}; {sub})",
                 fontsize=11)
    fig.tight_layout()
    out = args.out or os.path.join(args.folder, "plot.png")
    fig.savefig(out, dpi=args.dpi)
    print(f"plot_sweep: {kind} chart of {n} metric{'s' if n != 1 else ''} -> {out}")


if __name__ == "__main__":
    main()
