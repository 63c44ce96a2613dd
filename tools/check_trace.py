#!/usr/bin/python3
"""Check that a trace written by `npusim run --trace` is well formed for
Perfetto / the Chrome Trace Event Format (JSON object form), docs/design.md §4.5.

usage: check_trace.py TRACE.json [--expect-flows] [--quiet]

Rules checked:
  * the top level is an object with a "traceEvents" array (optional
    "displayTimeUnit" is "ms" or "ns");
  * every event is an object with a known "ph" and an integer "pid";
  * X (complete) events: string name, integer tid, numeric ts >= 0 and
    dur >= 0;  B/E (begin/end) pairs balance per thread;
  * M (metadata) events: process_name / thread_name (args.name a string),
    process_sort_index / thread_sort_index (args.sort_index an integer),
    process_labels (args.labels a string);
  * every (pid, tid) with slices has a thread_name, every pid a process_name,
    and no thread or process is given two different names;
  * within one (pid, tid), slices nest properly: two slices are either
    disjoint or one contains the other (Perfetto drops slices that
    partially overlap) -- in whole nanoseconds as Perfetto reads them
    (llround(ts * 1000) and llround(dur * 1000), end = ts + dur), and in
    floating point as speedscope reads them (each track's first ts
    subtracted, end = ts + dur in doubles);
  * no zero-length slice ends on the same time as a namesake on its track
    (speedscope then ends the wrong one);
  * flow events (v1: s / t / f) pair up by (cat, name, id): exactly one s
    and one f, f not before s; s and t lie inside a slice on their thread
    ([ts, ts+dur)); f with "bp":"e" lies inside a slice on its thread, an f
    without it has a slice starting at or after it on its thread;
  * C (counter) events: string name, numeric ts >= 0, non-empty args whose
    values are all finite numbers.

Flows are checked in Perfetto's whole nanoseconds, so a flow that starts one
picosecond before its slice ends in the file starts after it once converted.

Exit status: 0 valid; 1 problems found (one line each, capped); 2 the file
cannot be read or is not JSON.
"""

import bisect
import decimal
import gzip
import json
import math
import sys
from collections import Counter, defaultdict

import tool_args

MAX_PROBLEMS = 50

# Every phase of the Trace Event Format; anything else is a problem.
KNOWN_PHASES = set("BEXiICbneSTpFstfPNODMVvRc()")
META_NAMES = {
    "process_name": ("name", str),
    "thread_name": ("name", str),
    "process_sort_index": ("sort_index", int),
    "thread_sort_index": ("sort_index", int),
    "process_labels": ("labels", str),
}


class Problems:
    def __init__(self):
        self.lines = []
        self.count = 0

    def add(self, msg):
        self.count += 1
        if len(self.lines) < MAX_PROBLEMS:
            self.lines.append(msg)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if isinstance(v, decimal.Decimal):
        return v.is_finite()
    if isinstance(v, float):
        return v == v and v not in (float("inf"), float("-inf"))
    return False


def perfetto_ns(us):
    """A trace time in whole ns as Perfetto computes it: llround(us * 1000)."""
    x = float(us) * 1000.0
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


def where(i, ev):
    name = ev.get("name") if isinstance(ev, dict) else None
    label = f" '{name}'" if isinstance(name, str) else ""
    return f"traceEvents[{i}] (ph {ev.get('ph')!r}{label})" if isinstance(ev, dict) else f"traceEvents[{i}]"


def reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def load(path):
    """Returns the parsed document, or raises (OSError, ValueError)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":  # a gzip trace (--trace out.json.gz)
        data = gzip.decompress(data)
    text = data.decode("utf-8")
    # Decimal keeps the six-decimal microsecond times exact (picoseconds).
    return json.loads(text, parse_float=decimal.Decimal, parse_constant=reject_constant)


def check(doc, expect_flows):
    p = Problems()
    summary = {
        "phases": Counter(),
        "threads": {},
        "processes": {},
        "slices": 0,
        "flows": 0,
        "counters": set(),
    }
    if not isinstance(doc, dict):
        p.add(f"top level: expected a JSON object with a 'traceEvents' array, got {type(doc).__name__}")
        return p, summary
    if "traceEvents" not in doc:
        p.add("top level: missing 'traceEvents'")
        return p, summary
    events = doc["traceEvents"]
    if not isinstance(events, list):
        p.add(f"traceEvents: expected an array, got {type(events).__name__}")
        return p, summary
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        p.add(f"displayTimeUnit: expected \"ms\" or \"ns\", got {doc['displayTimeUnit']!r}")

    thread_names = {}   # (pid, tid) -> name
    process_names = {}  # pid -> name
    slices = defaultdict(list)       # (pid, tid) -> [(ts, end, index)] in Perfetto's ns
    float_slices = defaultdict(list) # (pid, tid) -> [(ts, dur, index, name)] as doubles
    open_b = defaultdict(list)       # (pid, tid) -> [(ts, index)] for B/E
    flow_ends = defaultdict(lambda: {"s": [], "t": [], "f": []})  # (cat, name, id) -> ph -> [(i, pid, tid, ts, bp)]
    used_pids = {}                   # pid -> first event index

    def need_ts(i, ev):
        ts = ev.get("ts")
        if not is_number(ts):
            p.add(f"{where(i, ev)}: ts: expected a number, got {ts!r}")
            return None
        if ts < 0:
            p.add(f"{where(i, ev)}: ts: expected >= 0, got {ts}")
            return None
        return ts

    def need_tid(i, ev):
        tid = ev.get("tid")
        if not is_int(tid):
            p.add(f"{where(i, ev)}: tid: expected an integer, got {tid!r}")
            return None
        return tid

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            p.add(f"traceEvents[{i}]: expected an object, got {type(ev).__name__}")
            continue
        ph = ev.get("ph")
        if not isinstance(ph, str):
            p.add(f"{where(i, ev)}: missing or non-string 'ph'")
            continue
        summary["phases"][ph] += 1
        if ph not in KNOWN_PHASES:
            p.add(f"{where(i, ev)}: unknown phase {ph!r}")
            continue
        if "pid" not in ev:
            p.add(f"{where(i, ev)}: missing 'pid'")
            continue
        pid = ev["pid"]
        if not is_int(pid):
            p.add(f"{where(i, ev)}: pid: expected an integer, got {pid!r}")
            continue
        used_pids.setdefault(pid, i)
        if "args" in ev and not isinstance(ev["args"], dict):
            p.add(f"{where(i, ev)}: args: expected an object, got {type(ev['args']).__name__}")
            continue
        args = ev.get("args", {})

        if ph == "M":
            name = ev.get("name")
            if name not in META_NAMES:
                p.add(f"{where(i, ev)}: metadata name: expected one of {', '.join(sorted(META_NAMES))}, got {name!r}")
                continue
            key, typ = META_NAMES[name]
            if "args" not in ev:
                p.add(f"{where(i, ev)}: metadata without args")
                continue
            val = args.get(key)
            ok = is_int(val) if typ is int else isinstance(val, typ)
            if not ok:
                p.add(f"{where(i, ev)}: args.{key}: expected {'an integer' if typ is int else 'a string'}, got {val!r}")
                continue
            if name == "thread_name":
                tid = need_tid(i, ev)
                if tid is None:
                    continue
                prev = thread_names.get((pid, tid))
                if prev is not None and prev != val:
                    p.add(f"{where(i, ev)}: thread (pid {pid}, tid {tid}) named twice: {prev!r} and {val!r}")
                thread_names[(pid, tid)] = val
            elif name == "process_name":
                prev = process_names.get(pid)
                if prev is not None and prev != val:
                    p.add(f"{where(i, ev)}: process {pid} named twice: {prev!r} and {val!r}")
                process_names[pid] = val
            elif name == "thread_sort_index":
                need_tid(i, ev)
            continue

        if ph == "X":
            ok = True
            if not isinstance(ev.get("name"), str):
                p.add(f"{where(i, ev)}: name: expected a string, got {ev.get('name')!r}")
                ok = False
            tid = need_tid(i, ev)
            ts = need_ts(i, ev)
            dur = ev.get("dur")
            if not is_number(dur):
                p.add(f"{where(i, ev)}: dur: expected a number, got {dur!r}")
                ok = False
            elif dur < 0:
                p.add(f"{where(i, ev)}: dur: expected >= 0, got {dur}")
                ok = False
            if ok and tid is not None and ts is not None:
                start = perfetto_ns(ts)
                slices[(pid, tid)].append((start, start + perfetto_ns(dur), i))
                float_slices[(pid, tid)].append((float(ts), float(dur), i, ev.get("name")))
            continue

        if ph in ("B", "E"):
            tid = need_tid(i, ev)
            ts = need_ts(i, ev)
            if tid is None or ts is None:
                continue
            if ph == "B":
                if not isinstance(ev.get("name"), str):
                    p.add(f"{where(i, ev)}: name: expected a string, got {ev.get('name')!r}")
                open_b[(pid, tid)].append((ts, i))
            else:
                stack = open_b[(pid, tid)]
                if not stack:
                    p.add(f"{where(i, ev)}: E without a matching B on (pid {pid}, tid {tid})")
                    continue
                b_ts, b_i = stack.pop()
                if ts < b_ts:
                    p.add(f"{where(i, ev)}: E at {ts} before its B (traceEvents[{b_i}]) at {b_ts}")
                    continue
                slices[(pid, tid)].append((perfetto_ns(b_ts), perfetto_ns(ts), b_i))
                float_slices[(pid, tid)].append((float(b_ts), float(ts) - float(b_ts), b_i, events[b_i].get("name")))
            continue

        if ph in ("s", "t", "f"):
            tid = need_tid(i, ev)
            ts = need_ts(i, ev)
            fid = ev.get("id")
            if not (is_int(fid) or isinstance(fid, str)):
                p.add(f"{where(i, ev)}: id: expected an integer or string, got {fid!r}")
                continue
            bp = ev.get("bp")
            if bp is not None and bp != "e":
                p.add(f"{where(i, ev)}: bp: expected \"e\", got {bp!r}")
                continue
            if tid is None or ts is None:
                continue
            key = (ev.get("cat"), ev.get("name"), fid)
            flow_ends[key][ph].append((i, pid, tid, perfetto_ns(ts), bp))
            continue

        if ph == "C":
            if not isinstance(ev.get("name"), str):
                p.add(f"{where(i, ev)}: name: expected a string, got {ev.get('name')!r}")
                continue
            if need_ts(i, ev) is None:
                continue
            if not args:
                p.add(f"{where(i, ev)}: counter without args (needs at least one numeric series)")
                continue
            for k, v in args.items():
                if not is_number(v):
                    p.add(f"{where(i, ev)}: args.{k}: expected a finite number, got {v!r}")
            summary["counters"].add((pid, ev["name"]))
            continue

        if ph in ("i", "I"):
            need_ts(i, ev)
            s = ev.get("s", "t")
            if s not in ("g", "p", "t"):
                p.add(f"{where(i, ev)}: s: expected \"g\", \"p\" or \"t\", got {s!r}")
            elif s == "t":
                tid = need_tid(i, ev)
            continue
        # Other known phases (async, object, sample, ...): pid was checked.

    # Unclosed B events.
    for (pid, tid), stack in open_b.items():
        for ts, i in stack:
            p.add(f"traceEvents[{i}]: B at {ts} on (pid {pid}, tid {tid}) is never ended")

    # Names for every thread with slices and every process used.
    for (pid, tid) in sorted(slices):
        if (pid, tid) not in thread_names:
            p.add(f"(pid {pid}, tid {tid}): has {len(slices[(pid, tid)])} slice(s) but no thread_name "
                  f"(first: traceEvents[{min(s[2] for s in slices[(pid, tid)])}])")
    for pid in sorted(used_pids):
        if pid not in process_names:
            p.add(f"pid {pid}: events but no process_name (first: traceEvents[{used_pids[pid]}])")

    # Nesting within each thread. Slices sorted by (start, longest first);
    # parent[k] is the index (in the sorted list) of the slice that directly
    # encloses slice k, or -1. Improperly nested slices are reported and
    # left out of the tree, as Perfetto would drop them.
    parents = {}
    for key in sorted(slices):
        lst = slices[key]
        lst.sort(key=lambda s: (s[0], -s[1], s[2]))
        parent = [-1] * len(lst)
        stack = []  # indices into lst
        for k, (ts, end, i) in enumerate(lst):
            while stack and lst[stack[-1]][1] <= ts:
                stack.pop()
            if stack and end > lst[stack[-1]][1]:
                pts, pend, pi = lst[stack[-1]]
                p.add(f"traceEvents[{i}] [{ts}, {end}) ns on {thread_label(key, thread_names)} partially overlaps "
                      f"traceEvents[{pi}] [{pts}, {pend}) ns (whole ns as Perfetto reads them): slices on one thread "
                      f"must nest")
                parent[k] = -2  # not in the tree
                continue
            parent[k] = stack[-1] if stack else -1
            stack.append(k)
        parents[key] = parent
        summary["slices"] += len(lst)

    # The same in floating point, as speedscope computes it.
    for key in sorted(float_slices):
        lst = float_slices[key]
        first = min(s[0] for s in lst)
        lst = [(ts - first, (ts - first) + dur, i, name) for ts, dur, i, name in lst]
        lst.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []
        ends = {}
        for ts, end, i, name in lst:
            while stack and stack[-1][1] <= ts:
                stack.pop()
            if stack and end > stack[-1][1]:
                pts, pend, pi, _ = stack[-1]
                p.add(f"traceEvents[{i}] on {thread_label(key, thread_names)} ends at {end!r} after traceEvents[{pi}] "
                      f"({pend!r}) in floating point (as speedscope reads them): slices on one thread must nest")
                continue
            stack.append((ts, end, i, name))
            ends.setdefault((end, name), []).append((ts, i))
        for (end, name), lst2 in ends.items():
            if len(lst2) > 1 and any(ts == end for ts, _ in lst2):
                i = next(i for ts, i in lst2 if ts == end)
                p.add(f"traceEvents[{i}] on {thread_label(key, thread_names)}: a zero-length slice ending with a "
                      f"namesake (speedscope ends the wrong one)")

    # Flows.
    starts = {k: [s[0] for s in v] for k, v in slices.items()}

    def enclosing(key, t):
        """True if some slice on thread `key` has ts <= t < end (or t == ts for a zero-length slice)."""
        lst = slices.get(key)
        if not lst:
            return False
        parent = parents[key]
        j = bisect.bisect_right(starts[key], t) - 1
        # The last slice starting at or before t, skipping dropped ones; the
        # enclosing slice, if any, is it or one of its ancestors.
        while j >= 0 and parent[j] == -2:
            j -= 1
        while j >= 0:
            ts, end, _ = lst[j]
            if ts <= t < end or ts == end == t:
                return True
            j = parent[j]
        return False

    def next_slice(key, t):
        lst = slices.get(key)
        if not lst:
            return False
        return starts[key][-1] >= t

    for key, ends in flow_ends.items():
        cat, name, fid = key
        label = f"flow id {fid!r} (cat {cat!r}, name {name!r})"
        s_list, f_list = ends["s"], ends["f"]
        if len(s_list) != 1 or len(f_list) != 1:
            first = min(e[0] for e in s_list + ends["t"] + f_list)
            p.add(f"{label}: expected one 's' and one 'f', got {len(s_list)} 's' and {len(f_list)} 'f' "
                  f"(first at traceEvents[{first}])")
            continue
        summary["flows"] += 1
        si, spid, stid, sts, _ = s_list[0]
        fi, fpid, ftid, fts, fbp = f_list[0]
        if fts < sts:
            p.add(f"{label}: ends (traceEvents[{fi}], {fts} ns) before it starts (traceEvents[{si}], {sts} ns)")
        for ti, tpid, ttid, tts, _ in [s_list[0]] + ends["t"]:
            if not enclosing((tpid, ttid), tts):
                p.add(f"{label}: traceEvents[{ti}] at {tts} ns is not inside any slice on "
                      f"{thread_label((tpid, ttid), thread_names)}")
        if fbp == "e":
            if not enclosing((fpid, ftid), fts):
                p.add(f"{label}: traceEvents[{fi}] ('f', bp \"e\") at {fts} ns is not inside any slice on "
                      f"{thread_label((fpid, ftid), thread_names)}")
        elif not next_slice((fpid, ftid), fts):
            p.add(f"{label}: traceEvents[{fi}] ('f') at {fts} ns has no slice starting at or after it on "
                  f"{thread_label((fpid, ftid), thread_names)}")

    if expect_flows and summary["flows"] == 0:
        p.add("no flow events (--expect-flows): expected arrows from signalling tasks to the tasks they release")

    summary["threads"] = thread_names
    summary["processes"] = process_names
    return p, summary


def thread_label(key, names):
    pid, tid = key
    n = names.get(key)
    return f"thread '{n}' (pid {pid}, tid {tid})" if n else f"(pid {pid}, tid {tid})"


def main(argv):
    ap = tool_args.ArgumentParser(description="Check a Chrome/Perfetto JSON trace (npusim --trace) for structural problems.")
    ap.add_argument("trace", help="trace file (JSON object form)")
    ap.add_argument("--expect-flows", action="store_true", help="fail if the trace has no flow events")
    ap.add_argument("--quiet", action="store_true", help="print problems only, no summary")
    a = ap.parse_args(argv)

    try:
        doc = load(a.trace)
    except OSError as e:
        print(f"{a.trace}: cannot read: {e.strerror or e}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as e:
        print(f"{a.trace}: not UTF-8: {e}", file=sys.stderr)
        return 2
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        if isinstance(e, json.JSONDecodeError):
            print(f"{a.trace}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}", file=sys.stderr)
        else:
            print(f"{a.trace}: invalid JSON: {e}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{a.trace}: invalid JSON: nested too deeply", file=sys.stderr)
        return 2

    problems, s = check(doc, a.expect_flows)

    if not a.quiet:
        phases = ", ".join(f"{ph}:{n}" for ph, n in sorted(s["phases"].items()))
        total = sum(s["phases"].values())
        print(f"{a.trace}: {total} events ({phases or 'none'})")
        print(f"  processes: {len(s['processes'])}  threads: {len(s['threads'])}  slices: {s['slices']}  "
              f"flows: {s['flows']}  counter series: {len(s['counters'])}")
        if s["threads"]:
            names = [s["threads"][k] for k in sorted(s["threads"])]
            shown = ", ".join(names[:12]) + (f", ... ({len(names) - 12} more)" if len(names) > 12 else "")
            print(f"  thread names: {shown}")
        if s["counters"]:
            print(f"  counters: {', '.join(sorted(n for _, n in s['counters']))}")

    if problems.count:
        for line in problems.lines:
            print(f"{a.trace}: {line}", file=sys.stderr)
        if problems.count > len(problems.lines):
            print(f"{a.trace}: ... and {problems.count - len(problems.lines)} more problem(s)", file=sys.stderr)
        print(f"{a.trace}: INVALID ({problems.count} problem(s))", file=sys.stderr)
        return 1
    if not a.quiet:
        print(f"{a.trace}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
