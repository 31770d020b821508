// The self-contained HTML report of one run: every value is drawn as text, never as HTML.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("adk-eval-data").textContent);
  const PAGE = 100;
  const RANK = { error: 0, failed: 1, xpassed: 2, terminated: 3, xfailed: 4, passed: 5 };
  let page = 0;
  let selected = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "className") node.className = value;
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
    const indent = { style: `margin-left: ${item.path.length * 24}px` };
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

  header();
  for (const id of ["status", "search"]) document.getElementById(id).addEventListener("input", () => { page = 0; table(); });
  document.getElementById("prev").addEventListener("click", () => { page = Math.max(0, page - 1); table(); });
  document.getElementById("next").addEventListener("click", () => { page += 1; table(); });
  table();
  const first = visible()[0];
  if (first) { selected = first.index; table(); detail(first.run); }
})();
