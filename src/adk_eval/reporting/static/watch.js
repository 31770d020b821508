// The live page of `adk-eval view --watch`: fetches api/watch every few seconds and
// draws it. Every value is inserted as text (AdkEvalPage.el), never as HTML; the
// charts are inline SVG built element by element (no library, nothing from a CDN).
"use strict";
(() => {
  const { el } = AdkEvalPage;
  const SVG = "http://www.w3.org/2000/svg";
  const W = 640, H = 170, LEFT = 44, RIGHT = 8, TOP = 8, BOTTOM = 22;
  const query = new URLSearchParams(location.search);
  const EVERY = Math.max(1, Number(query.get("every")) || 5) * 1000;

  const when = (at) => new Date(at * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
  const percent = (x) => `${Math.round(100 * x)} %`;

  function svg(tag, attrs = {}, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  // A metric's chart: the pass rate per bucket, its interval band, a mark per alert.
  function chart(metric) {
    const points = metric.points;
    const start = points.length ? points[0].start : 0;
    const end = points.length ? points[points.length - 1].end : 1;
    const span = Math.max(end - start, 1e-9);
    const x = (t) => LEFT + ((t - start) / span) * (W - LEFT - RIGHT);
    const y = (rate) => TOP + (1 - rate) * (H - TOP - BOTTOM);
    const shown = points.filter((p) => p.rate !== null);
    const mid = (p) => x((p.start + p.end) / 2);
    const latest = shown.length ? shown[shown.length - 1] : null;
    const label = `Pass rate of ${metric.name} over time: ` +
      (latest ? `latest bucket ${percent(latest.rate)} [${percent(latest.low)}, ${percent(latest.high)}]` : "no verdict yet") +
      `; ${metric.alerts.length} alert(s)`;
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart" });
    root.append(svg("title", { text: label }));
    for (const rate of [0, 0.5, 1]) {
      root.append(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(rate), y2: y(rate), class: "grid" }));
      root.append(svg("text", { x: LEFT - 6, y: y(rate) + 4, class: "axis", "text-anchor": "end", text: percent(rate) }));
    }
    root.append(svg("text", { x: LEFT, y: H - 6, class: "axis", text: points.length ? when(start) : "" }));
    root.append(svg("text", { x: W - RIGHT, y: H - 6, class: "axis", "text-anchor": "end", text: points.length ? when(end) : "" }));
    if (shown.length) {
      const upper = shown.map((p) => `${mid(p)},${y(p.high)}`);
      const lower = shown.slice().reverse().map((p) => `${mid(p)},${y(p.low)}`);
      root.append(svg("polygon", { points: upper.concat(lower).join(" "), class: "band" }));
      root.append(svg("polyline", { points: shown.map((p) => `${mid(p)},${y(p.rate)}`).join(" "), class: "rate" }));
      for (const p of shown) {
        root.append(svg("circle", { cx: mid(p), cy: y(p.rate), r: 2.5, class: "point" },
          svg("title", { text: `${when(p.start)}: ${p.passed} passed, ${p.failed} failed, ${percent(p.rate)} [${percent(p.low)}, ${percent(p.high)}]` })));
      }
    }
    for (const alert of metric.alerts) {
      const at = Math.min(Math.max(x(alert.at), LEFT), W - RIGHT);
      root.append(svg("g", { class: "alert-mark" },
        svg("title", { text: `${when(alert.at)}: ${alert.line}` }),
        svg("line", { x1: at, x2: at, y1: TOP, y2: H - BOTTOM }),
        svg("polygon", { points: `${at - 5},${TOP} ${at + 5},${TOP} ${at},${TOP + 8}` })));
    }
    return el("figure", { class: "metric", dataset: { metric: metric.name } },
      el("figcaption", {}, el("strong", { text: metric.name }), ` ${label.slice(label.indexOf(":") + 1)}`), root);
  }

  function draw(data) {
    const t = data.totals;
    document.getElementById("totals").textContent =
      `${t.scored} conversation(s) scored, ${t.verdicts} verdict(s), ${t.failed} failed, ${t.alerts} alert(s)`;
    const charts = data.metrics.map(chart);
    document.getElementById("charts").replaceChildren(
      ...(charts.length ? charts : [el("p", { text: "No verdict yet: the watch has scored nothing." })]));
    const alerts = data.alerts.map((a) => el("li", {}, el("time", { text: when(a.at) }), ` ${a.line}`));
    document.getElementById("alerts").replaceChildren(...(alerts.length ? alerts : [el("li", { text: "No alert." })]));
    const rows = data.failing.map((row) => el("tr", {},
      el("td", {}, el("a", { href: row.href, text: row.name })),
      el("td", { text: when(row.at) }),
      el("td", { text: row.failed.join(", ") })));
    document.querySelector("#failing tbody").replaceChildren(
      ...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 3, text: "No failing conversation." }))]));
  }

  async function refresh() {
    const status = document.getElementById("status");
    try {
      const token = document.querySelector('meta[name="viewer-token"]').content;
      const response = await fetch("api/watch", { headers: { "X-Viewer-Token": token }, cache: "no-store" });
      const data = await response.json();
      if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
      draw(data);
      document.body.dataset.readAt = String(data.read_at);
      status.textContent = "";
    } catch (error) {
      status.textContent = `Could not read the watch: ${error.message} (trying again)`;
    }
    setTimeout(refresh, EVERY);
  }

  if (document.getElementById("charts")) refresh();
})();
