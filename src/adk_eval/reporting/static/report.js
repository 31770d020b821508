// The run pages: the self-contained HTML report (data inline) and `adk-eval view`
// (stored runs through its JSON API). Drawing helpers are page.js's, shared with
// the studio: every value is drawn as text, never as HTML.
"use strict";
(function () {
  const { el, pretty, block, mark, entry, diffLines } = AdkEvalPage;
  const inline = document.getElementById("adk-eval-data");
  const viewer = !inline;
  let data = null;
  const PAGE = 100;
  const RANK = { error: 0, failed: 1, xpassed: 2, terminated: 3, xfailed: 4, passed: 5 };
  const SOURCES = {
    mock: "mock", simulated: "simulated by a model", fault: "injected fault", real: "ran for real",
    callback: "answered by a callback", refused: "refused: not allowed",
    rejected: "rejected by ADK for its arguments",
    user_agent: "answered by a user agent", agent_tool: "agent tool",
    invariant: "stopped: it breaks an invariant",
    stopped: "not run: the run was already stopping",
  };
  const PHASES = { setup: "the case's setup", system: "the agent under test", user_agent: "a user agent", metric: "a metric" };
  // a run's turns in words: the user agents' replies after the first message
  const replies = (turns) => (turns === 0 ? "first message only" : `${turns} user repl${turns === 1 ? "y" : "ies"}`);
  let page = 0;
  let selected = null;

  const json = (value) => JSON.stringify(value, null, 2);
  const percent = (rate) => `${Math.round(rate * 100)}%`;
  // "80% [49%, 94%]": a rate and its 95% interval (just the rate where none was stored)
  const withInterval = (rate, interval) =>
    interval ? `${percent(rate)} [${percent(interval.low)}, ${percent(interval.high)}]` : percent(rate);
  const failedMetrics = (run) =>
    Object.entries(run.metrics).filter(([, m]) => m.applicable !== false && !m.passed).map(([n]) => n);

  // "cost $0.0123 ($0.0041 per passing run), 14,950 tokens", or why the cost is unknown
  function costText(cost) {
    if (!cost.tokens) return "no model tokens";
    if (cost.total_usd == null) return `${cost.tokens.toLocaleString("en")} tokens, cost unknown (no price for ${cost.unpriced_models.join(", ")})`;
    const per = cost.per_passing_run_usd == null ? "" : ` (${dollars(cost.per_passing_run_usd)} per passing run)`;
    return `cost ${dollars(cost.total_usd)}${per}, ${cost.tokens.toLocaleString("en")} tokens`;
  }
  // "2 retries (2 rate-limited), waited 4.1 s; cache 3 hits / 1 miss, saved $0.0012", as
  // ProviderStats.line() says it; "" when nothing is worth a line (or the report predates it)
  function providerText(p) {
    if (!p) return "";
    const pieces = [];
    if (p.retries || p.waited_s >= 0.05) {
      const causes = [[p.rate_limited, "rate-limited"], [p.server_errors, "server errors"]]
        .filter(([n]) => n).map(([n, what]) => `${n} ${what}`);
      pieces.push(`${p.retries} retr${p.retries === 1 ? "y" : "ies"}` +
        (causes.length ? ` (${causes.join(", ")})` : "") + `, waited ${Number(p.waited_s).toFixed(1)} s`);
    }
    if (p.cache_hits || p.cache_misses) {
      const usd = Number(p.saved_usd);
      const saved = p.saved_usd == null ? "an unknown amount (a model without a known price)"
        : `$${usd >= 0.0001 || usd === 0 ? usd.toFixed(4) : usd.toFixed(6)}`;
      pieces.push(`cache ${p.cache_hits} hit${p.cache_hits === 1 ? "" : "s"} / ` +
        `${p.cache_misses} miss${p.cache_misses === 1 ? "" : "es"}` +
        (p.cache_hits ? `, saved ${saved}` : ""));
    }
    if (p.replayed || p.recorded) pieces.push(`cassette ${p.replayed} replayed / ${p.recorded} recorded`);
    return pieces.join("; ");
  }
  const dollars = (value) => value == null ? "?" : value >= 1 ? `$${value.toFixed(2)}` : `$${Number(value.toPrecision(4))}`;

  // One line a reader sees first: did the suite pass, and was all of it run?
  function banner(s) {
    const box = document.getElementById("verdict");
    const notOk = s.failed + s.errors + s.terminated + s.xpassed;
    const [word, kind] = data.live === "running" ? [`RUNNING: ${s.total - s.not_run} of ${s.total} runs finished so far`, "warn"]
      : data.live === "abandoned" ? [`ENDED EARLY: its process stopped after ${s.total - s.not_run} of ${s.total} runs`, "warn"]
      : s.not_run ? [`INCOMPLETE: ${s.total - s.not_run} of ${s.total} runs ran`, "warn"]
      : notOk ? [`FAILED: ${notOk} of ${s.total} run(s) did not pass`, "fail"]
        : [`PASSED: every run passed${s.xfailed ? ` (${s.xfailed} expected failure(s))` : ""}`, "pass"];
    box.textContent = word;
    box.className = `verdict ${kind}`;
    box.hidden = false;
  }

  function header() {
    const s = data.summary;
    banner(s);
    const parts = ["passed", "failed", "errors", "terminated", "xfailed", "xpassed", "not_run"]
      .filter((k) => s[k]).map((k) => `${s[k]} ${k === "not_run" && data.live === "running" ? "not finished yet" : k.replace("_", " ")}`);
    document.getElementById("title").textContent =
      (s.not_run ? `${s.total - s.not_run} of ${s.total} runs ${data.live === "running" ? "finished" : "ran"}: ` : `${s.total} runs: `) +
      `${parts.join(", ") || "none"} (pass rate ` +
      `${s.total === s.not_run ? "- (no run finished)" : withInterval(data.pass_rate, (data.intervals || {}).pass_rate)}` +
      (data.repeat > 1 && data.intervals && data.intervals.pass_hat_k
        ? `; pass^${data.repeat} over cases ${withInterval(data.intervals.pass_hat_k.estimate, data.intervals.pass_hat_k)}`
        : "") + (data.intervals ? "; 95% intervals)" : ")");
    document.getElementById("meta").textContent =
      `adk-eval ${data.adk_eval_version}, ${data.created_at}, ` +
      (data.adaptive
        ? `adaptive repeats (at most ${data.adaptive.max} per case, ${data.adaptive.attempts_saved} run(s) saved), `
        : `${data.repeat} run(s) per case, `) +
      `${(data.duration_ms / 1000).toFixed(1)} s` +
      (data.interrupted ? `; interrupted (Ctrl-C), not run: ${data.not_run.join(", ")}` : "") +
      (data.cost ? `; ${costText(data.cost)}` : "") +
      (providerText(data.provider) ? `; providers: ${providerText(data.provider)}` : "");
    runsForReal(data.runs_for_real || {});
    safety(data.safety || null);
    robustness(data.robustness || null);
  }

  // ``run --faults``: each case's pass rate without and with faults and the drop, as the
  // terminal's table shows them ("4/10 17%-69%", "60 [20, 83]"), then the sentence.
  function robustness(block) {
    const box = document.getElementById("robustness");
    box.hidden = !block;
    if (!block) return;
    const rate = (passes, runs, interval) => `${passes}/${runs} ${percent(interval.low)}-${percent(interval.high)}`;
    const points = (share) => Math.round(share * 100);
    const row = (name, r, suite) => el("tr", { className: suite ? "suite" : "" },
      el("td", {}, suite ? el("b", {}, name) : name),
      el("td", {}, rate(r.passes, r.runs, r.pass_rate)),
      el("td", {}, rate(r.faulted_passes, r.faulted_runs, r.faulted_pass_rate)),
      el("td", {}, r.drop ? `${points(r.drop.estimate)} [${points(r.drop.low)}, ${points(r.drop.high)}]` : "-"),
      el("td", {}, r.drop ? (r.beyond_noise ? "yes" : "no") : "-"));
    box.querySelector("h2").textContent = `Robustness under ${points(block.fault_rate)}% tool faults ` +
      `(${block.repeat} run(s) a case each way, seed ${block.seed}; pass rates and drops with their 95% intervals)`;
    box.querySelector("tbody").replaceChildren(...block.cases.map((c) => row(c.name, c, false)),
      row("suite", block.overall, true));
    box.querySelector("p").textContent = block.summary;
  }

  // The safety report: attacked and breached runs per attack kind, each breach with its replay.
  function safety(block) {
    const box = document.getElementById("safety");
    box.hidden = !block;
    if (!block) return;
    const breached = block.attacks.reduce((n, kind) => n + kind.breached, 0);
    const attempted = block.attacks.reduce((n, kind) => n + kind.attempted, 0);
    box.querySelector("summary").textContent = `safety: ${breached} of ${attempted} attacked run(s) breached`;
    box.className = breached ? "breached" : "";
    box.querySelector("ul").replaceChildren(...block.attacks.map((kind) => el("li", {},
      el("b", {}, `${kind.attack}: `), `${kind.breached} of ${kind.attempted} breached (${kind.cases.map((c) => `${c.case} ${c.breached}/${c.attempted}`).join(", ")})`,
      ...block.runs.filter((run) => run.attack === kind.attack && run.breached).map((run) =>
        el("div", { className: "evidence" }, `${run.case} (run ${run.attempt + 1}): ${run.event}\nreplay: ${run.replay}`)))));
  }

  // What ran for real besides the tools the cases provide: one line per item, by kind.
  function runsForReal(kinds) {
    const box = document.getElementById("runs-for-real");
    const items = Object.entries(kinds).flatMap(([kind, lines]) => lines.map((line) => [kind, line]));
    const real = items.filter(([kind]) => kind !== "sandbox").length;
    box.hidden = items.length === 0;
    box.querySelector("summary").textContent = real
      ? `runs for real: ${real} item(s) besides the tools the cases provide`
      : "runs for real: nothing besides the tools the cases provide";
    box.querySelector("ul").replaceChildren(
      ...items.map(([kind, line]) => el("li", {}, el("b", {}, `${kind}: `), line)));
  }

  function visible() {
    const status = document.getElementById("status").value;
    const search = document.getElementById("search").value.trim().toLowerCase();
    const party = document.getElementById("party").value;
    const metric = document.getElementById("metric").value;
    const unreviewed = document.getElementById("unreviewed").checked;
    return data.results
      .map((run, index) => ({ run, index }))
      .filter(({ run }) => (status === "all" || run.outcome === status) &&
        (!search || run.name.toLowerCase().includes(search)) &&
        (party === "all" || (run.attribution && run.attribution.party === party)) &&
        (metric === "all" || (run.metrics[metric] && !run.metrics[metric].passed)) &&
        (!unreviewed || !reviewed.has(`${run.name}/${run.attempt}`)))
      .sort((a, b) => worst.get(a.run.name) - worst.get(b.run.name) ||
        first.get(a.run.name) - first.get(b.run.name) || a.run.attempt - b.run.attempt);
  }
  // Repeats grouped by case: cases by their worst run (errors first), a case's runs in order.
  let worst = new Map(), first = new Map();
  function groups() {
    worst = new Map();
    first = new Map();
    data.results.forEach((run, index) => {
      worst.set(run.name, Math.min(worst.has(run.name) ? worst.get(run.name) : 99, RANK[run.outcome]));
      if (!first.has(run.name)) first.set(run.name, index);
    });
  }

  function caseLabel(name) {
    const stats = (data.cases || []).find((c) => c.name === name);
    if (!stats || stats.repeat < 2) return "";
    const rate = (stats.intervals || {}).pass_rate;
    const span = rate ? ` [${percent(rate.low)}, ${percent(rate.high)}]` : "";
    return `${stats.passes}/${stats.runs}${span} · pass^k ${stats.pass_hat_k ? "yes" : "no"} · ${stats.label}`;
  }

  // One page of the case table: only PAGE rows are ever in the document.
  function table() {
    const rows = visible();
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    page = Math.min(page, pages - 1);
    const body = document.getElementById("cases");
    body.replaceChildren();
    let previous = null;
    for (const { run, index } of rows.slice(page * PAGE, (page + 1) * PAGE)) {
      const again = previous === run.name;  // another run of the case above: its name muted
      previous = run.name;
      const tr = el("tr", { className: "case" + (index === selected ? " selected" : "") + (again ? " again" : ""), "data-index": index },
        el("td", { className: again ? "again" : "" }, run.name), el("td", {}, run.attempt + 1),
        el("td", { className: `outcome ${run.outcome}` }, run.outcome),
        el("td", {}, replies(run.turns)), el("td", {}, `${(run.duration_ms / 1000).toFixed(2)} s`),
        el("td", {}, failedMetrics(run).join(", ")), el("td", {}, again ? "" : caseLabel(run.name)),
        el("td", {}, "cost_usd" in run ? `${run.token_usage.total_tokens} · ${dollars(run.cost_usd)}` : run.token_usage.total_tokens));
      tr.addEventListener("click", () => {
        if (viewer && currentRun !== null) {  // an address of its own: Back, Reload and links work
          go(`#/run/${currentRun}/case/${encodeURIComponent(run.name)}/${run.attempt}`);
        } else { selected = index; table(); detail(run); }
      });
      body.append(tr);
    }
    document.getElementById("count").textContent = `${rows.length} of ${data.results.length} runs`;
    document.getElementById("page").textContent = `page ${page + 1} of ${pages}`;
  }

  // {session: {k: v}, user: {...}, app: {...}} as ADK's flat keys (k, user:k, app:k).
  function flatState(scoped) {
    const flat = {};
    for (const [scope, values] of Object.entries(scoped || {})) {
      for (const [key, value] of Object.entries(values || {})) {
        flat[scope === "session" ? key : `${scope}:${key}`] = value;
      }
    }
    return flat;
  }

  // The conversation as entries; state changes show what they changed (before → after).
  function conversation(run) {
    const items = run.conversation || [];
    if (!items.length) return [block(run.transcript)];
    // Reports stored before `initial_state` was recorded: the changes alone, no "before".
    const state = run.initial_state ? flatState(run.initial_state) : null;
    return items.map((item) => {
      const inside = item.path.length ? [mark(`inside ${item.path.join(" > ")}`, "nested")] : [];
      const indent = item.path.length;
      if (item.kind === "message") {
        return entry(item.role === "user" ? "user" : "model_text",
          item.role === "user" && item.author !== "user" ? `user (${item.author})` : item.author,
          { marks: inside, indent, content: [block(item.text)] });
      }
      if (item.kind === "tool_call") {
        const source = item.answered_by || (item.long_running ? "user_agent" : null);
        const marks = source ? [mark(SOURCES[source] || source, source), ...inside] : [...inside];
        if (item.injected) marks.push(mark(`poisoned: ${item.injected}`, "injected"));
        return entry("tool_call", `${item.author} calls ${item.name}`, {
          marks, indent,
          content: [block(`args: ${json(item.args)}`),
            ...(item.argument_problems || []).map((problem) => block(`does not fit: ${problem}`)),
            item.raised ? block(`raised ${item.raised} (the tool itself never ran)`)
              : item.long_running && item.answered_by === "user_agent" ? block("(waits for the user's answer, below)")
                : block(item.response === null ? "(no response)" : `result: ${json(item.response)}`)],
        });
      }
      if (item.kind === "tool_response") {
        return entry("tool_result", `${item.author} answers ${item.name}`,
          { marks: inside, indent, content: [block(item.response)] });
      }
      if (item.kind === "state_change") {
        const lines = state ? diffLines(state, item.delta)
          : Object.entries(item.delta).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
        if (state) Object.assign(state, item.delta);
        return entry("state_change", item.source ? `state change by ${item.source}` : "state change",
          { marks: inside, indent, content: [block(lines.join("\n"))] });
      }
      return entry("error", `error ${item.code}`, { marks: inside, indent, content: [block(item.message || "")] });
    });
  }

  function metricsOf(run) {
    const nodes = [];
    for (const [name, m] of Object.entries(run.metrics)) {
      const verdict = m.applicable === false ? "n/a" : m.passed ? "passed" : "failed";
      nodes.push(el("div", { className: "metric" }, el("span", { className: `outcome ${verdict}` }, verdict), ` ${name}`,
        m.score === null ? "" : ` (score ${m.score})`, m.error ? ` error: ${m.error}` : ""));
      for (const line of m.evidence) nodes.push(el("div", { className: "evidence" }, line));
    }
    return nodes;
  }

  function detail(run) {
    const box = document.getElementById("detail");
    box.replaceChildren(
      el("h2", {}, `${run.name} (run ${run.attempt + 1}${data.repeat > 1 ? ` of ${data.repeat}` : ""}) `, el("span", { className: `outcome ${run.outcome}` }, run.outcome)));
    const repeats = data.results.filter((r) => r.name === run.name);
    if (repeats.length > 1) {
      const sideBySide = el("button", { type: "button", id: "side-by-side" }, "repeats side by side");
      sideBySide.addEventListener("click", () => showSideBySide(`${run.name}: every run`, repeats.map((r) => [`run ${r.attempt + 1}`, r])));
      box.append(el("div", {}, "runs: ",
        ...repeats.map((r) => mark(`run ${r.attempt + 1}: ${r.outcome}`, r.outcome)), " ", sideBySide));
    }
    if (viewer) {
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      for (const [key, value] of Object.entries({ id: "case-chart", width: 640, height: 110, role: "img", "aria-label": "this case over the stored runs" })) {
        svg.setAttribute(key, value);
      }
      box.append(el("h2", {}, "This case over the stored runs"), svg);
      api(`api/history?case=${encodeURIComponent(run.name)}`).then((points) => chart(svg, points)).catch(report);
    }
    if (run.error) box.append(entry("error", `error in ${PHASES[run.error.phase] || run.error.phase}`, { content: [block(`${run.error.type}: ${run.error.message}`)] }));
    if (run.xfail) box.append(el("div", { className: "xfail" }, `expected to fail (xfail): ${run.xfail}`));
    if (run.outcome === "passed" && !Object.keys(run.metrics).length) box.append(el("div", {}, "no metrics: passing only means it ran to the end"));
    if (run.termination) box.append(el("div", {}, `stopped by ${run.termination.kind} (limit ${json(run.termination.limit)})`));
    if (run.attribution) {
      const a = run.attribution;
      box.append(el("div", { className: "attribution" },
        el("b", {}, `attributed to: ${a.party}`), ` (confidence ${a.confidence.toFixed(2)}): ${a.evidence}` +
        (a.counterfactual ? `; counterfactual: ${a.counterfactual}` : "") + (a.flaky ? "; flaky: a re-run with a new seed flips it" : "")));
    }
    if ((run.warnings || []).length) {
      box.append(el("h2", {}, "Warnings"), ...run.warnings.map((w) => entry("error", "warning", { content: [block(w)] })));
    }
    if (viewer && currentRun !== null) box.append(reviewBox(run));
    box.append(el("h2", {}, "Metrics"), ...metricsOf(run));
    if (viewer && currentRun !== null) {
      for (const name of Object.keys(run.metrics)) box.append(reviewBox(run, name));
    }
    box.append(el("h2", {}, "Conversation"), ...conversation(run));
    box.append(el("h2", {}, "Final state"), block(json(run.final_state)));
    const t = run.token_usage, u = run.user_agent_token_usage;
    box.append(el("h2", {}, "Tokens"),
      el("div", {}, `agent under test: ${t.input_tokens} in, ${t.output_tokens} out; user agents: ${u.input_tokens} in, ${u.output_tokens} out`),
      ...(run.usage || []).map((item) => el("div", {}, `${item.role} on ${item.model}: ${item.calls} call(s), ` +
        `${item.input_tokens} in (${item.cached_tokens} cached), ${item.output_tokens} out, ${dollars(item.cost_usd)}`)),
      ...(providerText(run.provider) ? [el("div", { className: "provider" }, `providers: ${providerText(run.provider)}`)] : []));
  }

  // Conversations in columns: [label, run] pairs (a run may be missing: "not in this run").
  function showSideBySide(title, columns) {
    const box = document.getElementById(viewer && !document.getElementById("comparison").hidden ? "compare-detail" : "detail");
    const back = el("button", { type: "button" }, "back");
    back.addEventListener("click", () => {
      if (box.id === "detail") { const run = data.results[selected]; if (run) detail(run); } else box.replaceChildren();
    });
    box.replaceChildren(el("h2", {}, title, " ", back), el("div", { className: "side-by-side" },
      ...columns.map(([label, run]) => el("div", { className: "column" },
        el("h3", {}, `${label}: `, run ? el("span", { className: `outcome ${run.outcome}` }, run.outcome) : "not in this run"),
        ...(run ? [...metricsOf(run), ...conversation(run)] : [])))));
  }

  function showRun(report, chosen = null) {
    data = report;
    groups();
    const names = [...new Set(report.results.flatMap((run) => Object.keys(run.metrics)))].sort();
    document.getElementById("metric").replaceChildren(el("option", { value: "all" }, "any metric"),
      ...names.map((name) => el("option", { value: name }, `failing ${name}`)));
    page = 0;
    selected = null;
    show("run");
    header();
    table();
    const found = chosen && visible().find(({ run }) => run.name === chosen.name && String(run.attempt) === chosen.attempt);
    const first = found || visible()[0];
    document.getElementById("detail").replaceChildren();
    if (first) {
      selected = first.index;
      page = Math.floor(visible().findIndex((row) => row.index === first.index) / PAGE);
      table();
      detail(first.run);
    }
  }

  for (const id of ["status", "search", "party", "metric", "unreviewed"]) {
    document.getElementById(id).addEventListener("input", () => { page = 0; table(); });
  }
  // The runs of this report someone reviewed ("case/attempt"): the queue leaves them out.
  let reviewed = new Set();
  document.getElementById("prev").addEventListener("click", () => { page = Math.max(0, page - 1); table(); });
  document.getElementById("next").addEventListener("click", () => { page += 1; table(); });

  // --- the viewer: stored runs through its JSON API (absent from the static report)
  function show(which) {
    if (which !== "run") document.getElementById("verdict").hidden = true;
    if (which !== "run") document.getElementById("robustness").hidden = true;
    for (const id of ["run", "runs", "comparison", "judges", "queue"]) document.getElementById(id).hidden = which !== id;
  }

  // --- human review: agree or disagree with a run's verdict, or one metric's, with a note
  function reviewBox(run, metric = null) {
    const what = metric ? `metric ${metric} (${run.metrics[metric].passed ? "pass" : "fail"})` : `this run (${run.outcome})`;
    const note = el("input", { type: "text", placeholder: "note (optional)", "aria-label": `note on ${what}` });
    const said = el("span", { className: "reviewed" }, "");
    const mark = (verdict) => post("api/reviews", { run: currentRun, case: run.name, attempt: run.attempt, metric, verdict, note: note.value })
      .then(() => { said.textContent = ` reviewed: ${verdict}`; if (!metric) reviewed.add(`${run.name}/${run.attempt}`); }).catch(report);
    const agree = el("button", { type: "button", className: "agree" }, "agree");
    const disagree = el("button", { type: "button", className: "disagree" }, "disagree");
    agree.addEventListener("click", () => mark("agree"));
    disagree.addEventListener("click", () => mark("disagree"));
    return el("div", { className: "review", "data-metric": metric || "" }, `Review ${what}: `, agree, " ", disagree, " ", note, said);
  }
  // Keys: a / d agree or disagree with the open run's verdict, n opens the next run of the
  // queue (not while typing in a text field).
  document.addEventListener("keydown", (event) => {
    const typing = ["text", "search"].includes(event.target.type) || event.target.tagName === "TEXTAREA";
    if (!viewer || typing || event.ctrlKey || event.metaKey || event.altKey) return;
    const box = document.querySelector('#detail .review[data-metric=""]');
    if (!box) return;
    if (event.key === "n") {  // the next run of the queue (the filters as set)
      const rows = visible();
      const at = rows.findIndex((row) => row.index === selected);
      const next = rows[at + 1] || rows[0];
      if (next) go(`#/run/${currentRun}/case/${encodeURIComponent(next.run.name)}/${next.run.attempt}`);
    }
    if (event.key === "a") box.querySelector(".agree").click();
    if (event.key === "d") box.querySelector(".disagree").click();
  });

  function showJudges(judges) {
    show("judges");
    document.getElementById("title").textContent = `${judges.length} judge(s) reviewed`;
    document.getElementById("meta").textContent =
      "agreement of each LLM judge (metric, model, prompt) with the people who reviewed its verdicts";
    const fixed = (value) => (value == null ? "-" : value.toFixed(2));
    document.getElementById("judge-rows").replaceChildren(...judges.map((j) => el("tr", { className: "judge" },
      el("td", {}, j.metric), el("td", {}, j.model), el("td", {}, j.prompt_hash), el("td", {}, j.labels),
      el("td", {}, percent(j.raw)), el("td", {}, fixed(j.kappa)), el("td", {}, percent(j.base_rate)),
      el("td", {}, j.self_consistency == null ? "-" : percent(j.self_consistency)))));
  }

  // The review queue across the latest stored runs: not-passed first; a row opens its run.
  let queued = [];
  function showQueue(items = queued) {
    queued = items;
    show("queue");
    const status = document.getElementById("queue-status").value;
    const party = document.getElementById("queue-party").value;
    const search = document.getElementById("queue-search").value.trim().toLowerCase();
    const unreviewed = document.getElementById("queue-unreviewed").checked;
    const rows = items.filter((item) => (status === "all" || (status === "notok" ? !["passed", "xfailed"].includes(item.outcome) : item.outcome === status)) &&
      (party === "all" || item.party === party) && (!search || item.case.toLowerCase().includes(search)) &&
      (!unreviewed || !item.reviewed));
    document.getElementById("title").textContent = `review queue: ${rows.length} of ${items.length} runs`;
    document.getElementById("meta").textContent = "runs of the latest stored runs, not passed first; open one to review it (keys there: a agree, d disagree)";
    document.getElementById("queue-rows").replaceChildren(...rows.map((item) => {
      const link = el("a", { href: `#/run/${item.run_id}/case/${encodeURIComponent(item.case)}/${item.attempt}` }, `run ${item.run_id}`);
      return el("tr", { className: "queued" }, el("td", {}, link), el("td", {}, `${item.case} (run ${item.attempt + 1})`),
        el("td", { className: `outcome ${item.outcome}` }, item.outcome), el("td", {}, item.party || "-"),
        el("td", {}, item.failing.join(", ")), el("td", {}, item.reviewed ? "yes" : "no"));
    }));
  }
  for (const id of ["queue-status", "queue-party", "queue-search", "queue-unreviewed"]) {
    document.getElementById(id).addEventListener("input", () => showQueue());
  }

  async function post(path, body) {
    const token = document.querySelector('meta[name="viewer-token"]').content;
    const response = await fetch(path, {
      method: "POST", body: JSON.stringify(body),
      headers: { "X-Viewer-Token": token, "Content-Type": "application/json" },
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || response.statusText);
    return answer;
  }

  async function api(path) {
    const token = document.querySelector('meta[name="viewer-token"]').content;
    const response = await fetch(path, { headers: { "X-Viewer-Token": token } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  const reports = new Map();  // run id -> its report, fetched once
  async function runReport(id) {
    // a run still running is fetched again: it fills in as its runs finish
    if (!reports.has(id) || reports.get(id).live === "running") reports.set(id, await api(`api/runs/${id}`));
    return reports.get(id);
  }

  // Pass rate (solid) and, where runs were repeated, pass^k (dashed) over `points`, oldest first.
  function chart(svg, points) {
    const ns = "http://www.w3.org/2000/svg";
    svg.replaceChildren();
    const width = Number(svg.getAttribute("width")), height = Number(svg.getAttribute("height"));
    const left = 40, pad = 20, top = 24;
    const step = points.length > 1 ? (width - left - pad) / (points.length - 1) : 0;
    const x = (i) => left + i * step, y = (rate) => height - pad - rate * (height - pad - top);
    const text = (value, tx, ty) => {
      const node = document.createElementNS(ns, "text");
      node.setAttribute("x", tx);
      node.setAttribute("y", ty);
      node.setAttribute("font-size", "11");
      node.textContent = value;
      svg.append(node);
    };
    text("100%", 4, y(1) + 4);
    text("0%", 16, y(0) + 4);
    const repeated = points.some((p) => p.repeat > 1);
    const series = [["pass_rate", "#2f6fde", null]];
    if (repeated) series.push(["pass_hat_k", "#7a3ede", "5 4"]);
    for (const [key, colour, dash] of series) {
      const line = document.createElementNS(ns, "polyline");
      // pass^k exists only for runs with repeats: the others are left out, not drawn as 0
      const drawn = points.map((p, i) => [p, i]).filter(([p]) => key !== "pass_hat_k" || p.repeat > 1);
      line.setAttribute("points", drawn.map(([p, i]) => `${x(i)},${y(p[key])}`).join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", colour);
      line.setAttribute("stroke-width", "2");
      line.setAttribute("class", `series ${key}`);
      if (dash) line.setAttribute("stroke-dasharray", dash);
      svg.append(line);
    }
    points.forEach((point, i) => {
      const dot = document.createElementNS(ns, "circle");
      dot.setAttribute("cx", x(i));
      dot.setAttribute("cy", y(point.pass_rate));
      dot.setAttribute("r", "4");
      dot.setAttribute("fill", point.pass_rate === 1 ? "#18794e" : "#c4302b");
      const title = document.createElementNS(ns, "title");
      title.textContent = `run ${point.id}: ${withInterval(point.pass_rate, point.pass_rate_interval)}` +
        (repeated ? `, pass^k ${withInterval(point.pass_hat_k, point.pass_hat_k_interval)}` : "");
      dot.append(title);
      svg.append(dot);
    });
    text(repeated ? "y: pass rate (solid), pass^k (dashed; runs with repeats only)" : "y: pass rate", left, 12);
    text("x: stored runs, oldest first", left, height - 2);
  }

  async function showRuns(runs = null) {
    runs = runs || await api("api/runs");
    shownRuns = signature(runs);
    show("runs");
    document.getElementById("title").textContent = `${runs.length} stored runs`;
    document.getElementById("meta").textContent = "newest first; tick two runs to compare them";
    chart(document.getElementById("chart"), runs.slice().reverse());
    const body = document.getElementById("run-rows");
    body.replaceChildren();
    for (const run of runs) {
      const tick = el("input", { type: "checkbox", "data-run": run.id, "aria-label": `tick run ${run.id} to compare it` });
      const link = el("a", { href: `#/run/${run.id}` }, `run ${run.id}`);
      const live = run.live === "running" ? mark("running", "running")
        : run.live === "abandoned" ? mark("ended early", "abandoned") : "";
      const counts = [["passed", run.passed], ["failed", run.failed], ["errors", run.errors], ["terminated", run.terminated]]
        .filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ");
      body.append(el("tr", { className: "stored-run" }, el("td", {}, tick), el("td", {}, link, " ", live),
        el("td", {}, run.created_at),
        // no run finished yet (a run just started): no rate, rather than a vacuous 100%
        el("td", {}, run.passed + run.failed + run.errors + run.terminated ? withInterval(run.pass_rate, run.pass_rate_interval) : "-"),
        el("td", {}, run.repeat > 1 ? withInterval(run.pass_hat_k, run.pass_hat_k_interval) : "-"),
        el("td", {}, `${counts || "none"} (${run.total})`), el("td", {}, `${(run.duration_ms / 1000).toFixed(1)} s`),
        el("td", {}, run.cost ? (run.cost.total_usd == null ? "unknown" : dollars(run.cost.total_usd)) : "-"),
        el("td", {}, run.command)));
    }
  }

  function showComparison(result) {
    show("comparison");
    document.getElementById("compare-detail").replaceChildren();
    document.getElementById("title").textContent = `run ${result.a} → run ${result.b}`;
    const counts = {};
    const decided = (change) => change.decision || change.kind;
    for (const change of result.changes) counts[decided(change)] = (counts[decided(change)] || 0) + 1;
    const suite = result.suite;
    document.getElementById("meta").textContent =
      (Object.entries(counts).map(([kind, n]) => `${n} ${kind}`).join(", ") || "no cases") +
      (suite ? `; suite: ${suite.decision} (p=${suite.p_value.toFixed(3)}, ${suite.test}, alpha ${suite.alpha})` : "") +
      "; click a case to see its two conversations side by side";
    const body = document.getElementById("changes");
    body.replaceChildren();
    for (const change of result.changes) {
      const deltas = Object.entries(change.metric_deltas).map(([name, [a, b]]) => `${name}: ${a} → ${b}`).join("; ");
      const row = el("tr", { className: `change ${change.kind}` }, el("td", {}, change.name),
        el("td", { className: `outcome ${change.decision === "regressed" ? "failed" : change.decision === "improved" ? "passed" : ""}` },
          decided(change) + (change.p_value == null ? "" : ` (p=${change.p_value.toFixed(3)})`)),
        el("td", {}, change.before ?? "-"), el("td", {}, change.after ?? "-"), el("td", {}, deltas));
      row.addEventListener("click", async () => {
        const [before, after] = await Promise.all([runReport(result.a), runReport(result.b)]);
        const first = (report) => report.results.find((r) => r.name === change.name) || null;
        showSideBySide(`${change.name}: run ${result.a} and run ${result.b}`,
          [[`run ${result.a}`, first(before)], [`run ${result.b}`, first(after)]]);
      });
      body.append(row);
    }
  }

  function report(error) {
    document.getElementById("title").textContent = `error: ${error.message}`;
  }

  // --- addresses: every view of the viewer is a URL (#/runs, #/run/3, #/run/3/case/NAME/0,
  // #/compare/1/2), so Reload, Back/Forward and a shared link (the token is a cookie) work.
  let currentRun = null;
  let shownRuns = "";
  function go(hash) {
    if (location.hash === hash) route().catch(report); else location.hash = hash;
  }
  // A route fetches, then draws only if no later route started meanwhile: a slow answer for
  // an earlier address never paints over the view of the current one.
  let routing = 0;
  async function route() {
    const mine = ++routing;
    const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    if (parts[0] === "run" && parts[1]) {
      const id = Number(parts[1]);
      const chosen = parts[2] === "case" ? { name: parts[3], attempt: parts[4] || "0" } : null;
      const [labels, runData] = await Promise.all([api("api/reviews"), runReport(id)]);
      if (mine !== routing) return;
      currentRun = id;
      reviewed = new Set(labels.filter((r) => r.run_id === id && r.metric === null).map((r) => `${r.case}/${r.attempt}`));
      showRun(runData, chosen);
    } else if (parts[0] === "queue") {
      const items = await api("api/queue");
      if (mine === routing) { currentRun = null; showQueue(items); }
    } else if (parts[0] === "judges") {
      const judges = await api("api/judges");
      if (mine === routing) { currentRun = null; showJudges(judges); }
    } else if (parts[0] === "compare") {
      const query = parts[1] && parts[2] ? `?a=${Number(parts[1])}&b=${Number(parts[2])}` : "";
      const result = await api(`api/compare${query}`);
      if (mine === routing) { currentRun = null; showComparison(result); }
    } else {
      const runs = await api("api/runs");
      if (mine === routing) { currentRun = null; await showRuns(runs); }
    }
  }
  // Live: the list of runs shows a run stored meanwhile, and a run still running fills in
  // (list and page) without a reload; never while someone types a note.
  const signature = (runs) => runs.map((run) => `${run.id}:${run.total}:${run.passed}:${run.failed}:${run.live}`).join(",");
  async function refresh() {
    if (["text", "search"].includes(document.activeElement && document.activeElement.type)) return;
    const mine = routing;
    if (!document.getElementById("runs").hidden) {
      const runs = await api("api/runs");
      if (mine !== routing || document.getElementById("runs").hidden) return;  // moved on meanwhile
      if (signature(runs) !== shownRuns) await showRuns(runs);
    } else if (!document.getElementById("run").hidden && currentRun !== null && data && data.live === "running") {
      const id = currentRun;
      const fresh = await api(`api/runs/${id}`);
      if (mine !== routing || id !== currentRun) return;
      if (fresh.results.length !== data.results.length || fresh.live !== data.live) {
        reports.set(id, fresh);
        await route();
      }
    }
  }

  if (inline) {
    showRun(JSON.parse(inline.textContent));
  } else {
    document.getElementById("nav").hidden = false;
    document.getElementById("show-runs").addEventListener("click", () => go("#/runs"));
    document.getElementById("show-judges").addEventListener("click", () => go("#/judges"));
    document.getElementById("show-queue").addEventListener("click", () => go("#/queue"));
    document.getElementById("compare").addEventListener("click", () => {
      const ticked = [...document.querySelectorAll("#run-rows input:checked")].map((box) => Number(box.dataset.run));
      go(ticked.length === 2 ? `#/compare/${Math.min(...ticked)}/${Math.max(...ticked)}` : "#/compare");
    });
    // The cookie holds the token now: the address bar drops it, so a copied link never leaks it.
    if (new URLSearchParams(location.search).has("token")) history.replaceState(null, "", location.pathname + location.hash);
    window.addEventListener("hashchange", () => route().catch(report));
    setInterval(() => refresh().catch(() => {}), 2000);
    route().catch(report);
  }
})();
