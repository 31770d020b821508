// The self-contained HTML report of one run: every value is drawn as text, never as HTML.
"use strict";
(function () {
  const inline = document.getElementById("adk-eval-data");
  let data = null;
  const PAGE = 100;
  const RANK = { error: 0, failed: 1, xpassed: 2, terminated: 3, xfailed: 4, passed: 5 };
  let page = 0;
  let selected = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "className") node.className = value;
      else if (key === "indent") node.style.marginLeft = `${value * 24}px`;  // CSSOM: allowed by a strict CSP
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  const json = (value) => JSON.stringify(value, null, 2);
  const failedMetrics = (run) =>
    Object.entries(run.metrics).filter(([, m]) => m.applicable !== false && !m.passed).map(([n]) => n);

  function header() {
    const s = data.summary;
    const parts = ["passed", "failed", "errors", "terminated", "xfailed", "xpassed", "not_run"]
      .filter((k) => s[k]).map((k) => `${s[k]} ${k.replace("_", " ")}`);
    document.getElementById("title").textContent =
      `${s.total} runs: ${parts.join(", ") || "none"} (pass rate ${Math.round(data.pass_rate * 100)}%)`;
    document.getElementById("meta").textContent =
      `adk-eval ${data.adk_eval_version}, ${data.created_at}, ${data.repeat} run(s) per case, ` +
      `${(data.duration_ms / 1000).toFixed(1)} s`;
  }

  function visible() {
    const status = document.getElementById("status").value;
    const search = document.getElementById("search").value.trim().toLowerCase();
    return data.results
      .map((run, index) => ({ run, index }))
      .filter(({ run }) => (status === "all" || run.outcome === status) &&
        (!search || run.name.toLowerCase().includes(search)))
      .sort((a, b) => RANK[a.run.outcome] - RANK[b.run.outcome] || a.index - b.index);
  }

  function table() {
    const rows = visible();
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    page = Math.min(page, pages - 1);
    const body = document.getElementById("cases");
    body.replaceChildren();
    for (const { run, index } of rows.slice(page * PAGE, (page + 1) * PAGE)) {
      const tr = el("tr", { className: "case" + (index === selected ? " selected" : ""), "data-index": index },
        el("td", {}, run.name), el("td", {}, run.attempt),
        el("td", { className: `outcome ${run.outcome}` }, run.outcome),
        el("td", {}, run.turns), el("td", {}, `${(run.duration_ms / 1000).toFixed(2)} s`),
        el("td", {}, failedMetrics(run).join(", ")), el("td", {}, run.token_usage.total_tokens));
      tr.addEventListener("click", () => { selected = index; table(); detail(run); });
      body.append(tr);
    }
    document.getElementById("count").textContent = `${rows.length} of ${data.results.length} runs`;
    document.getElementById("page").textContent = `page ${page + 1} of ${pages}`;
  }

  function entry(item) {
    const indent = { indent: item.path.length };
    const inside = item.path.length ? el("span", { className: "mark" }, `inside ${item.path.join(" > ")}`) : null;
    if (item.kind === "message") {
      return el("div", { className: `entry ${item.role}`, ...indent },
        el("span", { className: "who" }, `${item.role === "user" ? "user" : item.author}: `), item.text, inside);
    }
    if (item.kind === "tool_call") {
      const how = item.long_running ? el("span", { className: "mark" }, "answered by a user agent") : null;
      return el("div", { className: "entry tool_call", ...indent },
        el("span", { className: "who" }, `${item.author} `), `calls ${item.name}`, how, inside,
        el("div", {}, `args: ${json(item.args)}`),
        el("div", {}, item.response === null ? "(no response)" : `result: ${json(item.response)}`));
    }
    if (item.kind === "tool_response") {
      return el("div", { className: "entry tool_response", ...indent },
        el("span", { className: "who" }, `${item.author} `), `answers ${item.name}: ${json(item.response)}`, inside);
    }
    if (item.kind === "state_change") {
      return el("div", { className: "entry state_change", ...indent },
        el("span", { className: "who" }, item.source ? `state change by ${item.source}: ` : "state change: "),
        json(item.delta), inside);
    }
    return el("div", { className: "entry error", ...indent },
      el("span", { className: "who" }, `error ${item.code}: `), item.message || "", inside);
  }

  function detail(run) {
    const box = document.getElementById("detail");
    box.replaceChildren(
      el("h2", {}, `${run.name} (attempt ${run.attempt}) `, el("span", { className: `outcome ${run.outcome}` }, run.outcome)));
    const repeats = data.results.filter((r) => r.name === run.name && r !== run);
    if (repeats.length) {
      box.append(el("div", {}, "other runs: ",
        ...repeats.map((r) => el("span", { className: `mark ${r.outcome}` }, `#${r.attempt} ${r.outcome}`))));
    }
    if (run.error) box.append(el("div", { className: "entry error" }, `${run.error.phase} error, ${run.error.type}: ${run.error.message}`));
    if (run.termination) box.append(el("div", {}, `stopped by ${run.termination.kind} (limit ${json(run.termination.limit)})`));
    box.append(el("h2", {}, "Metrics"));
    for (const [name, m] of Object.entries(run.metrics)) {
      const verdict = m.applicable === false ? "n/a" : m.passed ? "passed" : "failed";
      box.append(el("div", { className: "metric" }, el("span", { className: `outcome ${verdict}` }, verdict), ` ${name}`,
        m.score === null ? "" : ` (score ${m.score})`, m.error ? ` error: ${m.error}` : ""));
      for (const line of m.evidence) box.append(el("div", { className: "evidence" }, line));
    }
    box.append(el("h2", {}, "Conversation"));
    const conversation = run.conversation || [];
    if (!conversation.length) box.append(el("pre", {}, run.transcript));
    for (const item of conversation) box.append(entry(item));
    box.append(el("h2", {}, "Final state"), el("pre", {}, json(run.final_state)));
    const t = run.token_usage, u = run.user_agent_token_usage;
    box.append(el("h2", {}, "Tokens"),
      el("div", {}, `system: ${t.input_tokens} in, ${t.output_tokens} out; user agents: ${u.input_tokens} in, ${u.output_tokens} out`));
  }

  function showRun(report) {
    data = report;
    page = 0;
    selected = null;
    show("run");
    header();
    table();
    const first = visible()[0];
    document.getElementById("detail").replaceChildren();
    if (first) { selected = first.index; table(); detail(first.run); }
  }

  for (const id of ["status", "search"]) document.getElementById(id).addEventListener("input", () => { page = 0; table(); });
  document.getElementById("prev").addEventListener("click", () => { page = Math.max(0, page - 1); table(); });
  document.getElementById("next").addEventListener("click", () => { page += 1; table(); });

  // --- the viewer: stored runs through its JSON API (absent from the static report)
  function show(which) {
    document.getElementById("run").hidden = which !== "run";
    document.getElementById("runs").hidden = which !== "runs";
    document.getElementById("comparison").hidden = which !== "comparison";
  }

  async function api(path) {
    const token = document.querySelector('meta[name="viewer-token"]').content;
    const response = await fetch(path, { headers: { "X-Viewer-Token": token } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  function chart(runs) {
    const svg = document.getElementById("chart");
    const ns = "http://www.w3.org/2000/svg";
    svg.replaceChildren();
    const ordered = runs.slice().reverse();  // oldest first
    const width = 640, height = 140, pad = 20;
    const step = ordered.length > 1 ? (width - 2 * pad) / (ordered.length - 1) : 0;
    const points = ordered.map((run, i) => [pad + i * step, height - pad - run.pass_rate * (height - 2 * pad)]);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points.map((p) => p.join(",")).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "#2f6fde");
    line.setAttribute("stroke-width", "2");
    svg.append(line);
    ordered.forEach((run, i) => {
      const dot = document.createElementNS(ns, "circle");
      dot.setAttribute("cx", points[i][0]);
      dot.setAttribute("cy", points[i][1]);
      dot.setAttribute("r", "4");
      dot.setAttribute("fill", run.pass_rate === 1 ? "#18794e" : "#c4302b");
      const title = document.createElementNS(ns, "title");
      title.textContent = `run ${run.id}: ${Math.round(run.pass_rate * 100)}%`;
      dot.append(title);
      svg.append(dot);
    });
  }

  async function showRuns() {
    const runs = await api("api/runs");
    show("runs");
    document.getElementById("title").textContent = `${runs.length} stored runs`;
    document.getElementById("meta").textContent = "newest first; tick two runs to compare them";
    chart(runs);
    const body = document.getElementById("run-rows");
    body.replaceChildren();
    for (const run of runs) {
      const tick = el("input", { type: "checkbox", "data-run": run.id });
      const link = el("a", { href: "#" }, `run ${run.id}`);
      link.addEventListener("click", async (event) => { event.preventDefault(); showRun(await api(`api/runs/${run.id}`)); });
      body.append(el("tr", { className: "stored-run" }, el("td", {}, tick), el("td", {}, link),
        el("td", {}, run.created_at), el("td", {}, `${Math.round(run.pass_rate * 100)}%`),
        el("td", {}, `${run.passed}/${run.total}`), el("td", {}, run.command)));
    }
  }

  async function showComparison() {
    const ticked = [...document.querySelectorAll("#run-rows input:checked")].map((box) => box.dataset.run);
    const query = ticked.length === 2 ? `?a=${Math.min(...ticked)}&b=${Math.max(...ticked)}` : "";
    const result = await api(`api/compare${query}`);
    show("comparison");
    document.getElementById("title").textContent = `run ${result.a} → run ${result.b}`;
    const counts = {};
    for (const change of result.changes) counts[change.kind] = (counts[change.kind] || 0) + 1;
    document.getElementById("meta").textContent =
      Object.entries(counts).map(([kind, n]) => `${n} ${kind}`).join(", ") || "no cases";
    const body = document.getElementById("changes");
    body.replaceChildren();
    for (const change of result.changes) {
      const deltas = Object.entries(change.metric_deltas).map(([name, [a, b]]) => `${name}: ${a} → ${b}`).join("; ");
      body.append(el("tr", { className: `change ${change.kind}` }, el("td", {}, change.name),
        el("td", { className: `outcome ${change.kind === "regression" ? "failed" : change.kind === "improvement" ? "passed" : ""}` }, change.kind),
        el("td", {}, change.before ?? "-"), el("td", {}, change.after ?? "-"), el("td", {}, deltas)));
    }
  }

  function report(error) {
    document.getElementById("title").textContent = `error: ${error.message}`;
  }

  if (inline) {
    showRun(JSON.parse(inline.textContent));
  } else {
    document.getElementById("nav").hidden = false;
    document.getElementById("show-runs").addEventListener("click", () => showRuns().catch(report));
    document.getElementById("compare").addEventListener("click", () => showComparison().catch(report));
    showRuns().catch(report);
  }
})();
