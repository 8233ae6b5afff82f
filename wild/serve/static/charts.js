// Hand-drawn inline SVG charts: a few polylines per run and a burndown need no library, and
// nothing is fetched from anywhere.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#4f7cff", "#e8643c", "#27a372", "#b150d8", "#d6a21c", "#1fa5b8", "#8a8f98"];

function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function bounds(values) {
  let lo = Math.min(...values), hi = Math.max(...values);
  if (!isFinite(lo) || !isFinite(hi)) { lo = 0; hi = 1; }
  if (lo === hi) { lo -= 1; hi += 1; }
  return [lo, hi];
}

function fmt(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a < 0.01 || a >= 1e5)) return v.toExponential(1);
  return Number(v.toPrecision(3)).toString();
}

// series: {name: [[x, y], ...]}; one panel with every series on one scale.
function lineChart(series, opts) {
  const xfmt = (opts && opts.xfmt) || fmt;
  const w = (opts && opts.width) || 300, h = (opts && opts.height) || 130;
  const pad = { l: 42, r: 8, t: 8, b: 18 };
  const names = Object.keys(series).filter((k) => series[k].length);
  const svg = svgEl("svg", { viewBox: `0 0 ${w} ${h}`, width: w, height: h, class: "chart", role: "img" });
  if (!names.length) {
    svg.append(svgEl("text", { x: w / 2, y: h / 2, "text-anchor": "middle", class: "muted" }, "no metrics yet"));
    return svg;
  }
  const all = names.flatMap((k) => series[k]);
  const [x0, x1] = bounds(all.map((p) => p[0]));
  const [y0, y1] = bounds(all.map((p) => p[1]).concat(opts && opts.fromZero ? [0] : []));
  const sx = (x) => pad.l + ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r);
  const sy = (y) => h - pad.b - ((y - y0) / (y1 - y0)) * (h - pad.t - pad.b);
  svg.append(svgEl("rect", { x: pad.l, y: pad.t, width: w - pad.l - pad.r, height: h - pad.t - pad.b, class: "plot" }));
  svg.append(svgEl("text", { x: pad.l - 4, y: pad.t + 8, "text-anchor": "end", class: "tick" }, fmt(y1)));
  svg.append(svgEl("text", { x: pad.l - 4, y: h - pad.b, "text-anchor": "end", class: "tick" }, fmt(y0)));
  svg.append(svgEl("text", { x: pad.l, y: h - 4, class: "tick" }, xfmt(x0)));
  svg.append(svgEl("text", { x: w - pad.r, y: h - 4, "text-anchor": "end", class: "tick" }, xfmt(x1)));
  names.forEach((name, i) => {
    const points = series[name].map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ");
    const colour = COLOURS[(i + ((opts && opts.colour) || 0)) % COLOURS.length];
    const line = svgEl("polyline", { points, fill: "none", stroke: colour, "stroke-width": 1.6 });
    line.append(svgEl("title", {}, name));
    svg.append(line);
  });
  return svg;
}

function legend(names) {
  return el("div", { class: "legend" }, names.map((name, i) =>
    el("span", { class: "key" }, el("i", { class: `swatch c${i % COLOURS.length}` }), name)));
}

// points: [{at: ISO time, open: n}]: a step line of open tasks over time.
function burndownChart(points) {
  const series = { "open tasks": points.map((p) => [Date.parse(p.at) / 1000, p.open]) };
  const clock = (t) => new Date(t * 1000).toISOString().slice(5, 16).replace("T", " ");
  const svg = lineChart(series, { width: 620, height: 120, xfmt: clock, fromZero: true });
  svg.setAttribute("class", "chart burndown");
  return svg;
}

function healthStrip(cells) {
  return cells.map((c) => el("span", { class: `cell ${c.outcome.replace(" ", "-")}`, title: `#${c.iteration}: ${c.outcome}` }));
}

// One metric of a sweep, the sweep's runs overlaid: each group (its parameters but the seeds)
// as its mean with a ±std band across seeds, on this chart's own y axis (log where the values
// span decades), and a red × where a run diverged (NaN or inf), at its last finite value.
function bandChart(metric, chart) {
  const w = 300, h = 150;
  const pad = { l: 46, r: 10, t: 18, b: 18 };
  const scale = chart.log ? "log" : "linear";
  const svg = svgEl("svg", { viewBox: `0 0 ${w} ${h}`, width: w, height: h, role: "img",
    class: "chart overlay-chart", "data-metric": metric, "data-scale": scale });
  const t = chart.log ? (v) => Math.log10(v) : (v) => v;
  const usable = (v) => v !== null && isFinite(v) && (!chart.log || v > 0);
  const points = chart.groups.flatMap((g) => g.band);
  const marks = chart.diverged;
  const [x0, x1] = bounds(points.map((p) => p[0]).concat(marks.map((d) => d.step)));
  const ys = points.flatMap((p) => [p[1], p[2], p[3]]).concat(marks.map((d) => d.value)).filter(usable).map(t);
  const [y0, y1] = bounds(ys);
  const sx = (x) => pad.l + ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r);
  const sy = (v) => {
    const y = usable(v) ? t(v) : y0;
    return h - pad.b - ((Math.min(Math.max(y, y0), y1) - y0) / (y1 - y0)) * (h - pad.t - pad.b);
  };
  const back = chart.log ? (y) => 10 ** y : (y) => y;
  svg.append(svgEl("text", { x: pad.l, y: 12, class: "metric-name" }, metric + (chart.log ? " (log)" : "")));
  svg.append(svgEl("rect", { x: pad.l, y: pad.t, width: w - pad.l - pad.r, height: h - pad.t - pad.b, class: "plot" }));
  svg.append(svgEl("text", { x: pad.l - 4, y: pad.t + 8, "text-anchor": "end", class: "tick y-tick" }, fmt(back(y1))));
  svg.append(svgEl("text", { x: pad.l - 4, y: h - pad.b, "text-anchor": "end", class: "tick y-tick" }, fmt(back(y0))));
  svg.append(svgEl("text", { x: pad.l, y: h - 4, class: "tick" }, fmt(x0)));
  svg.append(svgEl("text", { x: w - pad.r, y: h - 4, "text-anchor": "end", class: "tick" }, fmt(x1)));
  chart.groups.forEach((g) => {
    const colour = COLOURS[g.colour % COLOURS.length];
    const upper = g.band.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[3]).toFixed(1)}`);
    const lower = g.band.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[2]).toFixed(1)}`).reverse();
    svg.append(svgEl("polygon", { points: upper.concat(lower).join(" "), fill: colour, "fill-opacity": 0.18, stroke: "none", class: "band" }));
    const mean = svgEl("polyline", { points: g.band.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" "),
      fill: "none", stroke: colour, "stroke-width": 1.8, class: "mean", "data-group": g.label });
    mean.append(svgEl("title", {}, `${g.label} (n=${g.n}): mean ± std across seeds`));
    svg.append(mean);
  });
  marks.forEach((d) => {
    const mark = svgEl("text", { x: sx(d.step), y: sy(d.value) + 4, "text-anchor": "middle", class: "diverged", "data-run": d.run }, "×");
    mark.append(svgEl("title", {}, `${d.run} (${d.label}) diverged at step ${fmt(d.step)}`));
    svg.append(mark);
  });
  return svg;
}

function overlay(sweep) {
  const charts = Object.entries(sweep.overlay.metrics);
  if (!charts.length) return null;
  const groups = new Map();
  charts.forEach(([, c]) => c.groups.forEach((g) => groups.set(g.colour, g.label)));
  const broke = new Set(charts.flatMap(([, c]) => c.diverged.map((d) => d.run)));
  return el("div", { class: "overlay", dataset: { sweep: sweep.id } },
    el("div", { class: "small" }, el("span", { class: "mono" }, sweep.id), ` ${sweep.name}: runs overlaid, groups across seeds`,
      broke.size ? el("span", { class: "diverged-note" }, ` · ${broke.size} diverged (×)`) : null),
    el("div", { class: "legend" }, [...groups.entries()].map(([i, name]) =>
      el("span", { class: "key" }, el("i", { class: `swatch c${i % COLOURS.length}` }), name))),
    el("div", { class: "overlay-charts" }, charts.map(([metric, c]) => bandChart(metric, c))));
}
