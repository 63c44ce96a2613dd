#!/usr/bin/python3
"""Charts of a sweep folder (`npusim sweep STUDY.json --out DIR`).

    /usr/bin/python3 tools/plot_sweep.py DIR [--metric M]... [--kind auto|line|heatmap] [--x AXIS] [--y AXIS]
        [--fix AXIS=VALUE]... [--facet AXIS] [--speedup-vs AXIS=VALUE[,AXIS=VALUE...]] [--table] [--out FILE.png]

Reads DIR/study.json (axes with their units, metrics) and DIR/results.jsonl,
and draws one panel per metric (with --facet, one per metric and value):

  line     x = the first free axis (or --x), one line per combination of the other free axes;
  heatmap  x = the first free axis (or --x), y = the next (or --y), the metric as colour, values in
           the cells; every other axis must be fixed or faceted;
  auto     line.

An axis is free unless --fix or --facet names it or it has a single value.

  --fix AXIS=VALUE        keep only the points where AXIS has VALUE (repeatable)
  --facet AXIS            one panel per value of AXIS, titled `AXIS = value` (rows: metrics,
                          columns: the values; with one metric, up to four columns)
  --speedup-vs AXIS=VALUE[,AXIS=VALUE...]
                          draw the speed-up against a base point, with a line at 1: base / value for
                          time-like metrics (*_cycles, *_ns, *_ps, total_*), value / base for the others.
                          Axes left out are the plotted point's own (so each line or panel has its
                          own base); the x axis, and a heat map's y axis, must be given
  --table                 also print what is drawn to stdout, one tab-separated line per point:
                          metric, panel, series (the legend label), x, y (as drawn: % for fractions,
                          the ratio with --speedup-vs); the summary line then goes to stderr

AXIS is the axis's path (`chip.cores.cube.count`) or any suffix of it that
names one axis (`cube.count`); VALUE is compared with the axis's values as
stored (numbers numerically: 4 = 4.0). Legends and axis labels name an axis
by its shortest suffix of at least two segments that no other axis ends with
(`cube.count=12`, `hbm.bandwidth_gbps`), never a bare `count`. Lines that
coincide stay visible: each has its own marker, line style and width (drawn
thickest first) and a small horizontal offset.

Axis labels carry units (from the configuration schema for study axes, from
the metric's name for metrics: *_cycles cycles, *_ns ns, utilization and
overlap as %). Failed points are left out and counted in the title.
Needs matplotlib (Debian: apt-get install python3-matplotlib). Exit codes:
0 ok, 2 bad input (one line on stderr: `plot_sweep: error: ...`).
"""
import difflib
import itertools
import json
import math
import os
import sys
import textwrap
from types import SimpleNamespace

from debian_deps import require
import tool_args


def fail(msg):
    print(f"plot_sweep: error: {msg}", file=sys.stderr)
    sys.exit(2)


def is_fraction(metric):
    leaf = metric.rsplit(".", 1)[-1]
    return any(w in leaf for w in ("utilization", "overlap", "hit_rate", "fraction")) or metric.startswith("overlap.")


def is_time(metric):
    """Smaller is better: the speed-up is base / value."""
    leaf = metric.rsplit(".", 1)[-1]
    return leaf.endswith(("_cycles", "_ns", "_ps")) or leaf.startswith("total_")


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


AXIS_PATHS = []  # set in main(): the sweep's axes, to keep labels unique


def tail(path, n):
    return ".".join(path.split(".")[-n:])


def suffixes(path):
    """`a.b.c` -> c, b.c, a.b.c: the names an axis answers to."""
    n = len(path.split("."))
    return [tail(path, k) for k in range(1, n + 1)]


def label(path):
    """The shortest suffix of at least two segments that no other axis ends with.

    Two segments at least because a bare leaf (`count=12`) does not say whose
    count it is, even when the sweep has only one."""
    for s in suffixes(path)[1:] or [path]:
        if not any(p != path and s in suffixes(p) for p in AXIS_PATHS):
            return s
    return path


def text(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return v if isinstance(v, str) else json.dumps(v)


def numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def vkey(v):
    """A hashable key of an axis value; numbers by value, so 400 and 400.0 are one value."""
    return float(v) if numeric([v]) else json.dumps(v, sort_keys=True)


def describe(assign):
    return ", ".join(f"{label(p)}={text(v)}" for p, v in assign.items())


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


# ---- naming axes and values on the command line -------------------------------------------------

def pick_axis(axes, name, option):
    """The one axis whose path ends with `name` (whole segments), or exit 2 with a did-you-mean."""
    found = [a for a in axes if name in suffixes(a["path"])]
    if len(found) == 1:
        return found[0]
    if found:
        fail(f"{option}: '{name}' names {len(found)} axes ({', '.join(a['path'] for a in found)}); give more of the path")
    # Suggest names as long as the one typed: `cube.cont` -> `cube.count`, not the full path.
    depth = name.count(".")
    names = [s for a in axes for s in suffixes(a["path"]) if s.count(".") == depth] or [a["path"] for a in axes]
    close = difflib.get_close_matches(name, names, n=1)
    fail(f"{option}: not an axis of this sweep" + (f" (did you mean '{close[0]}'?)" if close else "") +
         f"; axes: {', '.join(a['path'] for a in axes)}")


def same_value(stored, given):
    """Whether command-line text names a stored axis value: numbers numerically, else as JSON or plain text."""
    try:
        parsed = json.loads(given)
    except ValueError:
        parsed = given
    if numeric([stored]) and numeric([parsed]):
        return float(stored) == float(parsed)
    if isinstance(stored, bool) != isinstance(parsed, bool):  # 1 == True in Python, not in a study
        return False
    return parsed == stored or stored == given


def pick_value(axis, given, option):
    for v in axis["values"]:
        if same_value(v, given):
            return v
    texts = [text(v) for v in axis["values"]]
    close = difflib.get_close_matches(given, texts, n=1)
    fail(f"{option}: {axis['path']} has no value {given}" + (f" (did you mean {close[0]}?)" if close else "") +
         f"; its values: {', '.join(texts)}")


def assignments(axes, specs, option):
    """AXIS=VALUE texts -> {path: the stored value}, each axis at most once."""
    out = {}
    for spec in specs:
        name, eq, value = spec.partition("=")
        where = f"{option} {spec}"
        if not eq or not name.strip() or not value.strip():
            fail(f"{where}: expected AXIS=VALUE")
        a = pick_axis(axes, name.strip(), where)
        if a["path"] in out:
            fail(f"{where}: {label(a['path'])} is given twice")
        out[a["path"]] = pick_value(a, value.strip(), where)
    return out


def split_base(spec):
    """`cube.count=2,hbm.bandwidth_gbps=400` -> its parts; a comma inside a value (a JSON list) stays in it."""
    parts = []
    for piece in spec.split(","):
        if "=" in piece or not parts:
            parts.append(piece)
        else:
            parts[-1] += "," + piece
    return parts


# ---- what goes where ---------------------------------------------------------------------------

def choose(axes, name, option, taken, candidates):
    """The axis named by --x/--y, or the first candidate."""
    if name:
        a = pick_axis(axes, name, f"{option} {name}")
        if a["path"] in taken:
            fail(f"{option} {name}: {label(a['path'])} is {taken[a['path']]}; it cannot also be drawn along {option[2:]}")
        return a
    return candidates[0] if candidates else None


def plan_roles(args, axes):
    """Which axis is x, y (heat map), faceted, fixed, and which ones tell the lines apart."""
    fixed = assignments(axes, args.fix or [], "--fix")
    facet = pick_axis(axes, args.facet, f"--facet {args.facet}") if args.facet else None
    if facet and facet["path"] in fixed:
        fail(f"--facet {args.facet}: {label(facet['path'])} is also fixed with --fix")
    taken = {p: "fixed with --fix" for p in fixed}
    if facet:
        taken[facet["path"]] = "faceted with --facet"
    # Single-valued axes are as good as fixed; they come last as defaults for x and y.
    open_ = [a for a in axes if a["path"] not in taken]
    free_first = [a for a in open_ if len(a["values"]) > 1] + [a for a in open_ if len(a["values"]) <= 1]
    xa = choose(axes, args.x, "--x", taken, free_first)
    if xa is None:
        fail("every axis is fixed or faceted: nothing is left for the x axis")
    kind = "line" if args.kind == "auto" else args.kind
    ya = None
    if kind == "heatmap":
        ya = choose(axes, args.y, "--y", taken, [a for a in free_first if a is not xa])
        if ya is None:
            fail("--kind heatmap needs two axes that are neither fixed nor faceted")
        if ya is xa:
            fail(f"--y {args.y}: {label(ya['path'])} is already the x axis")
    drawn = [a for a in (xa, ya) if a]
    rest = [a for a in open_ if a not in drawn and len(a["values"]) > 1]
    if kind == "heatmap" and rest:
        fail(heatmap_hint(xa, ya, rest))
    return SimpleNamespace(kind=kind, xa=xa, ya=ya, facet=facet, fixed=fixed, lines=rest,
                           single=[a for a in open_ if a not in drawn and len(a["values"]) <= 1])


def heatmap_hint(xa, ya, rest):
    first = rest[0]
    what = "; ".join(f"{label(a['path'])} ({', '.join(text(v) for v in a['values'])})" for a in rest)
    return (f"--kind heatmap draws two axes (x: {label(xa['path'])}, y: {label(ya['path'])}); fix or facet the "
            f"others: {what}, e.g. --fix {label(first['path'])}={text(first['values'][0])} "
            f"or --facet {label(first['path'])}")


# ---- speed-up against a base point ---------------------------------------------------------------

def speedup_base(args, axes, plan, ok):
    """A function row -> its base row, or None without --speedup-vs.

    Axes left out of the base take the point's own value, so a line (or panel)
    is compared with its own base; the axes that vary along a line (x) or a
    heat map (x and y) must be given, else the base is not one point."""
    if not args.speedup_vs:
        return None
    raw = f"--speedup-vs {args.speedup_vs}"
    base = assignments(axes, split_base(args.speedup_vs), "--speedup-vs")
    scope = "line" if plan.kind == "line" else "heat-map panel"
    for a in (plan.xa, plan.ya):
        if a and a["path"] not in base and len(a["values"]) > 1:
            fail(f"{raw}: ambiguous: each {scope} has a point for every {label(a['path'])} "
                 f"({', '.join(text(v) for v in a['values'])}); add {label(a['path'])}=VALUE")
    paths = [a["path"] for a in axes]
    index = {tuple(vkey(r["axes"].get(p)) for p in paths): r for r in ok}

    def base_of(row):
        want = {p: base[p] if p in base else row["axes"].get(p) for p in paths}
        b = index.get(tuple(vkey(v) for v in want.values()))
        if b is None:
            fail(f"{raw}: no finished point at {describe(want)} (the base of {describe(row['axes'])})")
        return b
    return SimpleNamespace(of=base_of, text=describe(base), whole=len(base) == len(paths))


def measure(metric, row, base):
    """The y value drawn for a row: the metric as shown, or its speed-up against the row's base."""
    v = row["metrics"][metric]
    if base is None:
        return shown(metric, v)
    b = base.of(row)["metrics"].get(metric)
    if not isinstance(b, (int, float)):
        fail(f"--speedup-vs {base.text}: the base point has no {metric}")
    num, den = (b, v) if is_time(metric) else (v, b)
    return num / den if den else float("nan")


# ---- the data of each panel --------------------------------------------------------------------

def group_axes(plan):
    return [plan.ya] if plan.kind == "heatmap" else plan.lines


def series_order(plan):
    """Series key -> its index over the whole figure, so a series keeps its style in every panel."""
    combos = itertools.product(*[[vkey(v) for v in a["values"]] for a in group_axes(plan)])
    return {key: i for i, key in enumerate(combos)}


def panel_series(metric, rows, plan, base, order):
    """The series of one panel, in index order: {index, label, points [(x value, y)] sorted along x}."""
    groups = group_axes(plan)
    xpos = {vkey(v): i for i, v in enumerate(plan.xa["values"])}
    out = {}
    for r in rows:
        m = r.get("metrics", {}).get(metric)
        if not isinstance(m, (int, float)) or isinstance(m, bool):
            continue
        key = tuple(vkey(r["axes"].get(a["path"])) for a in groups)
        s = out.setdefault(key, SimpleNamespace(index=order.get(key, len(order)), points=[],
                                                label=", ".join(f"{label(a['path'])}={text(r['axes'].get(a['path']))}"
                                                                for a in groups) or metric))
        s.points.append((r["axes"].get(plan.xa["path"]), measure(metric, r, base)))
    for s in out.values():
        s.points.sort(key=lambda p: xpos.get(vkey(p[0]), len(xpos)))
    return sorted(out.values(), key=lambda s: s.index)


def build_panels(metrics, rows, plan, base):
    """[(metric, facet value or None, series)] in drawing order: metric by metric, facet value by value."""
    order = series_order(plan)
    facet_values = plan.facet["values"] if plan.facet else [None]
    panels = []
    for m in metrics:
        for fv in facet_values:
            keep = rows if fv is None else [r for r in rows if vkey(r["axes"].get(plan.facet["path"])) == vkey(fv)]
            panels.append((m, fv, panel_series(m, keep, plan, base, order)))
    return panels


def print_table(panels, plan):
    print(f"# metric\tpanel\tseries\t{label(plan.xa['path'])}\tvalue")
    for metric, fv, series in panels:
        panel = f"{label(plan.facet['path'])}={text(fv)}" if plan.facet else "-"
        for s in series:
            for x, y in s.points:
                print(f"{metric}\t{panel}\t{s.label}\t{text(x)}\t{y!r}")


# ---- drawing -----------------------------------------------------------------------------------

MARKERS = "osD^vPX*<>"
LINE_STYLES = ["-", "--", "-.", ":"]


def log_base(values):
    """2 or 10 when the axis spans a factor of 8 or more (all positive), else None."""
    if not numeric(values) or min(values) <= 0 or max(values) / min(values) < 8:
        return None
    powers_of_two = all(math.log2(v).is_integer() for v in values)
    return 2 if powers_of_two else 10


def nudge(xa, n_series):
    """A function (x position, series index) -> position shifted by up to ±3% of the narrowest gap
    between x values (in log space on a log axis), so a line lying on another still shows."""
    base = log_base(xa["values"])
    fwd = (lambda v: math.log(v, base)) if base else (lambda v: v)
    back = (lambda t: base ** t) if base else (lambda t: t)
    pos = sorted({fwd(float(v)) for v in xa["values"]}) if numeric(xa["values"]) else list(range(len(xa["values"])))
    gap = min((b - a for a, b in zip(pos, pos[1:])), default=1.0)
    step = 0.06 * gap / max(n_series - 1, 1)
    return lambda x, i: back(fwd(x) + (i - (n_series - 1) / 2) * step)


def y_title(metric, base):
    # The base point itself is in the figure's title: in the y label it would not fit.
    return f"{metric} speed-up (×)" if base else with_unit(metric, metric_unit(metric))


def draw_line(ax, metric, series, plan, base, n_series, legend):
    from matplotlib.ticker import FuncFormatter, NullFormatter
    xa = plan.xa
    num = numeric(xa["values"])
    index = {vkey(v): i for i, v in enumerate(xa["values"])}
    shift = nudge(xa, n_series)
    for s in series:
        i = s.index
        xs = [shift(float(x) if num else index[vkey(x)], i) for x, _ in s.points]
        # Thickest first, each later line thinner and on top, with its own marker and dash.
        ax.plot(xs, [y for _, y in s.points], color=f"C{i % 10}", marker=MARKERS[i % len(MARKERS)],
                linestyle=LINE_STYLES[i % len(LINE_STYLES)], linewidth=max(0.9, 3.0 - 0.45 * i),
                markersize=max(3.5, 8.5 - 1.0 * i), label=s.label, zorder=2 + i)
    scale = log_base(xa["values"])
    if num:
        if scale:
            ax.set_xscale("log", base=scale)
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(xa["values"])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_xticks(range(len(xa["values"])))
        ax.set_xticklabels([text(v) for v in xa["values"]])
    ax.set_xlabel(with_unit(label(xa["path"]), xa.get("unit", "")) + (", log scale" if scale else ""))
    ax.set_ylabel(y_title(metric, base), fontsize=9)
    ys = [y for s in series for _, y in s.points if not math.isnan(y)]
    if base:
        ax.axhline(1.0, color="#888888", linewidth=1.0, linestyle=(0, (4, 3)), zorder=1)
    elif ys and min(ys) >= 0 and min(ys) < 0.5 * max(ys):
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.6g}"))
    ax.grid(True, color="#e4e4e4", linewidth=0.8)
    if legend and group_axes(plan):
        ax.legend(fontsize=8, frameon=False)


def draw_heatmap(fig, ax, metric, series, plan, base, vrange):
    np = require("numpy")
    xa, ya = plan.xa, plan.ya
    xv, yv = xa["values"], ya["values"]
    grid = np.full((len(yv), len(xv)), np.nan)
    xi = {vkey(v): i for i, v in enumerate(xv)}
    for s in series:
        i = s.index  # the series of a heat map are its rows, indexed by the y value
        for x, y in s.points:
            grid[i, xi[vkey(x)]] = y
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", vmin=vrange[0], vmax=vrange[1])
    ax.set_xticks(range(len(xv)))
    ax.set_xticklabels([text(v) for v in xv])
    ax.set_yticks(range(len(yv)))
    ax.set_yticklabels([text(v) for v in yv])
    ax.set_xlabel(with_unit(label(xa["path"]), xa.get("unit", "")))
    ax.set_ylabel(with_unit(label(ya["path"]), ya.get("unit", "")))
    lo, hi = vrange
    for i in range(len(yv)):
        for j in range(len(xv)):
            v = grid[i, j]
            t = 0.5 if hi == lo else (v - lo) / (hi - lo)
            cell = "failed" if np.isnan(v) else (f"{v:.3g}×" if base else f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}")
            ax.text(j, i, cell, ha="center", va="center", fontsize=8,
                    color="black" if (np.isnan(v) or t > 0.6) else "white")
    bar = fig.colorbar(im, ax=ax)
    bar.set_label(y_title(metric, base), fontsize=8)


def layout(n_metrics, n_facets, faceted):
    """(rows, columns, place): place(k, f) is the (row, column) of metric k, facet value f."""
    if not faceted:  # metrics side by side, two to a row
        cols = 1 if n_metrics == 1 else 2
        return math.ceil(n_metrics / cols), cols, lambda k, f: divmod(k, cols)
    if n_metrics == 1:  # one metric: its facet values wrap after four columns
        cols = min(n_facets, 4)
        return math.ceil(n_facets / cols), cols, lambda k, f: divmod(f, cols)
    return n_metrics, n_facets, lambda k, f: (k, f)


def heat_range(panels, metric):
    """One colour scale for all panels of a metric, so facets compare by colour."""
    ys = [y for m, _, series in panels if m == metric for s in series for _, y in s.points if not math.isnan(y)]
    return (min(ys), max(ys)) if ys else (0, 1)


def draw(panels, metrics, plan, base, fig_title):
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot")
    n_facets = len(plan.facet["values"]) if plan.facet else 1
    rows_n, cols, place = layout(len(metrics), n_facets, bool(plan.facet))
    fig, grid = plt.subplots(rows_n, cols, figsize=(5.6 * cols, 4.2 * rows_n), squeeze=False)
    used = set()
    n_series = len(series_order(plan))
    for n, (metric, fv, series) in enumerate(panels):
        k, f = divmod(n, n_facets)
        r, c = place(k, f)
        used.add((r, c))
        ax = grid[r][c]
        ax.set_title(f"{label(plan.facet['path'])} = {text(fv)}" if plan.facet else
                     (f"{metric} speed-up" if base else with_unit(metric, metric_unit(metric))), fontsize=10)
        if not series:
            ax.text(0.5, 0.5, "no finished points", ha="center", va="center", transform=ax.transAxes)
        elif plan.kind == "heatmap":
            draw_heatmap(fig, ax, metric, series, plan, base, heat_range(panels, metric))
        else:
            # Styles are the same in every panel, so one legend per row of facets is enough.
            draw_line(ax, metric, series, plan, base, n_series, legend=not plan.facet or c == 0)
    for r in range(rows_n):
        for c in range(cols):
            if (r, c) not in used:
                grid[r][c].axis("off")
    if plan.facet and plan.kind == "line":
        share_y(panels, [grid[r][c] for r, c in (place(*divmod(n, n_facets)) for n in range(len(panels)))])
    # Wrapped to the figure's width: a one-panel figure would cut a long subtitle off.
    width = max(50, int(5.6 * cols * 12))
    fig.suptitle("\n".join(textwrap.fill(t, width) for t in fig_title.split("\n")), fontsize=10)
    fig.tight_layout()
    return fig


def share_y(panels, axs):
    """One y range for all panels of a metric, so facets compare by height."""
    for metric in dict.fromkeys(m for m, _, _ in panels):
        mine = [ax for (m, _, series), ax in zip(panels, axs) if m == metric and series]
        if mine:
            lims = [ax.get_ylim() for ax in mine]
            for ax in mine:
                ax.set_ylim(min(lo for lo, _ in lims), max(hi for _, hi in lims))


def figure_title(args, study, plan, base, shown_n, failed):
    title = args.title or study.get("name", "sweep")
    sub = f"{shown_n} of {study.get('points', '?')} points"
    if failed:
        sub += f", {failed} failed (left out)"
    lines = [f"{title}  ({os.path.basename(study.get('workload', ''))} on {os.path.basename(study.get('chip', ''))}; {sub})"]
    held = dict(plan.fixed, **{a["path"]: a["values"][0] for a in plan.single if a["values"]})
    notes = [f"fixed: {describe(held)}"] if held else []
    if base:
        how = "time: base / value, others: value / base" + ("" if base.whole else "; axes not given: each point's own")
        notes.append(f"speed-up vs {base.text} ({how})")
    return "\n".join(lines + notes)


def main():
    p = tool_args.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="sweep folder (npusim sweep --out DIR)")
    p.add_argument("--metric", action="append", help="metric to draw (repeatable; default: every metric of the study)")
    p.add_argument("--kind", choices=["auto", "line", "heatmap"], default="auto")
    p.add_argument("--x", help="axis on the x axis (path or a suffix naming one axis; default: the first free axis)")
    p.add_argument("--y", help="heat map: axis on the y axis (default: the next free axis)")
    p.add_argument("--fix", action="append", metavar="AXIS=VALUE", help="keep only the points with this value (repeatable)")
    p.add_argument("--facet", metavar="AXIS", help="one panel per value of this axis")
    p.add_argument("--speedup-vs", metavar="AXIS=VALUE[,AXIS=VALUE...]",
                   help="draw the speed-up against this base point (axes left out: each point's own)")
    p.add_argument("--table", action="store_true", help="also print the drawn values to stdout (tab-separated)")
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
    plan = plan_roles(args, axes)

    ok = [r for r in rows if r.get("status") == "ok"]
    keep = [r for r in ok if all(vkey(r["axes"].get(p)) == vkey(v) for p, v in plan.fixed.items())]
    # Everything that can be refused is checked before matplotlib loads (and before a file is written).
    base = speedup_base(args, axes, plan, ok)
    panels = build_panels(metrics, keep, plan, base)
    if args.table:
        print_table(panels, plan)
    fig = draw(panels, metrics, plan, base, figure_title(args, study, plan, base, len(keep), len(rows) - len(ok)))
    out = args.out or os.path.join(args.folder, "plot.png")
    fig.savefig(out, dpi=args.dpi)
    n = len(metrics)
    print(f"plot_sweep: {plan.kind} chart of {n} metric{'s' if n != 1 else ''} -> {out}",
          file=sys.stderr if args.table else sys.stdout)


if __name__ == "__main__":
    main()
