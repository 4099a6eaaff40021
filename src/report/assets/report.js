// src/report/assets/report.js: draws the HTML postmortem's timeline and
// collective alignment from the inline JSON (inlined by html_report.cc).
// No library and nothing fetched: the page opens from a mail attachment.
// When done it sets the body's data-rendered="ok", the number of lanes and
// strips drawn and the milliseconds it took; the browser tests read those.
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var data = JSON.parse(document.getElementById('ncclpm-data').textContent);

  function el(name, attrs, parent, text) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  // Times are the logs' own wall-clock times, shown as written (no zone), and
  // without the year when the lines gave none (c10's `E0918 19:29:24`).
  function fmtTime(us, withDate) {
    var s = new Date(us / 1000).toISOString().replace('T', ' ');
    if (!withDate) return s.slice(11, 19);
    return data.years_known ? s.slice(0, 19) : s.slice(5, 19);
  }

  function laneTitle(lane) {
    var s = lane.label + (lane.host && lane.label.indexOf(lane.host) < 0 ? ' on ' + lane.host : '');
    s += '\n' + lane.lines + ' lines';
    if (lane.first) s += ', ' + fmtTime(lane.first, true) + ' to ' + fmtTime(lane.last, true);
    return s;
  }

  // ---- timeline -----------------------------------------------------------
  var LABEL_W = 210, LANE_H = 15, HEADER_H = 16, AXIS_H = 22, RIGHT_PAD = 16;
  var timed = data.start_us > 0 && data.end_us > data.start_us;
  var view = { from: data.start_us, to: data.end_us };
  var dragFrom = null;  // where a pan started; the svg is redrawn while it lasts
  window.addEventListener('mouseup', function () { dragFrom = null; });

  function drawMark(g, m, x, y) {
    var cls = 'mark ' + m.kind + (m.ts ? '' : ' untimed');
    var shape;
    if (m.kind === 'error') shape = el('circle', { cx: x, cy: y, r: 4.5, 'class': cls }, g);
    else if (m.kind === 'watchdog') shape = el('rect', { x: x - 4, y: y - 4, width: 8, height: 8, 'class': cls,
      transform: 'rotate(45 ' + x + ' ' + y + ')' }, g);
    else if (m.kind === 'exit') shape = el('rect', { x: x - 4, y: y - 4, width: 8, height: 8, 'class': cls }, g);
    else if (m.kind === 'completed') shape = el('circle', { cx: x, cy: y, r: 3.5, 'class': cls }, g);
    else shape = el('path', { d: 'M' + x + ' ' + (y - 5) + 'l5 9h-10z', 'class': cls }, g);
    el('title', {}, shape, m.kind + (m.ts ? ' at ' + fmtTime(m.ts, true) : ' (no time on the line)') +
      '\n' + m.at + '\n' + m.text);
  }

  function drawTimeline() {
    var box = document.getElementById('timeline-view');
    box.textContent = '';
    if (!data.lanes.length) {
      var p = document.createElement('p');
      p.className = 'empty';
      p.textContent = 'No line could be placed on a lane.';
      box.appendChild(p);
      return 0;
    }
    var width = Math.max(700, box.clientWidth || 1100);
    var plotW = width - LABEL_W - RIGHT_PAD;
    var rows = [];  // the job's phases, host headers and lanes, top to bottom
    if (timed && data.phases.length) rows.push({ phases: data.phases });
    var lastHost = null;
    data.lanes.forEach(function (lane) {
      if (!data.by_host && lane.host !== lastHost) rows.push({ header: lane.host || '(no host)' });
      lastHost = lane.host;
      rows.push({ lane: lane });
    });
    var height = AXIS_H + rows.reduce(function (h, r) { return h + (r.header ? HEADER_H : LANE_H); }, 0) + 6;
    var svg = el('svg', { width: width, height: height, viewBox: '0 0 ' + width + ' ' + height,
      'data-lanes': data.lanes.length }, box);
    var span = Math.max(1, view.to - view.from);
    function xOf(us) { return LABEL_W + (us - view.from) / span * plotW; }
    function clampX(x) { return Math.max(LABEL_W - 6, Math.min(width - 6, x)); }

    // axis
    var axis = el('g', { 'class': 'axis' }, svg);
    if (timed) {
      for (var i = 0; i <= 6; i++) {
        var t = view.from + span * i / 6;
        var x = LABEL_W + plotW * i / 6;
        el('line', { x1: x, x2: x, y1: AXIS_H - 4, y2: height }, axis);
        el('text', { x: x, y: 12, 'text-anchor': i === 0 ? 'start' : (i === 6 ? 'end' : 'middle') }, axis,
          fmtTime(t, i === 0));
      }
    } else {
      el('text', { x: LABEL_W, y: 12 }, axis, 'The lines carry no times: marks are shown in their order.');
    }

    // What the main process said the whole job was doing, one strip above the lanes.
    function drawPhases(phases, y) {
      var g = el('g', { 'class': 'job-phases' }, svg);
      el('text', { x: 8, y: y + 11 }, g, 'job phase (main process)');
      phases.forEach(function (p) {
        var p0 = clampX(xOf(p.from)), p1 = clampX(xOf(p.to));
        var r = el('rect', { x: p0, y: y + 1, width: Math.max(2, p1 - p0), height: LANE_H - 2,
          'class': 'phase ' + p.label.replace(/ /g, '-'), 'data-phase': p.label }, g);
        el('title', {}, r, p.label + ' from ' + fmtTime(p.from, true) + ' on\n' + p.why);
        if (p1 - p0 > 8 * p.label.length) el('text', { x: p0 + 3, y: y + 11, 'class': 'phase-label' }, g, p.label);
      });
    }

    var y = AXIS_H, drawn = 0;
    rows.forEach(function (row) {
      if (row.phases) {
        drawPhases(row.phases, y);
        y += LANE_H;
        return;
      }
      if (row.header) {
        el('text', { x: 4, y: y + 12, 'class': 'host-label' }, svg, row.header);
        y += HEADER_H;
        return;
      }
      var lane = row.lane;
      var g = el('g', { 'class': 'lane' + (lane.culprit ? ' culprit' : '') + (lane.expanded ? ' expanded' : ''),
        'data-label': lane.label, 'data-ranks': lane.ranks.join(' ') }, svg);
      el('title', {}, g, laneTitle(lane));
      el('rect', { x: 0, y: y, width: width, height: LANE_H, 'class': 'lane-bg' }, g);
      el('text', { x: (data.by_host && lane.expanded) ? 18 : 8, y: y + 11 }, g,
        (lane.expanded ? '\u21b3 ' : '') + lane.label);
      var mid = y + LANE_H / 2;
      if (timed) lane.bands.forEach(function (b) {
        var b0 = clampX(xOf(b.from)), b1 = clampX(xOf(b.to));
        var kind = b.label.indexOf('start-up') === 0 ? ' startup' : '';
        var band = el('rect', { x: b0, y: y + 1, width: Math.max(2, b1 - b0), height: LANE_H - 2,
          'class': 'band' + kind }, g);
        el('title', {}, band, b.label + ' from ' + fmtTime(b.from, true) + ' on\n' + b.why);
      });
      if (timed && lane.first) {
        var x0 = clampX(xOf(lane.first)), x1 = clampX(xOf(lane.last));
        el('rect', { x: x0, y: mid - 2, width: Math.max(1, x1 - x0), height: 4, 'class': 'span' }, g);
      }
      lane.marks.forEach(function (m, k) {
        var mx = timed && m.ts ? xOf(m.ts) : LABEL_W + 12 + k * 14;
        if (mx < LABEL_W - 6 || mx > width - 4) return;  // zoomed out of view
        drawMark(g, m, mx, mid);
      });
      y += LANE_H;
      drawn++;
    });
    if (timed && data.hang_start_us) {
      var hx = xOf(data.hang_start_us);
      if (hx >= LABEL_W && hx <= width - RIGHT_PAD) {
        var hang = el('line', { x1: hx, x2: hx, y1: AXIS_H - 6, y2: height, 'class': 'hang-line' }, svg);
        el('title', {}, hang, 'the hang began at ' + fmtTime(data.hang_start_us, true) +
          ' (watchdog firing minus how long its collective ran)');
      }
    }
    if (timed) enableZoom(svg, width, plotW);
    return drawn;
  }

  function enableZoom(svg, width, plotW) {
    var full = { from: data.start_us, to: data.end_us };
    function usAt(clientX) {
      var r = svg.getBoundingClientRect();
      return view.from + (clientX - r.left - LABEL_W) / plotW * (view.to - view.from);
    }
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var at = usAt(ev.clientX), f = ev.deltaY < 0 ? 0.8 : 1.25;
      var from = at - (at - view.from) * f, to = at + (view.to - at) * f;
      if (to - from < 1000) return;  // a millisecond across is deep enough
      view.from = Math.max(full.from, from);
      view.to = Math.min(full.to, to);
      drawTimeline();
    }, { passive: false });
    svg.addEventListener('mousedown', function (ev) { dragFrom = { x: ev.clientX, from: view.from, to: view.to }; });
    svg.addEventListener('mousemove', function (ev) {
      if (!dragFrom) return;
      var shift = (dragFrom.x - ev.clientX) / plotW * (dragFrom.to - dragFrom.from);
      shift = Math.max(full.from - dragFrom.from, Math.min(full.to - dragFrom.to, shift));
      view.from = dragFrom.from + shift;
      view.to = dragFrom.to + shift;
      drawTimeline();
    });
    svg.addEventListener('dblclick', function () { view.from = full.from; view.to = full.to; drawTimeline(); });
  }

  // ---- collective alignment -------------------------------------------------
  // One cell per rank, coloured by how its value compares with most ranks':
  // the odd rank among thousands stands out.
  function mostCommon(values) {
    var count = {}, best = -1, most = 0;
    values.forEach(function (v) {
      if (v < 0) return;
      count[v] = (count[v] || 0) + 1;
      if (count[v] > most) { most = count[v]; best = v; }
    });
    return best;
  }

  function drawStrip(box, caption, column, progress) {
    var values = progress.map(function (p) { return p[column]; });
    var common = mostCommon(values);
    if (common < 0) return 0;
    var odd = [];
    progress.forEach(function (p) { if (p[column] >= 0 && p[column] !== common) odd.push('rank ' + p[0] + ' (' + p[column] + ')'); });
    var c = document.createElement('p');
    c.className = 'strip-caption';
    c.textContent = caption + ': ' + common + ' on most ranks' +
      (odd.length ? '; different: ' + odd.slice(0, 12).join(', ') + (odd.length > 12 ? ' and ' + (odd.length - 12) + ' more' : '') : '');
    box.appendChild(c);
    var width = Math.max(700, box.clientWidth || 1100) - 24;
    var cell = Math.max(4, Math.min(14, Math.floor(width / progress.length)));
    var perRow = Math.max(1, Math.floor(width / cell));
    var rows = Math.ceil(progress.length / perRow);
    var svg = el('svg', { width: width + 24, height: rows * cell + 12, 'class': 'strip', 'data-column': column }, box);
    progress.forEach(function (p, i) {
      var v = p[column];
      var cls = v < 0 ? 'unknown' : (v === common ? 'common' : (v < common ? 'behind' : 'ahead'));
      var r = el('rect', { x: 12 + (i % perRow) * cell, y: 6 + Math.floor(i / perRow) * cell, width: cell - 1,
        height: cell - 1, 'class': 'cell ' + cls, 'data-rank': p[0] }, svg);
      el('title', {}, r, 'rank ' + p[0] + ': last enqueued ' + (p[1] < 0 ? '?' : p[1]) + ', last completed ' +
        (p[2] < 0 ? '?' : p[2]) + ', timed out in seq ' + (p[3] < 0 ? '?' : p[3]));
    });
    return 1;
  }

  function drawAlignment() {
    var box = document.getElementById('alignment-view');
    box.textContent = '';
    var strips = drawStrip(box, 'last completed seq', 2, data.progress) +
                 drawStrip(box, 'last enqueued seq', 1, data.progress) +
                 drawStrip(box, 'watchdog timed out in seq', 3, data.progress);
    if (!strips) {
      var p = document.createElement('p');
      p.className = 'empty';
      p.textContent = 'No rank logged how far it got in its process group (no watchdog timeout, status line or ' +
        'Flight Recorder dump).';
      box.appendChild(p);
    }
    return strips;
  }

  var started = performance.now();
  var lanes = drawTimeline();
  var strips = drawAlignment();
  document.body.setAttribute('data-lanes', lanes);
  document.body.setAttribute('data-strips', strips);
  document.body.setAttribute('data-render-ms', Math.round(performance.now() - started));
  document.body.setAttribute('data-rendered', 'ok');
})();
