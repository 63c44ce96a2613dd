(function () {
'use strict';
var D = JSON.parse(document.getElementById('data').textContent);
var app = document.getElementById('app');
var NS = 'http://www.w3.org/2000/svg';
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
function short(path) {
  var clash = (D.axes || []).filter(function (a) { return a.path !== path && tail(a.path, 1) === tail(path, 1); }).length;
  return tail(path, clash ? 2 : 1);
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
function timeline(tl) {
  var lab = 170, W = 1120, row = 20, x0 = lab, x1 = W - 12, H = tl.tracks.length * row + 44;
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
    var g = s('g', {fill: color(t.name.replace(/[0-9]+/g, ''))});
    t.slices.forEach(function (sl) {
      var r = s('rect', {x: x0 + sl[0] * sx, y: y + 1, width: Math.max(0.6, sl[1] * sx), height: row - 6});
      r.appendChild(s('title', {}, sl[2] + ' \u2014 at ' + fmt(sl[0]) + ' \u00b5s for ' + fmt(sl[1]) + ' \u00b5s'));
      g.appendChild(r);
    });
    svg.appendChild(g);
  });
  return svg;
}

// ---- sweep charts -------------------------------------------------------------
function okRows(metric) {
  return D.rows.filter(function (r) { return r.status === 'ok' && typeof r.metrics[metric] === 'number'; });
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
  var a = f(lo), b = f(hi), pad = (b - a) * 0.06 || 1;
  return {pos: function (v) { return x0 + (f(v) - (a - pad)) / ((b + pad) - (a - pad)) * (x1 - x0); }, log: log};
}
function lineChart(metric) {
  var axes = D.axes, xa = axes[0], others = axes.slice(1);
  var rows = okRows(metric);
  var W = 560, H = 330, L = 78, R = 14, T = 26, B = 48;
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': metric});
  var unit = metricUnit(metric);
  svg.appendChild(s('text', {x: L, y: 14, class: 'title'}, metric + ' vs ' + short(xa.path)));
  if (!rows.length) { svg.appendChild(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, 'no finished points')); return [svg]; }
  var ys = rows.map(function (r) { return shown(metric, r.metrics[metric]); });
  var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
  if (lo >= 0 && lo < 0.5 * hi) lo = 0;
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
      transform: 'rotate(-90 14 ' + (T + (H - T - B) / 2) + ')'}, withUnit(metric, unit)));
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
    svg.appendChild(s('polyline', {fill: 'none', stroke: c, 'stroke-width': 2,
        points: pts.map(function (r) { return X.pos(r.axes[xa.path]) + ',' + Y(shown(metric, r.metrics[metric])); }).join(' ')}));
    pts.forEach(function (r) {
      var dot = s('circle', {cx: X.pos(r.axes[xa.path]), cy: Y(shown(metric, r.metrics[metric])), r: 3.5, fill: c});
      dot.appendChild(s('title', {}, name + ', ' + short(xa.path) + '=' + valText(r.axes[xa.path]) + ': ' +
          fmt(shown(metric, r.metrics[metric])) + (unit ? ' ' + unit : '')));
      svg.appendChild(dot);
    });
    legend.appendChild(h('span', {}, h('span', {class: 'sw', style: 'background:' + c}), name));
  });
  return [svg, others.length ? legend : null];
}
function heatMap(metric) {
  var xa = D.axes[0], ya = D.axes[1], rows = okRows(metric);
  var cw = Math.max(52, Math.min(92, 380 / xa.values.length)), ch = 30, L = 96, T = 26;
  var W = L + cw * xa.values.length + 90, H = T + ch * ya.values.length + 48;
  var unit = metricUnit(metric);
  var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': metric + ' heat map'});
  svg.appendChild(s('text', {x: L, y: 14, class: 'title'}, withUnit(metric, unit)));
  var vals = rows.map(function (r) { return shown(metric, r.metrics[metric]); });
  var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
  var cell = {};
  rows.forEach(function (r) { cell[valText(r.axes[xa.path]) + '|' + valText(r.axes[ya.path])] = shown(metric, r.metrics[metric]); });
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
  svg.appendChild(s('text', {x: L + cw * xa.values.length / 2, y: H - 10, 'text-anchor': 'middle'}, withUnit(xa.path, xa.unit)));
  var my = T + ch * ya.values.length / 2;
  svg.appendChild(s('text', {x: 12, y: my, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + my + ')'}, withUnit(short(ya.path), ya.unit)));
  // Colour scale.
  var gx = L + cw * xa.values.length + 16, gh = ch * ya.values.length;
  var defs = s('defs', {}), grad = s('linearGradient', {id: 'g' + metric.replace(/[^a-z0-9]/gi, ''), x1: 0, y1: 1, x2: 0, y2: 0});
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

// ---- page ---------------------------------------------------------------------
summary();
if (D.kind === 'run') {
  app.appendChild(h('h2', {}, 'Utilisation per unit'));
  app.appendChild(unitBars(D.units));
  if (D.timeline) {
    app.appendChild(h('h2', {}, 'Timeline of the ' + D.timeline.tracks.length + ' busiest tracks'));
    app.appendChild(h('p', {class: 'note'}, 'Tracks of the run\u2019s trace with the most busy time (the percentage after each name). ' +
        'Hover a slice for its name and time. Open the full trace (npusim run --trace) in ui.perfetto.dev for every track.'));
    app.appendChild(h('div', {class: 'scroll'}, timeline(D.timeline)));
  }
} else {
  app.appendChild(h('h2', {}, 'Metrics'));
  D.metrics.forEach(function (m) {
    app.appendChild(h('h3', {}, withUnit(m, metricUnit(m))));
    var box = h('div', {class: 'charts'});
    var lc = lineChart(m), col = h('div', {});
    lc.forEach(function (e) { if (e) col.appendChild(e); });
    box.appendChild(col);
    if (D.axes.length === 2 && okRows(m).length) box.appendChild(heatMap(m));
    app.appendChild(box);
  });
  app.appendChild(h('h2', {}, 'Results'));
  app.appendChild(resultsTable());
  app.appendChild(h('h2', {}, 'Utilisation per unit and point'));
  app.appendChild(utilTable());
}
})();
