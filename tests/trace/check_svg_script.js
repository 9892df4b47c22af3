// SPDX-License-Identifier: MIT
/*
 * The SVG flame graph's script (lib/trace/svg_js.h) run by node on a
 * written SVG (synth1.svg of test_writers.c) against a small stand-in for
 * the browser's DOM: hover, zoom, reset, search.
 */
"use strict";
const assert = require("assert");
const fs = require("fs");

const svg = fs.readFileSync(process.argv[2], "utf8");
const script = svg.match(/<!\[CDATA\[([\s\S]*?)\]\]>/)[1];
const unxml = (s) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">")
	.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");

function element(attrs, text) {
	return {
		attrs: Object.assign({}, attrs), textContent: text || "", style: {},
		listeners: {},
		getAttribute(k) { return this.attrs[k]; },
		setAttribute(k, v) { this.attrs[k] = String(v); },
		addEventListener(type, fn) { this.listeners[type] = fn; },
	};
}

const frames = [];
const re = /<g class="f"><title>([^<]*)<\/title><rect x="([^"]*)" y="([^"]*)" width="([^"]*)"[^>]*fill="([^"]*)"[^>]*\/><text[^>]*>([^<]*)<\/text><\/g>/g;
for (let m; (m = re.exec(svg));) {
	const g = element({ class: "f" });
	const parts = {
		title: element({}, unxml(m[1])),
		rect: element({ x: m[2], y: m[3], width: m[4], fill: m[5] }),
		text: element({ x: "0" }, unxml(m[6])),
	};
	g.querySelector = (sel) => parts[sel];
	g.closest = () => g;
	frames.push(g);
}
assert(frames.length > 5, "frames read from the SVG");
const byId = {};
for (const id of ["details", "matched", "unzoom", "search", "frames"])
	byId[id] = element({});
global.document = {
	documentElement: element({ width: "1200", "data-pad": "10" }),
	getElementById: (id) => byId[id],
	querySelectorAll: () => frames,
};
let answer = "", alerted = null;
global.prompt = () => answer;
global.alert = (e) => { alerted = String(e); };
global.window = { addEventListener() {} };
const api = new Function(script + "; return { init, zoom, unzoom, search };")();
api.init();

const SPAN = 1180;
const name = (g) => g.t.substring(0, g.t.lastIndexOf(" ("));
const rect = (g) => g.querySelector("rect").attrs;
const x0 = frames.map((g) => +rect(g).x), w0 = frames.map((g) => +rect(g).width);
const find = (n) => frames.find((g) => name(g) === n);

byId.frames.listeners.mouseover({ target: find("qkv_proj") });
assert.match(byId.details.textContent, /^qkv_proj \(3\.200 ms, \d+\.\d\d%\)$/);

const z = find("qkv_proj");
byId.frames.listeners.click({ target: z });
for (const [i, g] of frames.entries()) {
	const inside = x0[i] + 0.005 >= x0[frames.indexOf(z)] &&
		x0[i] + w0[i] <= x0[frames.indexOf(z)] + w0[frames.indexOf(z)] + 0.005;
	const y = +rect(g).y, zy = +rect(z).y;
	if (["all", "main", "forward"].includes(name(g))) {
		assert.strictEqual(g.style.display, "", name(g) + " shown");
		assert.strictEqual(g.style.opacity, 0.5, name(g) + " dimmed");
		assert.strictEqual(+rect(g).width, SPAN);
	} else if (inside && y <= zy) {
		assert.strictEqual(g.style.display, "", name(g) + " shown");
		assert(Math.abs(+rect(g).width - w0[i] * SPAN / w0[frames.indexOf(z)]) < 0.01);
	} else {
		assert.strictEqual(g.style.display, "none", name(g) + " hidden");
	}
}
assert.strictEqual(+rect(z).x, 10);
assert.strictEqual(z.querySelector("text").textContent, "qkv_proj");

api.unzoom();
frames.forEach((g, i) => {
	assert.strictEqual(g.style.display, "");
	assert.strictEqual(+rect(g).x, x0[i]);
	assert.strictEqual(+rect(g).width, w0[i]);
});

answer = "softmax|rmsnorm";
api.search();
const hits = frames.filter((g) => rect(g).fill === "rgb(230,0,230)");
assert.deepStrictEqual(hits.map(name).sort(),
	["[GPU_Kernel]rmsnorm_kernel", "[GPU_Kernel]softmax_kernel"]);
const share = hits.reduce((s, g) => s + +rect(g).width, 0) / SPAN * 100;
assert.strictEqual(byId.matched.textContent, "Matched: " + share.toFixed(1) + "%");

answer = "^(forward|qkv_proj)$"; /* nested: counted once */
api.search();
assert.strictEqual(byId.matched.textContent,
	"Matched: " + (+rect(find("forward")).width / SPAN * 100).toFixed(1) + "%");

answer = "[";
api.search();
assert.match(alerted, /SyntaxError/);
answer = "";
api.search();
assert.strictEqual(byId.matched.textContent, " ");
assert(frames.every((g) => rect(g).fill === g.fill0), "colours restored");
console.log(`svg script: hover, zoom, reset and search on ${frames.length} frames`);
