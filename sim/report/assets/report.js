(function () {
'use strict';
var D = JSON.parse(document.getElementById('data').textContent);
var app = document.getElementById('app');
var NS = 'http://www.w3.org/2000/svg';
var DASHES = ['', '6 3', '2 2', '8 3 2 3', '1 3'];
var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function add(e, kids) {
  for (var i = 0; i < kids.length; i++) {
    var c = kids[i];
    if (c === null || c === undefined) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
function h(tag, attrs) {
  var e = document.createElement(tag);
  for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
  return add(e, Array.prototype.slice.call(arguments, 2));
}
function s(tag, attrs) {
  var e = document.createElementNS(NS, tag);
  for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
  return add(e, Array.prototype.slice.call(arguments, 2));
}
function fmt(v) {
  if (v === null || v === undefined) return '\u2014';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  var a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e7)) return v.toExponential(3);
  return Number(v.toPrecision(5)).toLocaleString('en-US', {maximumFractionDigits: 6});
}
function tickText(v) {
  var a = Math.abs(v);
  if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toExponential(1);
  return Number(v.toPrecision(6)).toLocaleString('en-US', {maximumFractionDigits: 6});
}
function isFraction(m) { return /(utilization|overlap|hit_rate|fraction)/.test(m) && !/_(cycles|ns|ps|bytes)$/.test(m); }
function metricUnit(m) {
  if (/_cycles$/.test(m)) return 'cycles';
  if (/_ns$/.test(m)) return 'ns';
  if (/_ps$/.test(m)) return 'ps';
  if (/_bytes$/.test(m)) return 'B';
  if (isFraction(m)) return '%';
  return '';
}
function shown(m, v) { return (typeof v === 'number' && isFraction(m)) ? v * 100 : v; }
function withUnit(path, unit) { return unit ? path + ' (' + unit + ')' : path; }
function tail(path, n) { var p = path.split('.'); return p.slice(Math.max(0, p.length - n)).join('.'); }
// An axis by its last path segment, or its last two when two axes share the last.
// An axis by the shortest suffix of two or more segments that no other axis
// ends with (cube.count, never a bare count), as npusim sweep and
// tools/plot_sweep.py label it.
function short(path) {
  var n = path.split('.').length;
  for (var k = 2; k < n; k++) {
    var t = tail(path, k);
    var clash = (D.axes || []).some(function (a) { return a.path !== path && (a.path === t || a.path.slice(-t.length - 1) === '.' + t); });
    if (!clash) return t;
  }
  return path;
}
function valText(v) { return typeof v === 'string' ? v : JSON.stringify(v); }
function niceTicks(lo, hi, n) {
  var span = hi - lo; if (!(span > 0)) span = Math.abs(hi) || 1;
  var raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
  var step = (r >= 7.5 ? 10 : r >= 3.5 ? 5 : r >= 1.5 ? 2 : 1) * mag, out = [];
  for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}
function color(key) {
  var x = 0;
  for (var i = 0; i < key.length; i++) x = (x * 31 + key.charCodeAt(i)) >>> 0;
  return PALETTE[x % PALETTE.length];
}
var VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function viridis(t) {
  t = Math.max(0, Math.min(1, t)) * (VIRIDIS.length - 1);
  var i = Math.min(VIRIDIS.length - 2, Math.floor(t)), f = t - i, a = VIRIDIS[i], b = VIRIDIS[i + 1];
  return 'rgb(' + [0, 1, 2].map(function (k) { return Math.round(a[k] + (b[k] - a[k]) * f); }).join(',') + ')';
}

// ---- summary ---------------------------------------------------------------
function summary() {
  app.appendChild(h('h1', {}, D.title));
  app.appendChild(h('p', {class: 'sub'}, 'Written by npusim on ' + D.generated +
      '. A self-contained page: the numbers are embedded, the charts are drawn in your browser, nothing is loaded from the network.'));
  app.appendChild(h('h2', {}, 'Summary'));
  var t = h('table', {});
  D.summary.forEach(function (kv) { t.appendChild(h('tr', {}, h('th', {}, kv[0]), h('td', {}, valText(kv[1])))); });
  app.appendChild(t);
}

// ---- per-unit utilisation (a run) -------------------------------------------
function unitBars(units) {
  var lab = 120, W = 760, bw = W - lab - 70, row = 20, H = units.length * row + 34;
  var top = Math.max(1, Math.max.apply(null, units.map(function (u) { return u.utilization; })));
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'utilisation per unit'});
  niceTicks(0, top, 5).forEach(function (v) {
    var x = lab + v / top * bw;
    svg.appendChild(s('line', {x1: x, x2: x, y1: 4, y2: H - 26, stroke: '#e4e4e4'}));
    svg.appendChild(s('text', {x: x, y: H - 14, 'text-anchor': 'middle'}, Math.round(v * 100) + '%'));
  });
  units.forEach(function (u, i) {
    var y = 6 + i * row, group = u.name.split('_')[0];
    svg.appendChild(s('text', {x: lab - 8, y: y + 12, 'text-anchor': 'end'}, u.name));
    var r = s('rect', {x: lab, y: y + 2, width: Math.max(0.5, u.utilization / top * bw), height: row - 6, fill: color(group)});
    r.appendChild(s('title', {}, u.name + ': ' + (u.utilization * 100).toFixed(2) + '%' +
        (u.busy_cycles !== undefined ? ', busy ' + fmt(u.busy_cycles) + ' cycles' : '') +
        (u.count !== undefined ? ' over ' + u.count : '')));
    svg.appendChild(r);
    svg.appendChild(s('text', {x: lab + u.utilization / top * bw + 6, y: y + 12}, (u.utilization * 100).toFixed(1) + '%'));
  });
  svg.appendChild(s('text', {x: lab + bw / 2, y: H - 2, 'text-anchor': 'middle'},
      'utilisation: busy time / (run length x units); memory tiers: bytes / what the bandwidth allows'));
  return svg;
}

// ---- timeline of the busiest tracks (a run) ---------------------------------
// Colours of the ops: the busiest get a colour each, the rest share grey.
var OP_COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f',
                 '#17becf', '#bcbd22', '#8c564b'];
var OTHER_OP = '#c7c7c7';
// The critical path's kinds in darker tones than the ops' colours.
var KIND_COLORS = {compute: '#253494', data_movement: '#b2182b', dispatch: '#762a83', host: '#1b7837', mesh: '#e08214', idle: '#8c8c8c'};
var opColor = {}, opKnown = {};
(D.ops || []).forEach(function (o, i) {
  opKnown[o.name] = true;
  if (i < OP_COLORS.length) opColor[o.name] = OP_COLORS[i];
});
function baseName(n) { return String(n).replace(/ \+[0-9]+ more$/, ''); }
function sliceColor(track, name) {
  var b = baseName(name);
  if (track === 'critical path') return KIND_COLORS[b.split(' ').pop()] || OTHER_OP;
  if (opColor[b]) return opColor[b];
  if (opKnown[b]) return OTHER_OP;
  return color(track.replace(/[0-9]+/g, ''));
}
function timelineLegend(tl) {
  var used = {}, other = false, kinds = {};
  tl.tracks.forEach(function (t) {
    t.slices.forEach(function (sl) {
      var b = baseName(sl[2]);
      if (t.name === 'critical path') kinds[b.split(' ').pop()] = true;
      else if (opColor[b]) used[b] = true;
      else if (opKnown[b]) other = true;
    });
  });
  var lg = h('div', {class: 'legend'});
  (D.ops || []).forEach(function (o) {
    if (used[o.name]) lg.appendChild(h('span', {}, h('span', {class: 'sw', style: 'background:' + opColor[o.name]}), o.name));
  });
  if (other) lg.appendChild(h('span', {}, h('span', {class: 'sw', style: 'background:' + OTHER_OP}), 'other ops'));
  Object.keys(kinds).sort().forEach(function (k) {
    lg.appendChild(h('span', {}, h('span', {class: 'sw', style: 'background:' + (KIND_COLORS[k] || OTHER_OP)}), 'critical path: ' + k));
  });
  return lg;
}
function timeline(tl) {
  var lab = 170, W = 1140, row = 20, x0 = lab, x1 = W - 12, H = tl.tracks.length * row + 44;
  var end = tl.end_us || 0;
  tl.tracks.forEach(function (t) { t.slices.forEach(function (sl) { end = Math.max(end, sl[0] + sl[1]); }); });
  if (!(end > 0)) end = 1;
  var sx = (x1 - x0) / end;
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'timeline'});
  niceTicks(0, end, 10).forEach(function (v) {
    var x = x0 + v * sx;
    svg.appendChild(s('line', {x1: x, x2: x, y1: 4, y2: H - 30, stroke: '#e4e4e4'}));
    svg.appendChild(s('text', {x: x, y: H - 18, 'text-anchor': 'middle'}, tickText(v)));
  });
  svg.appendChild(s('text', {x: x0 + (x1 - x0) / 2, y: H - 3, 'text-anchor': 'middle'}, 'time (\u00b5s)'));
  tl.tracks.forEach(function (t, i) {
    var y = 6 + i * row;
    svg.appendChild(s('rect', {x: x0, y: y, width: x1 - x0, height: row - 4, fill: i % 2 ? '#fafafa' : '#f3f3f3'}));
    var name = s('text', {x: lab - 8, y: y + 12, 'text-anchor': 'end'}, t.name + '  ' + Math.round(100 * t.busy_us / end) + '%');
    name.appendChild(s('title', {}, (t.process ? t.process + ' / ' : '') + t.name + ': busy ' + fmt(t.busy_us) + ' \u00b5s'));
    svg.appendChild(name);
    var g = s('g', {});
    t.slices.forEach(function (sl) {
      var r = s('rect', {x: x0 + sl[0] * sx, y: y + 1, width: Math.max(0.6, sl[1] * sx), height: row - 6,
                         fill: sliceColor(t.name, sl[2])});
      r.appendChild(s('title', {}, sl[2] + ' \u2014 at ' + fmt(sl[0]) + ' \u00b5s for ' + fmt(sl[1]) + ' \u00b5s'));
      g.appendChild(r);
    });
    svg.appendChild(g);
  });
  return svg;
}

// ---- host runtime (a host run) -------------------------------------------------
function kvTable(rows) {
  var t = h('table', {});
  rows.forEach(function (kv) { t.appendChild(h('tr', {}, h('th', {}, kv[0]), h('td', {}, valText(kv[1])))); });
  return t;
}

// ---- critical path -------------------------------------------------------------
function us(ns) { return fmt(ns / 1000); }
function criticalPath(cp) {
  var box = h('div', {});
  var total = cp.total_ns || 0, W = 1140, H = 46, L = 10, R = 10, x = L;
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'critical path by kind'});
  var kinds = Object.keys(cp.by_kind || {}).sort(function (a, b) { return cp.by_kind[b] - cp.by_kind[a]; });
  var lg = h('div', {class: 'legend'});
  kinds.forEach(function (k) {
    var w = total > 0 ? cp.by_kind[k] / total * (W - L - R) : 0;
    var r = s('rect', {x: x, y: 4, width: Math.max(0.5, w), height: 22, fill: KIND_COLORS[k] || OTHER_OP});
    r.appendChild(s('title', {}, k + ': ' + us(cp.by_kind[k]) + ' \u00b5s (' + (100 * cp.by_kind[k] / total).toFixed(1) + '%)'));
    svg.appendChild(r);
    if (w > 7 * (k.length + 7)) svg.appendChild(s('text', {x: x + 4, y: 19, style: 'fill:#fff'}, k + ' ' + (100 * cp.by_kind[k] / total).toFixed(1) + '%'));
    x += w;
    lg.appendChild(h('span', {}, h('span', {class: 'sw', style: 'background:' + (KIND_COLORS[k] || OTHER_OP)}),
        k + ' ' + us(cp.by_kind[k]) + ' \u00b5s'));
  });
  svg.appendChild(s('text', {x: L, y: 42}, '0'));
  svg.appendChild(s('text', {x: W - R, y: 42, 'text-anchor': 'end'}, us(total) + ' \u00b5s'));
  add(box, [svg, lg]);
  // Time on the path per op, then its longest steps.
  var byOp = {}, segs = (cp.segments || []).slice();
  segs.forEach(function (g) { if (g.op !== null && g.op !== undefined) byOp[g.op] = (byOp[g.op] || 0) + g.end_ns - g.start_ns; });
  var ops = Object.keys(byOp).sort(function (a, b) { return byOp[b] - byOp[a]; }).slice(0, 8);
  if (ops.length)
    box.appendChild(h('p', {}, 'Ops on the path: ' + ops.map(function (o) {
      return o + ' ' + (100 * byOp[o] / total).toFixed(1) + '%'; }).join(', ') + '.'));
  segs.sort(function (a, b) { return (b.end_ns - b.start_ns) - (a.end_ns - a.start_ns); });
  var t = h('table', {class: 'wrap'}, h('tr', {}, h('th', {}, 'start \u00b5s'), h('th', {}, 'length \u00b5s'), h('th', {}, 'share'),
      h('th', {}, 'kind'), h('th', {}, 'task'), h('th', {}, 'op'), h('th', {}, 'started after'), h('th', {}, 'waited for')));
  segs.slice(0, 15).forEach(function (g) {
    t.appendChild(h('tr', {}, h('td', {class: 'n'}, us(g.start_ns)), h('td', {class: 'n'}, us(g.end_ns - g.start_ns)),
        h('td', {class: 'n'}, (100 * (g.end_ns - g.start_ns) / total).toFixed(1) + '%'), h('td', {class: 'kind'}, g.kind),
        h('td', {}, g.task === null ? '\u2014' : g.task), h('td', {}, g.op === null ? '\u2014' : g.op),
        h('td', {}, g.after || ''), h('td', {}, g.waited || '')));
  });
  box.appendChild(h('h3', {}, 'Longest steps (' + Math.min(15, segs.length) + ' of ' + (segs.length + (cp.segments_omitted || 0)) + ')'));
  box.appendChild(t);
  return box;
}

// ---- per-op table (sortable) and roofline ---------------------------------------
var OP_COLUMNS = [
  {key: 'name', label: 'op', text: true},
  {key: 'tasks', label: 'tasks'}, {key: 'cores', label: 'cores'},
  {key: 'start_ns', label: 'start \u00b5s', f: function (o) { return o.start_ns / 1000; }},
  {key: 'end_ns', label: 'end \u00b5s', f: function (o) { return o.end_ns / 1000; }},
  {key: 'busy_ns', label: 'busy \u00b5s', f: function (o) { return o.busy_ns / 1000; }},
  {key: 'compute_ns', label: 'compute \u00b5s', f: function (o) { return o.compute_ns / 1000; }},
  {key: 'transfer_ns', label: 'transfer \u00b5s', f: function (o) { return o.transfer_ns / 1000; }},
  {key: 'event_wait_ns', label: 'event wait \u00b5s', f: function (o) { return o.event_wait_ns / 1000; }},
  {key: 'bytes', label: 'MB', f: function (o) { return o.bytes / 1e6; }},
  {key: 'flops', label: 'GFLOP', f: function (o) { return o.flops / 1e9; }},
  {key: 'intensity', label: 'FLOP/B', f: intensity},
  {key: 'rate', label: 'TFLOP/s', f: function (o) { return achieved(o) / 1e12; }},
  {key: 'bound', label: 'bound', text: true},
  {key: 'resource', label: 'resource', text: true}];
function intensity(o) { return o.bytes > 0 ? o.flops / o.bytes : null; }
function achieved(o) { return o.end_ns > o.start_ns ? o.flops / ((o.end_ns - o.start_ns) * 1e-9) : 0; }
function opTable(ops) {
  var state = {col: 'busy_ns', desc: true, all: false}, wrap = h('div', {}), SHOWN = 25;
  function value(o, c) { return c.f ? c.f(o) : o[c.key]; }
  function draw() {
    var col = OP_COLUMNS.filter(function (c) { return c.key === state.col; })[0];
    var rows = ops.slice().sort(function (a, b) {
      var x = value(a, col), y = value(b, col);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      var r = col.text ? String(x).localeCompare(String(y)) : x - y;
      return state.desc ? -r : r;
    });
    var t = h('table', {class: 'ops'}), head = h('tr', {});
    OP_COLUMNS.forEach(function (c) {
      var th = h('th', {class: 'sort', title: 'sort by ' + c.label}, c.label + (c.key === state.col ? (state.desc ? ' \u25bc' : ' \u25b2') : ''));
      th.addEventListener('click', function () {
        state.desc = c.key === state.col ? !state.desc : !c.text;
        state.col = c.key;
        draw();
      });
      head.appendChild(th);
    });
    t.appendChild(head);
    rows.slice(0, state.all ? rows.length : SHOWN).forEach(function (o) {
      var tr = h('tr', {});
      OP_COLUMNS.forEach(function (c) {
        var v = value(o, c);
        if (c.key === 'name') tr.appendChild(h('td', {class: 'name'}, h('span', {class: 'sw', style: 'background:' + (opColor[o.name] || OTHER_OP)}), v));
        else tr.appendChild(h('td', c.text ? {} : {class: 'n'}, c.text ? v : fmt(v)));
      });
      t.appendChild(tr);
    });
    wrap.innerHTML = '';
    wrap.appendChild(t);
    if (rows.length > SHOWN) {
      var b = h('button', {type: 'button'}, state.all ? 'show the first ' + SHOWN : 'show all ' + rows.length + ' ops');
      b.addEventListener('click', function () { state.all = !state.all; draw(); });
      wrap.appendChild(b);
    }
  }
  draw();
  return wrap;
}
var BOUND_COLORS = {compute: '#4e79a7', memory: '#f28e2b', latency: '#76b7b2', sync: '#e15759'};
function roofline(ops, roof) {
  var pts = ops.filter(function (o) { return o.flops > 0 && o.bytes > 0 && o.end_ns > o.start_ns; });
  var W = 700, H = 380, L = 74, R = 150, T = 24, B = 46;
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'roofline'});
  svg.appendChild(s('text', {x: L, y: 14, class: 'title'}, 'Roofline: achieved FLOP/s per op against the chip\u2019s roofs'));
  if (!pts.length || !roof) {
    svg.appendChild(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, 'no op both computes and moves bytes through GM'));
    return svg;
  }
  var peak = Math.max(roof.cube_flops_per_s || 0, roof.vector_flops_per_s || 0), bw = roof.hbm_bytes_per_s || 1;
  var xs = pts.map(intensity), ys = pts.map(achieved);
  var xlo = Math.min(Math.min.apply(null, xs), peak / bw) / 4, xhi = Math.max(Math.max.apply(null, xs), peak / bw) * 4;
  var ylo = Math.min.apply(null, ys) / 4, yhi = peak * 2;
  var lx = function (v) { return L + (Math.log10(v) - Math.log10(xlo)) / (Math.log10(xhi) - Math.log10(xlo)) * (W - L - R); };
  var ly = function (v) { return T + (1 - (Math.log10(v) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo))) * (H - T - B); };
  for (var e = Math.ceil(Math.log10(xlo)); e <= Math.floor(Math.log10(xhi)); e++) {
    svg.appendChild(s('line', {x1: lx(Math.pow(10, e)), x2: lx(Math.pow(10, e)), y1: T, y2: H - B, stroke: '#eee'}));
    svg.appendChild(s('text', {x: lx(Math.pow(10, e)), y: H - B + 14, 'text-anchor': 'middle'}, '1e' + e));
  }
  for (e = Math.ceil(Math.log10(ylo)); e <= Math.floor(Math.log10(yhi)); e++) {
    svg.appendChild(s('line', {x1: L, x2: W - R, y1: ly(Math.pow(10, e)), y2: ly(Math.pow(10, e)), stroke: '#eee'}));
    svg.appendChild(s('text', {x: L - 6, y: ly(Math.pow(10, e)) + 4, 'text-anchor': 'end'}, '1e' + e));
  }
  svg.appendChild(s('text', {x: L + (W - L - R) / 2, y: H - 8, 'text-anchor': 'middle'}, 'arithmetic intensity (FLOP per byte through the GM port: L2 or HBM), log'));
  svg.appendChild(s('text', {x: 14, y: T + (H - T - B) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + (T + (H - T - B) / 2) + ')'}, 'achieved FLOP/s over the op\u2019s span, log'));
  // Roofs: min(compute peak, intensity x bandwidth).
  function roofLine(p, b, dash, label) {
    if (!(p > 0 && b > 0)) return;
    var ridge = p / b, a = Math.max(xlo, ylo / b);
    svg.appendChild(s('polyline', {fill: 'none', stroke: '#555', 'stroke-width': 1.5, 'stroke-dasharray': dash,
        points: [lx(a) + ',' + ly(a * b), lx(ridge) + ',' + ly(p), lx(xhi) + ',' + ly(p)].join(' ')}));
    svg.appendChild(s('text', {x: W - R + 4, y: ly(p) + 4}, label));
  }
  // GM bytes are L2 hits or HBM traffic: an op between the two slopes is served from L2.
  var l2 = roof.l2_bytes_per_s || 0;
  roofLine(roof.cube_flops_per_s, bw, '', 'Cube peak ' + fmt(roof.cube_flops_per_s / 1e12) + ' TFLOP/s');
  roofLine(roof.vector_flops_per_s, bw, '4 3', 'Vector peak ' + fmt(roof.vector_flops_per_s / 1e12) + ' TFLOP/s');
  if (l2 > bw) roofLine(peak, l2, '2 3', '');
  svg.appendChild(s('text', {x: lx(xlo) + 4, y: ly(xlo * 1.3 * bw) + 14, style: 'fill:#555'}, 'HBM ' + fmt(bw / 1e9) + ' GB/s'));
  if (l2 > bw && ly(xlo * 1.3 * l2) > T + 10)
    svg.appendChild(s('text', {x: lx(xlo) + 4, y: ly(xlo * 1.3 * l2) - 6, style: 'fill:#555'}, 'L2 ' + fmt(l2 / 1e9) + ' GB/s'));
  pts.forEach(function (o) {
    var c = s('circle', {cx: lx(intensity(o)), cy: ly(achieved(o)), r: 4, fill: BOUND_COLORS[o.bound] || OTHER_OP, 'fill-opacity': 0.8});
    c.appendChild(s('title', {}, o.name + ': ' + fmt(intensity(o)) + ' FLOP/B, ' + fmt(achieved(o) / 1e12) + ' TFLOP/s, ' + o.bound + ' bound'));
    svg.appendChild(c);
  });
  var ky = H - B - 80;
  Object.keys(BOUND_COLORS).forEach(function (k, i) {
    svg.appendChild(s('circle', {cx: W - R + 10, cy: ky + i * 16, r: 4, fill: BOUND_COLORS[k]}));
    svg.appendChild(s('text', {x: W - R + 18, y: ky + i * 16 + 4}, k + ' bound'));
  });
  return svg;
}

// ---- sweep charts -------------------------------------------------------------
function okRows(metric) {
  return D.rows.filter(function (r) { return r.status === 'ok' && typeof r.metrics[metric] === 'number'; });
}
// What the sweep charts show (the controls above them set it): the x axis,
// each other axis as lines, a panel per value (facet) or one value (fixed),
// and an optional base point the values are divided by (speed-up).
var VIEW = null;
// The page's address may set the view: report.html#x=cube.count;hbm.bandwidth_gbps=400;vector.count=facet;base=3
// (an axis by its label or path; = a value, facet or lines; base: a point's index).
function initView() {
  VIEW = {x: D.axes[0] ? D.axes[0].path : null, role: {}, base: null};
  var find = function (name) { return D.axes.filter(function (a) { return a.path === name || short(a.path) === name; })[0]; };
  var items = decodeURIComponent((location.hash || '').slice(1)).split(';');
  items.forEach(function (kv) { var k = kv.split('=')[0], a = find(kv.slice(k.length + 1)); if (k === 'x' && a) VIEW.x = a.path; });
  D.axes.forEach(function (a) { if (a.path !== VIEW.x) VIEW.role[a.path] = 'lines'; });
  items.forEach(function (kv) {
    var k = kv.split('=')[0], v = kv.slice(k.length + 1), a = find(k);
    if (k === 'base') VIEW.base = D.rows.filter(function (r) { return String(r.index) === v && r.status === 'ok'; })[0] || null;
    else if (a && a.path !== VIEW.x && (v === 'facet' || v === 'lines')) VIEW.role[a.path] = v;
    else if (a && a.path !== VIEW.x && a.values.some(function (x) { return valText(x) === v; })) VIEW.role[a.path] = 'fix:' + v;
  });
}
function axisOf(path) { return D.axes.filter(function (a) { return a.path === path; })[0]; }
function lineAxes() { return D.axes.filter(function (a) { return a.path !== VIEW.x && VIEW.role[a.path] === 'lines'; }); }
function facetAxis() { return D.axes.filter(function (a) { return a.path !== VIEW.x && VIEW.role[a.path] === 'facet'; })[0] || null; }
function viewRows(metric, facetValue) {
  var fa = facetAxis();
  return okRows(metric).filter(function (r) {
    return D.axes.every(function (a) {
      var role = VIEW.role[a.path];
      if (a.path === VIEW.x || !role || role === 'lines') return true;
      if (role === 'facet') return valText(r.axes[a.path]) === valText(facetValue);
      return valText(r.axes[a.path]) === role.slice(4);  // 'fix:' + value
    });
  });
}
// Time-like metrics speed up as they shrink: base / value; others value / base.
function isTime(m) { var leaf = tail(m, 1); return /_(cycles|ns|ps)$/.test(leaf) || /^total_/.test(leaf); }
function viewed(metric, r) {
  var v = shown(metric, r.metrics[metric]);
  if (!VIEW.base) return v;
  var b = shown(metric, VIEW.base.metrics[metric]);
  if (typeof b !== 'number' || b === 0 || v === 0) return null;
  return isTime(metric) ? b / v : v / b;
}
function xScale(values, x0, x1) {
  var numeric = values.every(function (v) { return typeof v === 'number'; });
  if (!numeric) {
    var step = (x1 - x0) / Math.max(1, values.length);
    return {pos: function (v) { var i = values.map(valText).indexOf(valText(v)); return x0 + step * (i + 0.5); }, log: false};
  }
  var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
  var log = lo > 0 && hi / lo >= 8;
  var f = log ? Math.log : function (v) { return v; };
  if (!log && lo > 0) lo = 0;  // a linear axis starts at zero
  var a = f(lo), b = f(hi), pad = (b - a) * 0.06 || 1;
  var from = (!log && lo === 0) ? 0 : a - pad;
  return {pos: function (v) { return x0 + (f(v) - from) / ((b + pad) - from) * (x1 - x0); }, log: log};
}
function lineChart(metric, facetValue) {
  var xa = axisOf(VIEW.x), others = lineAxes(), fa = facetAxis();
  var rows = viewRows(metric, facetValue).filter(function (r) { return viewed(metric, r) !== null; });
  var W = 560, H = 330, L = 78, R = 14, T = 26, B = 48;
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': metric});
  var unit = metricUnit(metric);
  svg.appendChild(s('text', {x: L, y: 14, class: 'title'}, (VIEW.base ? 'speed-up of ' : '') + metric + ' vs ' + short(xa.path) +
      (fa ? ', ' + short(fa.path) + ' = ' + valText(facetValue) : '')));
  if (!rows.length) { svg.appendChild(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, 'no finished points')); return [svg]; }
  var ys = rows.map(function (r) { return viewed(metric, r); });
  if (VIEW.base) ys.push(1);
  var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
  // Axes start at zero, so a bar of change reads as its true size.
  if (lo >= 0) lo = 0;
  if (hi <= 0) hi = 0;
  var pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
  var ylo = lo === 0 ? 0 : lo - pad, yhi = hi + pad;
  var Y = function (v) { return T + (1 - (v - ylo) / (yhi - ylo)) * (H - T - B); };
  var X = xScale(xa.values, L, W - R);
  niceTicks(ylo, yhi, 6).forEach(function (v) {
    if (v < ylo || v > yhi) return;
    svg.appendChild(s('line', {x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: '#e8e8e8'}));
    svg.appendChild(s('text', {x: L - 6, y: Y(v) + 4, 'text-anchor': 'end'}, tickText(v)));
  });
  xa.values.forEach(function (v) {
    var x = X.pos(v);
    svg.appendChild(s('line', {x1: x, x2: x, y1: H - B, y2: H - B + 4, stroke: '#999'}));
    svg.appendChild(s('text', {x: x, y: H - B + 16, 'text-anchor': 'middle'}, typeof v === 'number' ? tickText(v) : valText(v)));
  });
  svg.appendChild(s('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#999'}));
  svg.appendChild(s('line', {x1: L, x2: L, y1: T, y2: H - B, stroke: '#999'}));
  svg.appendChild(s('text', {x: L + (W - R - L) / 2, y: H - 10, 'text-anchor': 'middle'},
      withUnit(xa.path, xa.unit) + (X.log ? ', log scale' : '')));
  svg.appendChild(s('text', {x: 14, y: T + (H - T - B) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + (T + (H - T - B) / 2) + ')'}, VIEW.base ? 'speed-up vs the base point (x)' : withUnit(metric, unit)));
  if (VIEW.base) svg.appendChild(s('line', {x1: L, x2: W - R, y1: Y(1), y2: Y(1), stroke: '#555', 'stroke-dasharray': '4 3'}));
  // One line per combination of the other axes.
  var series = {}, order = [];
  rows.forEach(function (r) {
    var key = JSON.stringify(others.map(function (a) { return r.axes[a.path]; }));
    if (!series[key]) { series[key] = []; order.push(key); }
    series[key].push(r);
  });
  var legend = h('div', {class: 'legend'});
  order.forEach(function (key, i) {
    var c = PALETTE[i % PALETTE.length];
    var pts = series[key].slice().sort(function (a, b) { return X.pos(a.axes[xa.path]) - X.pos(b.axes[xa.path]); });
    var name = others.map(function (a) { return short(a.path) + '=' + valText(pts[0].axes[a.path]); }).join(', ') || metric;
    svg.appendChild(s('polyline', {fill: 'none', stroke: c,
        'stroke-dasharray': DASHES[i % DASHES.length], 'stroke-width': Math.max(1, 3 - 0.4 * i),
        points: pts.map(function (r) { return X.pos(r.axes[xa.path]) + ',' + Y(viewed(metric, r)); }).join(' ')}));
    pts.forEach(function (r) {
      var dot = s('circle', {cx: X.pos(r.axes[xa.path]), cy: Y(viewed(metric, r)), r: Math.max(2, 4 - 0.4 * i), fill: c});
      dot.appendChild(s('title', {}, name + ', ' + short(xa.path) + '=' + valText(r.axes[xa.path]) + ': ' +
          fmt(viewed(metric, r)) + (VIEW.base ? 'x' : unit ? ' ' + unit : '')));
      svg.appendChild(dot);
    });
    legend.appendChild(h('span', {}, h('span', {class: 'sw', style: 'background:' + c}), name));
  });
  return [svg, others.length ? legend : null];
}
function heatMap(metric, facetValue) {
  var xa = axisOf(VIEW.x), ya = lineAxes()[0];
  var rows = viewRows(metric, facetValue).filter(function (r) { return viewed(metric, r) !== null; });
  var cw = Math.max(52, Math.min(92, 380 / xa.values.length)), ch = 30, L = 96, T = 26;
  var W = L + cw * xa.values.length + 90, H = T + ch * ya.values.length + 48;
  var unit = metricUnit(metric);
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': metric + ' heat map'});
  var fa = facetAxis();
  svg.appendChild(s('text', {x: L, y: 14, class: 'title'}, (VIEW.base ? 'speed-up of ' + metric : withUnit(metric, unit)) +
      (fa ? ', ' + short(fa.path) + ' = ' + valText(facetValue) : '')));
  var vals = rows.map(function (r) { return viewed(metric, r); });
  var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
  var cell = {};
  rows.forEach(function (r) { cell[valText(r.axes[xa.path]) + '|' + valText(r.axes[ya.path])] = viewed(metric, r); });
  ya.values.forEach(function (yv, j) {
    var y = T + j * ch;
    svg.appendChild(s('text', {x: L - 6, y: y + ch / 2 + 4, 'text-anchor': 'end'}, valText(yv)));
    xa.values.forEach(function (xv, i) {
      var x = L + i * cw, v = cell[valText(xv) + '|' + valText(yv)];
      var t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      var r = s('rect', {x: x, y: y, width: cw - 2, height: ch - 2, fill: v === undefined ? '#eee' : viridis(t)});
      r.appendChild(s('title', {}, short(xa.path) + '=' + valText(xv) + ', ' + short(ya.path) + '=' + valText(yv) + ': ' +
          (v === undefined ? 'no result' : fmt(v) + (unit ? ' ' + unit : ''))));
      svg.appendChild(r);
      var txt = s('text', {x: x + (cw - 2) / 2, y: y + ch / 2 + 4, 'text-anchor': 'middle'}, v === undefined ? 'failed' : tickText(v));
      if (v !== undefined && t < 0.6) txt.setAttribute('style', 'fill:#fff');
      svg.appendChild(txt);
    });
  });
  xa.values.forEach(function (xv, i) {
    svg.appendChild(s('text', {x: L + i * cw + (cw - 2) / 2, y: T + ch * ya.values.length + 14, 'text-anchor': 'middle'}, valText(xv)));
  });
  svg.appendChild(s('text', {x: L + cw * xa.values.length / 2, y: H - 10, 'text-anchor': 'middle'}, withUnit(short(xa.path), xa.unit)));
  var my = T + ch * ya.values.length / 2;
  svg.appendChild(s('text', {x: 12, y: my, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + my + ')'}, withUnit(short(ya.path), ya.unit)));
  // Colour scale.
  var gx = L + cw * xa.values.length + 16, gh = ch * ya.values.length;
  var defs = s('defs', {}), grad = s('linearGradient', {id: 'g' + metric.replace(/[^a-z0-9]/gi, '') + valText(facetValue).replace(/[^a-z0-9]/gi, ''), x1: 0, y1: 1, x2: 0, y2: 0});
  VIRIDIS.forEach(function (c, k) { grad.appendChild(s('stop', {offset: (k / (VIRIDIS.length - 1)), 'stop-color': 'rgb(' + c.join(',') + ')'})); });
  defs.appendChild(grad); svg.appendChild(defs);
  svg.appendChild(s('rect', {x: gx, y: T, width: 12, height: gh, fill: 'url(#' + grad.getAttribute('id') + ')'}));
  svg.appendChild(s('text', {x: gx + 16, y: T + 9}, tickText(hi)));
  svg.appendChild(s('text', {x: gx + 16, y: T + gh}, tickText(lo)));
  return svg;
}
function resultsTable() {
  var t = h('table', {}), head = h('tr', {}, h('th', {}, '#'));
  D.axes.forEach(function (a) { head.appendChild(h('th', {}, withUnit(a.path, a.unit))); });
  D.metrics.forEach(function (m) { head.appendChild(h('th', {}, withUnit(m, metricUnit(m)))); });
  head.appendChild(h('th', {}, 'status'));
  t.appendChild(head);
  D.rows.forEach(function (r) {
    var tr = h('tr', r.status === 'ok' ? {} : {class: 'failed'}, h('td', {class: 'n'}, r.index));
    D.axes.forEach(function (a) { tr.appendChild(h('td', {class: 'n'}, valText(r.axes[a.path]))); });
    D.metrics.forEach(function (m) { tr.appendChild(h('td', {class: 'n'}, fmt(shown(m, r.metrics[m])))); });
    tr.appendChild(h('td', {}, r.status === 'ok' ? 'ok' : 'failed: ' + r.error));
    t.appendChild(tr);
  });
  return h('div', {class: 'scroll'}, t);
}
function utilTable() {
  var t = h('table', {}), head = h('tr', {}, h('th', {}, 'point'));
  D.unit_names.forEach(function (n) { head.appendChild(h('th', {}, n)); });
  t.appendChild(head);
  D.rows.forEach(function (r, i) {
    var tr = h('tr', {}, h('td', {}, D.axes.map(function (a) { return short(a.path) + '=' + valText(r.axes[a.path]); }).join(' ')));
    D.unit_util[i].forEach(function (u) {
      var td = h('td', {class: 'n'}, u === null ? '\u2014' : (u * 100).toFixed(1) + '%');
      if (u !== null) td.setAttribute('style', 'background: rgba(78,121,167,' + Math.min(1, u) * 0.55 + ')');
      tr.appendChild(td);
    });
    t.appendChild(tr);
  });
  return h('div', {class: 'scroll'}, t);
}

// The controls: the x axis; per other axis lines, a panel per value or one
// value; the base point of a speed-up.
function sweepControls() {
  var box = h('div', {class: 'controls'});
  var redraw = function () { drawSweepCharts(document.getElementById('charts')); };
  var xs = h('select', {'aria-label': 'x axis'});
  D.axes.forEach(function (a) { xs.appendChild(h('option', {value: a.path}, short(a.path))); });
  xs.addEventListener('change', function () {
    VIEW.role[VIEW.x] = 'lines';
    VIEW.x = xs.value;
    delete VIEW.role[VIEW.x];
    box.replaceWith(sweepControls());
    redraw();
  });
  xs.value = VIEW.x;
  box.appendChild(h('label', {}, 'x: ', xs));
  D.axes.forEach(function (a) {
    if (a.path === VIEW.x) return;
    var sel = h('select', {'aria-label': short(a.path)});
    sel.appendChild(h('option', {value: 'lines'}, 'a line per value'));
    sel.appendChild(h('option', {value: 'facet'}, 'a panel per value'));
    a.values.forEach(function (v) { sel.appendChild(h('option', {value: 'fix:' + valText(v)}, '= ' + valText(v))); });
    sel.value = VIEW.role[a.path];
    sel.addEventListener('change', function () {
      // One facet axis at a time: another one goes back to lines.
      if (sel.value === 'facet') D.axes.forEach(function (o) { if (VIEW.role[o.path] === 'facet') VIEW.role[o.path] = 'lines'; });
      VIEW.role[a.path] = sel.value;
      box.replaceWith(sweepControls());
      redraw();
    });
    box.appendChild(h('label', {}, short(a.path) + ': ', sel));
  });
  var base = h('select', {'aria-label': 'speed-up base'});
  base.appendChild(h('option', {value: ''}, 'values'));
  D.rows.forEach(function (r, i) {
    if (r.status !== 'ok') return;
    base.appendChild(h('option', {value: String(i)}, 'speed-up vs ' + D.axes.map(function (a) { return short(a.path) + '=' + valText(r.axes[a.path]); }).join(' ')));
  });
  base.value = VIEW.base ? String(D.rows.indexOf(VIEW.base)) : '';
  base.addEventListener('change', function () { VIEW.base = base.value === '' ? null : D.rows[Number(base.value)]; redraw(); });
  box.appendChild(h('label', {}, 'show: ', base));
  return box;
}
function drawSweepCharts(charts) {
  while (charts.firstChild) charts.removeChild(charts.firstChild);
  var fa = facetAxis(), panels = fa ? fa.values : [null];
  D.metrics.forEach(function (m) {
    charts.appendChild(h('h3', {}, VIEW.base ? 'speed-up of ' + m : withUnit(m, metricUnit(m))));
    var box = h('div', {class: 'charts'});
    panels.forEach(function (pv) {
      var col = h('div', {});
      lineChart(m, pv).forEach(function (e) { if (e) col.appendChild(e); });
      box.appendChild(col);
      if (lineAxes().length === 1 && viewRows(m, pv).length) box.appendChild(heatMap(m, pv));
    });
    charts.appendChild(box);
  });
}

// ---- page ---------------------------------------------------------------------
summary();
if (D.kind === 'run') {
  app.appendChild(h('h2', {}, 'Utilisation per unit'));
  app.appendChild(unitBars(D.units));
  if (D.host && D.host.length) {
    app.appendChild(h('h2', {}, 'Host runtime'));
    app.appendChild(kvTable(D.host));
  }
  if (D.serving && D.serving.length) {
    app.appendChild(h('h2', {}, 'LLM serving'));
    app.appendChild(kvTable(D.serving));
  }
  if (D.system && D.system.length) {
    app.appendChild(h('h2', {}, 'Ranks and mesh'));
    app.appendChild(h('p', {class: 'note'}, 'Utilisation averages over every rank; the ops table and roofline are those of the ' +
        'rank that ends last; the timeline shows the traced ranks (npusim run --trace-ranks).'));
    app.appendChild(kvTable(D.system));
  }
  if (D.binds && D.binds.length) {
    app.appendChild(h('h2', {}, 'What binds'));
    app.appendChild(h('p', {class: 'note'}, 'The critical path’s time by the resource that held each step: for a task, its ' +
        'busiest pipe; for a send, the mesh tier; for a transfer pipe the core’s port its bytes took longest on (GM for ' +
        'misses, L2 for hits), or HBM / L2 behind it when saturated for at least half the pipe’s time. npusim run ' +
        '--what-would-help measures the same by re-running with each resource doubled.'));
    app.appendChild(kvTable(D.binds));
  }
  if (D.help && D.help.length) {
    app.appendChild(h('h2', {}, 'What would help'));
    app.appendChild(h('p', {class: 'note'}, 'npusim run --what-would-help: one re-run per resource at twice its capacity, ' +
        'measured by the model, most saved first.'));
    app.appendChild(kvTable(D.help));
  }
  if (D.critical_path) {
    app.appendChild(h('h2', {}, 'Critical path'));
    app.appendChild(h('p', {class: 'note'}, 'The chain of steps that set the end time, walked back from the last finish through ' +
        'whatever made each step late: the task that set an awaited event, the task before on a busy core, dispatch, the host. ' +
        'A task’s run counts as data movement when its busiest transfer pipe outlasted its busiest compute pipe.'));
    app.appendChild(criticalPath(D.critical_path));
  }
  if (D.ops && D.ops.length) {
    app.appendChild(h('h2', {}, 'Ops'));
    app.appendChild(h('p', {class: 'note'}, 'One row per op of the stream; click a heading to sort. Busy time sums the op’s tasks; ' +
        'bound: sync when its tasks waited on events longer than they ran, latency when no pipe was busy for half their run, ' +
        'else memory or compute by the busier pipe class; resource: what held its tasks longest (as under What binds).'));
    app.appendChild(opTable(D.ops));
    app.appendChild(roofline(D.ops, D.roofline));
  }
  if (D.timeline) {
    app.appendChild(h('h2', {}, 'Timeline of the ' + D.timeline.tracks.length + ' busiest tracks'));
    app.appendChild(h('p', {class: 'note'}, 'The critical path, then the busiest tracks of each kind of unit in turn (the percentage after each name is busy time); ' +
        'slices coloured by op. ' +
        'Hover a slice for its name and time. Open the full trace (npusim run --trace) in ui.perfetto.dev for every track.'));
    app.appendChild(timeline(D.timeline));
    app.appendChild(timelineLegend(D.timeline));
  }
} else {
  app.appendChild(h('h2', {}, 'Metrics'));
  initView();
  app.appendChild(sweepControls());
  var charts = h('div', {id: 'charts'});
  app.appendChild(charts);
  drawSweepCharts(charts);
  app.appendChild(h('h2', {}, 'Results'));
  app.appendChild(resultsTable());
  app.appendChild(h('h2', {}, 'Utilisation per unit and point'));
  app.appendChild(utilTable());
}
})();
