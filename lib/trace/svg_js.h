/* SPDX-License-Identifier: MIT */
/*
 * The script of the SVG flame graph (svg.c): hover shows a frame's name,
 * time and share below the graph; a click zooms to a frame (its children
 * fill the width, its ancestors stay, dimmed); Search (or Ctrl-F) takes a
 * regular expression, colours the matching frames and says what share of
 * the time they cover. Frames are <g class="f"> holding a <title> "NAME
 * (TIME, SHARE)", a <rect> and a <text>.
 */
#ifndef EGPU_TRACE_SVG_JS_H
#define EGPU_TRACE_SVG_JS_H

static const char svg_js[] =
"\"use strict\";\n"
"var W, PAD, CH = 7, frames, details, matched, unzoombtn, searchbtn;\n"
"function name_of(g) { var t = g.t; return t.substring(0, t.lastIndexOf(' (')); }\n"
"function fit(g, x, w) {\n"
"  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
"  var n = name_of(g), room = Math.floor((w - 6) / CH);\n"
"  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
"  t.setAttribute('x', (x + 3).toFixed(2));\n"
"  t.textContent = room < 3 ? '' : n.length <= room ? n : n.substring(0, room - 2) + '..';\n"
"}\n"
"function init() {\n"
"  var svg = document.documentElement;\n"
"  W = +svg.getAttribute('width'); PAD = +svg.getAttribute('data-pad');\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  unzoombtn = document.getElementById('unzoom');\n"
"  searchbtn = document.getElementById('search');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  frames.forEach(function (g) {\n"
"    var r = g.querySelector('rect');\n"
"    g.x0 = +r.getAttribute('x'); g.w0 = +r.getAttribute('width');\n"
"    g.y0 = +r.getAttribute('y'); g.fill0 = r.getAttribute('fill');\n"
"    g.t = g.querySelector('title').textContent;\n"
"  });\n"
"  var all = document.getElementById('frames');\n"
"  all.addEventListener('mouseover', function (e) {\n"
"    var g = e.target.closest('g.f'); if (g) details.textContent = g.t; });\n"
"  all.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  all.addEventListener('click', function (e) {\n"
"    var g = e.target.closest('g.f'); if (g) zoom(g); });\n"
"  unzoombtn.addEventListener('click', unzoom);\n"
"  searchbtn.addEventListener('click', search);\n"
"  window.addEventListener('keydown', function (e) {\n"
"    if (e.key === 'f' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); search(); } });\n"
"}\n"
"function zoom(z) {\n"
"  var eps = 0.005, scale = (W - 2 * PAD) / z.w0;\n"
"  frames.forEach(function (g) {\n"
"    var inside = g.x0 + eps >= z.x0 && g.x0 + g.w0 <= z.x0 + z.w0 + eps;\n"
"    var below = g.y0 > z.y0 && g.x0 <= z.x0 + eps && g.x0 + g.w0 + eps >= z.x0 + z.w0;\n"
"    g.style.display = inside && g.y0 <= z.y0 || below ? '' : 'none';\n"
"    g.style.opacity = below ? 0.5 : 1;\n"
"    if (below) fit(g, PAD, W - 2 * PAD);\n"
"    else if (inside) fit(g, PAD + (g.x0 - z.x0) * scale, g.w0 * scale);\n"
"  });\n"
"  unzoombtn.style.opacity = 1;\n"
"}\n"
"function unzoom() {\n"
"  frames.forEach(function (g) {\n"
"    g.style.display = ''; g.style.opacity = 1; fit(g, g.x0, g.w0); });\n"
"  unzoombtn.style.opacity = 0;\n"
"}\n"
"function search() {\n"
"  var term = prompt('Search frames (regular expression); empty: clear', '');\n"
"  var re, spans = [], end = -1, sum = 0;\n"
"  if (term === null) return;\n"
"  try { re = term ? new RegExp(term) : null; } catch (err) { alert(err); return; }\n"
"  frames.forEach(function (g) {\n"
"    var hit = re && re.test(name_of(g));\n"
"    g.querySelector('rect').setAttribute('fill', hit ? 'rgb(230,0,230)' : g.fill0);\n"
"    if (hit) spans.push([g.x0, g.x0 + g.w0]);\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  spans.forEach(function (s) {\n"
"    if (s[1] > end) { sum += s[1] - Math.max(s[0], end); end = s[1]; } });\n"
"  matched.textContent = re ? 'Matched: ' + (100 * sum / (W - 2 * PAD)).toFixed(1) + '%' : ' ';\n"
"}\n";

#endif
