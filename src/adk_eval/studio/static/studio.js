// adk-eval studio: the page. Every value from the server is inserted as text
// (textContent), never as HTML, so model and tool output stay inert.
"use strict";

const TOKEN =
  new URLSearchParams(location.search).get("token") ||
  document.querySelector('meta[name="studio-token"]')?.content ||
  "";
const { el, pretty, block, entry } = AdkEvalPage;  // page.js, shared with `adk-eval view`
// Action panels are kept per pending request, so live updates never wipe what the person typed.
// changedAt: the latest change version the event stream reported, per session.
// boot: the studio run the page talks to (a new one after a restart: what the page knew is dropped).
// refetched: the session and view version last fetched again for a reported change.
// notice: why an answer was refused because its request closed ({session, text}), shown until
// the person opens another session.
const state = { sessionId: null, version: 0, view: null, timers: [], actions: new Map(), changedAt: new Map(), boot: null, refetched: null, notice: null };

// -- helpers ---------------------------------------------------------------------

const UNREACHABLE = "The studio server is not reachable; is `adk-eval studio` still running? Nothing typed is lost: it is kept in this browser.";

// The banner over the page while the server cannot be reached (a stopped or restarting studio).
function connection(reachable) {
  const banner = document.getElementById("connection");
  banner.textContent = UNREACHABLE;
  banner.hidden = reachable;
}

async function api(path, options = {}) {
  let response;
  try {
    response = await fetch(path, {
      ...options,
      headers: { "Content-Type": "application/json", "X-Studio-Token": TOKEN, ...(options.headers || {}) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {  // the browser's own "Failed to fetch" says nothing about what to do
    connection(false);
    const error = new Error(UNREACHABLE);
    Object.assign(error, { problems: [], unreachable: true });
    throw error;
  }
  connection(true);
  let data = null;
  if (response.status !== 204) {
    try { data = await response.json(); } catch { data = null; }
  }
  if (!response.ok) {
    const error = new Error((data && data.error) || `HTTP ${response.status} ${response.statusText}`);
    Object.assign(error, { problems: (data && data.problems) || [], status: response.status });
    throw error;
  }
  return data;
}

// -- drafts: what the person typed and has not sent, kept in localStorage --------------------
// They survive a reload, a studio restart and show up in a second tab. A draft is keyed by the
// session, what is asked, of whom, and how long the conversation is: a restart asks a pending
// model call again under a new request id, but at the same point of the same conversation.

const DRAFTS = "adk-eval-studio:draft:";

function draftKey(view, request) {
  return `${DRAFTS}${view.id}:${request.kind}:${request.agent_name}:${view.entries.length}:${request.payload.call_id || ""}`;
}

function loadDraft(key) {
  try { return JSON.parse(localStorage.getItem(key) || "null"); } catch { return null; }
}

function saveDraft(key, value) {
  try { localStorage.setItem(key, JSON.stringify(value)); } catch {}  // storage full or disabled
}

function dropDraft(key) {
  try { localStorage.removeItem(key); } catch {}
}

// Drafts of this session written before the conversation grew past them are stale.
function dropStaleDrafts(view) {
  const prefix = `${DRAFTS}${view.id}:`;
  for (let index = localStorage.length - 1; index >= 0; index--) {
    const key = localStorage.key(index);
    if (!key || !key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length).split(":");  // kind:agent:length:call, or next:length
    if (Number(rest[0] === "next" ? rest[1] : rest[2]) < view.entries.length) dropDraft(key);
  }
}

// Saves `snapshot()` under `key` whenever something in `node` changes; `restore` fills it back in.
function drafted(node, key, snapshot, restore) {
  const save = () => saveDraft(key, snapshot());
  node.addEventListener("input", save);
  node.addEventListener("change", save);
  node.addEventListener("click", () => setTimeout(save));  // added or removed calls and items
  const draft = loadDraft(key);
  if (draft) restore(draft);
  return { node, key, restore };
}

function problemsList(problems) {
  return el("ul", { class: "problems", role: "alert" }, problems.map((p) => el("li", { text: p })));
}

// -- JSON Schema -> form ------------------------------------------------------------

function resolve(schema, root) {
  let current = schema || {};
  for (let depth = 0; current.$ref && depth < 20; depth++) {
    const name = current.$ref.split("/").pop();
    current = { ...((root.$defs || root.definitions || {})[name] || {}), ...Object.fromEntries(Object.entries(current).filter(([k]) => k !== "$ref")) };
  }
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(current[key])) {
      const options = current[key].filter((option) => option.type !== "null");
      if (options.length === 1) {
        const rest = Object.fromEntries(Object.entries(current).filter(([k]) => k !== key));
        return { ...resolve(options[0], root), ...rest, nullable: true };
      }
    }
  }
  if (Array.isArray(current.allOf) && current.allOf.length === 1) {
    const rest = Object.fromEntries(Object.entries(current).filter(([k]) => k !== "allOf"));
    return { ...resolve(current.allOf[0], root), ...rest };
  }
  return current;
}

function typeOf(schema) {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null") || "string";
  if (schema.type) return schema.type;
  if (schema.properties) return "object";
  if (schema.items) return "array";
  if (schema.enum) return "string";
  return "any";
}

// Returns {node, get} where get() gives the value, or throws a list of problems.
function field(name, rawSchema, root, required, path) {
  const schema = resolve(rawSchema, root);
  const type = typeOf(schema);
  const title = schema.title && schema.title !== name ? schema.title : name;
  const label = el("label", { for: path }, title, required ? el("span", { class: "required", text: " *" }) : null);
  const description = schema.description ? el("span", { class: "description", text: schema.description }) : null;
  const missing = () => { throw [`${path}: required`]; };

  if (schema.enum) {
    const select = el("select", { id: path, name: path, dataset: { field: path } });
    if (!required || schema.default === undefined) select.append(el("option", { value: "", text: "— choose —" }));
    schema.enum.forEach((option, index) => select.append(el("option", { value: String(index), text: String(option) })));
    if (schema.default !== undefined) select.value = String(schema.enum.indexOf(schema.default));
    return {
      node: el("div", { class: "field" }, label, select, description),
      get: () => (select.value === "" ? (required ? missing() : undefined) : schema.enum[Number(select.value)]),
      raw: () => select.value,
      restore: (value) => { if (typeof value === "string") select.value = value; },
    };
  }
  if (type === "boolean") {
    const box = el("input", { type: "checkbox", id: path, name: path, dataset: { field: path } });
    box.checked = schema.default === true;
    return {
      node: el("div", { class: "field checkbox" }, box, label, description),
      get: () => box.checked,
      raw: () => box.checked,
      restore: (value) => { box.checked = value === true; },
    };
  }
  if (type === "integer" || type === "number") {
    const input = el("input", { type: "number", id: path, name: path, step: type === "integer" ? "1" : "any", dataset: { field: path } });
    if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
    return {
      node: el("div", { class: "field" }, label, input, description),
      get: () => {
        if (input.value.trim() === "") return required ? missing() : undefined;
        const value = Number(input.value);
        if (Number.isNaN(value) || (type === "integer" && !Number.isInteger(value))) throw [`${path}: must be ${type === "integer" ? "a whole number" : "a number"}`];
        return value;
      },
      raw: () => input.value,
      restore: (value) => { if (typeof value === "string") input.value = value; },
    };
  }
  if (type === "string") {
    const input = el("input", { type: "text", id: path, name: path, dataset: { field: path } });
    if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
    return {
      node: el("div", { class: "field" }, label, input, description),
      get: () => (input.value === "" ? (required ? missing() : undefined) : input.value),
      raw: () => input.value,
      restore: (value) => { if (typeof value === "string") input.value = value; },
    };
  }
  if (type === "object") {
    const form = objectForm(schema, root, path);
    const node = el("fieldset", { dataset: { field: path } }, el("legend", {}, title, required ? el("span", { class: "required", text: " *" }) : null), description, form.node);
    return { node, get: () => form.get(required), raw: form.raw, restore: form.restore };
  }
  if (type === "array") {
    const list = el("div", { class: "array-items" });
    const items = [];
    const add = () => {
      const item = field(`${name}[${items.length}]`, schema.items || {}, root, true, `${path}.${items.length}`);
      const remove = el("button", { type: "button", class: "danger", text: "Remove" });
      const row = el("div", { class: "array-item" }, item.node, remove);
      const entry = { item, row };
      remove.addEventListener("click", () => { row.remove(); items.splice(items.indexOf(entry), 1); });
      items.push(entry);
      list.append(row);
    };
    const addButton = el("button", { type: "button", text: `Add ${name} item`, dataset: { add: path } });
    addButton.addEventListener("click", add);
    (Array.isArray(schema.default) ? schema.default : []).forEach(() => add());
    const node = el("fieldset", { dataset: { field: path } }, el("legend", {}, title, required ? el("span", { class: "required", text: " *" }) : null), description, list, addButton);
    return {
      node,
      get: () => {
        const problems = [];
        const values = [];
        for (const { item } of items) {
          try { values.push(item.get()); } catch (error) { problems.push(...error); }
        }
        if (problems.length) throw problems;
        if (required && schema.minItems && values.length < schema.minItems) throw [`${path}: needs at least ${schema.minItems} item(s)`];
        return values;
      },
      raw: () => items.map(({ item }) => item.raw()),
      restore: (values) => {
        if (!Array.isArray(values)) return;
        items.splice(0).forEach(({ row }) => row.remove());
        values.forEach((value) => { add(); items[items.length - 1].item.restore(value); });
      },
    };
  }
  const area = el("textarea", { id: path, name: path, placeholder: "JSON value", dataset: { field: path } });
  if (schema.default !== undefined) area.value = JSON.stringify(schema.default);
  return {
    node: el("div", { class: "field" }, label, area, description),
    get: () => {
      if (area.value.trim() === "") return required ? missing() : undefined;
      try { return JSON.parse(area.value); } catch { throw [`${path}: not valid JSON`]; }
    },
    raw: () => area.value,
    restore: (value) => { if (typeof value === "string") area.value = value; },
  };
}

function objectForm(rawSchema, root, path = "") {
  const schema = resolve(rawSchema, root);
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, property]) => [
    name,
    field(name, property, root, required.has(name), path ? `${path}.${name}` : name),
  ]);
  return {
    node: el("div", { class: "object" }, fields.map(([, f]) => f.node)),
    get: (mustExist = true) => {
      const value = {};
      const problems = [];
      for (const [name, f] of fields) {
        try {
          const v = f.get();
          if (v !== undefined) value[name] = v;
        } catch (error) { problems.push(...error); }
      }
      if (problems.length) throw problems;
      return value;
    },
    raw: () => Object.fromEntries(fields.map(([name, f]) => [name, f.raw()])),
    restore: (value) => {
      if (value && typeof value === "object") for (const [name, f] of fields) if (name in value) f.restore(value[name]);
    },
  };
}

// -- pages -------------------------------------------------------------------------------

const content = () => document.getElementById("content");

function clearTimers() {
  state.timers.forEach((timer) => { clearInterval(timer); clearTimeout(timer); });
  state.timers = [];
}

// Re-rendering moves the kept action panels, and moving a focused field blurs it: give the
// focus (and the caret) back in the same task, so nothing the person is typing goes astray.
function setContent(...nodes) {
  const active = document.activeElement;
  let caret = null;
  try { if (active && typeof active.selectionStart === "number") caret = [active.selectionStart, active.selectionEnd, active.selectionDirection]; } catch {}
  content().replaceChildren(...nodes);
  if (active && active !== document.body && active.isConnected && document.activeElement !== active) {
    active.focus({ preventScroll: true });
    if (caret) try { active.setSelectionRange(...caret); } catch {}
  }
}

async function showTargets() {
  state.sessionId = null;
  clearTimers();
  const targets = await api("/api/targets");
  const cards = targets.map((target) => {
    const agent = target.agent || {};
    let input;
    let getInput;
    if (agent.input_schema) {
      const form = objectForm(agent.input_schema, agent.input_schema, "input");
      input = el("div", {}, el("h3", { text: "Input (the agent's input schema)" }), form.node);
      getInput = () => form.get();
    } else if (target.kind === "agent") {
      const area = el("textarea", { placeholder: "The user's first message", dataset: { field: "first-message" } });
      input = area;
      getInput = () => {
        if (!area.value.trim()) throw ["write the user's first message"];
        return area.value;
      };
    } else {
      input = el("p", { class: "muted", text: target.first_message ? `First message: ${target.first_message}` : "The loop user agent opens the conversation." });
      getInput = () => null;
    }
    const role = el("select", { dataset: { field: "role" } }, target.roles.map((r) => el("option", { value: r, text: roleLabel(r) })));
    const problems = el("div");
    const start = el("button", { type: "button", class: "primary", text: "Start session" });
    start.addEventListener("click", async () => {
      problems.replaceChildren();
      try {
        const message = getInput();
        const created = await api("/api/sessions", { method: "POST", body: { target: target.name, message, role: role.value } });
        await openSession(created.id);
      } catch (error) {
        problems.append(problemsList(Array.isArray(error) ? error : [error.message, ...(error.problems || [])]));
      }
    });
    return el("div", { class: "card target", dataset: { target: target.name } },
      el("h3", { text: target.name }),
      el("p", { class: "muted", text: target.description || (target.kind === "case" ? "Eval case" : "Agent") }),
      target.kind === "case" ? el("label", {}, "You play: ", role) : null,
      input, problems, el("div", { class: "row" }, start),
      el("p", { class: "muted", text: `Exports go to ${target.eval_set_path}` }));
  });
  setContent(el("h1", { text: "Choose what to play" }), el("div", { class: "targets" }, cards));
  await refreshSessions();
}

function roleLabel(role) {
  if (role === "model") return "the agent's model";
  if (role === "loop_user") return "the user (conversation)";
  return `the user answering ${role.split(":")[1]}`;
}

async function refreshSessions() {
  const sessions = await api("/api/sessions");
  const list = document.getElementById("session-list");
  list.replaceChildren(...sessions.map((s) => el("li", {},
    el("a", { href: `#${s.id}`, class: s.id === state.sessionId ? "current" : "", on: { click: (e) => { e.preventDefault(); openSession(s.id); } } },
      s.target, el("span", { class: "meta", text: `${s.phase} · ${new Date(s.created_at * 1000).toLocaleTimeString()}` })))));
}

async function openSession(id) {
  if (state.sessionId !== id) { state.actions.clear(); state.notice = null; }
  state.sessionId = id;
  if (location.hash !== `#${id}`) history.replaceState(null, "", `${location.pathname}${location.search}#${id}`);
  await renderSession();
  await refreshSessions();
}

function entryNode(item) {
  const kinds = {
    user: "User", model_text: `Model (${item.author})`, final: `Final response (${item.author})`,
    tool_call: "Tool call", tool_result: "Tool output", tool_error: "Tool error", error: "Error",
  };
  let text = item.text;
  if (item.kind === "tool_call") text = `${item.name}(${JSON.stringify(item.args)})${item.long_running ? "  [long-running]" : ""}`;
  else if (item.kind === "tool_result") text = `${item.name} → ${pretty(item.response)}`;
  else if (item.kind === "tool_error") text = `${item.name} raised ${item.error_type}: ${item.message}`;
  else if (item.kind === "error") text = `${item.code}: ${item.message}`;
  return entry(item.kind, kinds[item.kind] || item.kind, { content: [block(text)] });
}

function runningNode(sessionId, tool) {
  const timer = el("span", { class: "elapsed", text: "0.0s" });
  const tick = () => { timer.textContent = `${(Date.now() / 1000 - tool.started_at).toFixed(1)}s`; };
  tick();
  state.timers.push(setInterval(tick, 100));
  const cancel = el("button", { type: "button", class: "danger", text: "Cancel" });
  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    await api(`/api/sessions/${sessionId}/tools/${encodeURIComponent(tool.call_id)}/cancel`, { method: "POST", body: {} });
  });
  return el("div", { class: "entry entry-running", dataset: { kind: "running" } },
    el("div", { class: "label", text: "Tool running" }),
    el("div", { class: "row" }, el("pre", { text: `${tool.name}(${JSON.stringify(tool.args)})` }), timer, cancel));
}

// Sends an answer to a request. A request that closed meanwhile (409/410: answered elsewhere, or
// a remote app that stopped waiting) is said at the top of the session, where it outlives the panel.
async function sendAnswer(request, key, answer, show) {
  try {
    await api(`/api/requests/${request.id}/answer`, { method: "POST", body: answer });
    dropDraft(key);
    await renderSession();
  } catch (error) {
    if (error.status === 409 || error.status === 410) {
      state.notice = { session: state.sessionId, text: `Your answer was not sent: ${error.message}` };
      dropDraft(key);
      await renderSession();
    } else show(error);
  }
}

function modelAction(view, request) {
  const payload = request.payload;
  const tools = payload.tools;
  const key = draftKey(view, request);
  const problems = el("div");
  const show = (error) => problems.replaceChildren(problemsList(Array.isArray(error) ? error : [error.message, ...(error.problems || [])]));
  const send = (answer) => { problems.replaceChildren(); return sendAnswer(request, key, answer, show); };

  // Tool calls
  const editors = [];
  const callList = el("div");
  const addCall = () => {
    const select = el("select", { dataset: { field: "tool" } }, el("option", { value: "", text: "— choose a tool —" }),
      tools.map((t) => el("option", { value: t.name, disabled: !t.allowed, text: t.name + (t.note ? ` (${t.note})` : "") })));
    const holder = el("div");
    const remove = el("button", { type: "button", class: "danger", text: "Remove call" });
    const box = el("div", { class: "call-editor" }, el("div", { class: "row" }, select, remove), holder);
    const editor = { select, form: null, box };
    select.addEventListener("change", () => {
      const tool = tools.find((t) => t.name === select.value);
      editor.form = tool ? objectForm(tool.parameters, tool.parameters, tool.name) : null;
      holder.replaceChildren(...(tool ? [el("p", { class: "muted", text: tool.description }), editor.form.node] : []));
    });
    remove.addEventListener("click", () => { box.remove(); editors.splice(editors.indexOf(editor), 1); });
    editors.push(editor);
    callList.append(box);
    return editor;
  };
  const callsPane = el("div", { class: "pane-calls" }, callList,
    el("div", { class: "row" },
      el("button", { type: "button", text: "Add another tool call", on: { click: addCall } }),
      el("button", { type: "button", class: "primary", text: "Send tool calls", on: { click: () => {
        try {
          const calls = editors.map((editor) => {
            if (!editor.select.value) throw ["choose a tool for every call"];
            return { name: editor.select.value, args: editor.form.get() };
          });
          if (!calls.length) throw ["add a tool call"];
          send({ type: "tool_calls", calls });
        } catch (error) { show(error); }
      } } })));
  if (tools.length) addCall();

  // Final response
  let finalPane;
  let finalDraft;
  if (payload.output_schema) {
    const form = objectForm(payload.output_schema, payload.output_schema, "output");
    finalDraft = form;
    finalPane = el("div", { class: "pane-final" }, el("p", { class: "muted", text: "The agent has an output schema: fill it in." }), form.node,
      el("button", { type: "button", class: "primary", text: "Send final response", on: { click: () => {
        try { send({ type: "output", value: form.get() }); } catch (error) { show(error); }
      } } }));
  } else {
    const area = el("textarea", { placeholder: "The final response to the user", dataset: { field: "final-response" } });
    finalDraft = { raw: () => area.value, restore: (value) => { if (typeof value === "string") area.value = value; } };
    finalPane = el("div", { class: "pane-final" }, area,
      el("button", { type: "button", class: "primary", text: "Send final response", on: { click: () => send({ type: "text", text: area.value }) } }));
  }

  const panes = { calls: callsPane, final: finalPane };
  const tabs = el("div", { class: "tabs" });
  const body = el("div");
  let pane = null;
  const choose = (name) => {
    pane = name;
    body.replaceChildren(panes[name]);
    for (const button of tabs.children) button.classList.toggle("active", button.dataset.pane === name);
  };
  tabs.append(
    el("button", { type: "button", text: `Call a tool (${tools.length})`, dataset: { pane: "calls" }, disabled: !tools.length, on: { click: () => choose("calls") } }),
    el("button", { type: "button", text: "Final response", dataset: { pane: "final" }, on: { click: () => choose("final") } }));
  choose(tools.length ? "calls" : "final");
  const waits = payload.answer_by
    ? el("p", { class: "muted", dataset: { answerBy: "" }, text: `The app waits for your answer until ${new Date(payload.answer_by * 1000).toLocaleTimeString()}; after that it is not used.` })
    : null;
  const node = el("div", { class: "action", dataset: { request: request.id, kind: "model" } },
    el("h3", { text: `The model of ${request.agent_name} is waiting for you` }), waits, tabs, body, problems);
  const snapshot = () => ({
    pane,
    calls: editors.map((editor) => ({ tool: editor.select.value, args: editor.form ? editor.form.raw() : null })),
    final: finalDraft.raw(),
  });
  const restore = (draft, withPane = true) => {
    if (Array.isArray(draft.calls) && tools.length) {
      editors.splice(0).forEach((editor) => editor.box.remove());
      for (const call of draft.calls.length ? draft.calls : [{ tool: "" }]) {
        const editor = addCall();
        if (call.tool && tools.some((t) => t.name === call.tool)) {
          editor.select.value = call.tool;
          editor.select.dispatchEvent(new Event("change"));
          editor.form.restore(call.args);
        }
      }
    }
    finalDraft.restore(draft.final);
    if (withPane && (draft.pane === "final" || (draft.pane === "calls" && tools.length))) choose(draft.pane);
  };
  return drafted(node, key, snapshot, restore);
}

// A panel whose draft is one text area.
function textDraft(node, key, area) {
  return drafted(node, key, () => ({ text: area.value }), (draft) => { if (typeof draft.text === "string") area.value = draft.text; });
}

function toolAnswerAction(view, request) {
  const area = el("textarea", { placeholder: "The tool's answer: text, or JSON", dataset: { field: "tool-answer" } });
  const key = draftKey(view, request);
  const problems = el("div");
  const send = () => {
    let answer = { type: "text", text: area.value };
    try { const parsed = JSON.parse(area.value); if (parsed && typeof parsed === "object") answer = { type: "value", value: parsed }; } catch {}
    return sendAnswer(request, key, answer, (error) => problems.replaceChildren(problemsList([error.message, ...(error.problems || [])])));
  };
  const node = el("div", { class: "action", dataset: { request: request.id, kind: "tool_answer" } },
    el("h3", { text: `Long-running tool ${request.payload.tool_name} waits for its answer` }),
    block(`${request.payload.tool_name}(${JSON.stringify(request.payload.args)})`), area,
    el("button", { type: "button", class: "primary", text: "Send the tool's answer", on: { click: send } }), problems);
  return textDraft(node, key, area);
}

function userAction(view, request) {
  const area = el("textarea", { placeholder: "What the user says", dataset: { field: "user-answer" } });
  const key = draftKey(view, request);
  const problems = el("div");
  const send = (answer) => sendAnswer(request, key, answer, (error) => problems.replaceChildren(problemsList([error.message, ...(error.problems || [])])));
  const info = request.payload.yield;
  const node = el("div", { class: "action", dataset: { request: request.id, kind: "user" } },
    el("h3", { text: `You are ${request.agent_name}: ${info && info.type === "tool" ? `answer tool ${info.tool_name}` : "answer the agent"}` }),
    block(request.payload.prompt), area,
    el("div", { class: "row" },
      el("button", { type: "button", class: "primary", text: "Send", on: { click: () => send({ type: "text", text: area.value }) } }),
      el("button", { type: "button", text: "End the conversation", on: { click: () => send({ type: "stop" }) } })), problems);
  return textDraft(node, key, area);
}

function nextMessageCard(view) {
  const area = el("textarea", { placeholder: "The user's next message", dataset: { field: "next-message" } });
  const key = `${DRAFTS}${view.id}:next:${view.entries.length}`;
  const problems = el("div");
  const card = el("div", { class: "card" }, el("h3", { text: "Continue the conversation" }), area,
    el("button", { type: "button", text: "Send user message", on: { click: async () => {
      try { await api(`/api/sessions/${view.id}/messages`, { method: "POST", body: { message: area.value } }); dropDraft(key); await renderSession(); }
      catch (error) { problems.replaceChildren(problemsList([error.message, ...(error.problems || [])])); }
    } } }), problems);
  return textDraft(card, key, area);
}

function exportCard(view) {
  const exportProblems = el("div");
  const exportButton = el("button", { type: "button", class: "primary", text: "Export to EvalSet", disabled: !view.can_export, dataset: { action: "export" } });
  exportButton.addEventListener("click", async () => {
    exportButton.disabled = true;
    try { await api(`/api/sessions/${view.id}/export`, { method: "POST", body: {} }); await renderSession(); }
    catch (error) { exportProblems.replaceChildren(problemsList([error.message])); exportButton.disabled = false; }
  });
  return el("div", { class: "card" }, el("h3", { text: "Golden trace" }),
    el("p", { class: "muted", text: `Export appends this conversation to ${view.eval_set_path}` }),
    exportButton, exportProblems,
    view.exports.map((e) => el("div", { class: "exported", dataset: { exported: e.eval_id } },
      `Exported as ${e.eval_id} to ${e.path} (${e.cases} case${e.cases === 1 ? "" : "s"} in the file${e.created ? ", file created" : ""})`)));
}

// Renders run one at a time, in order: a view fetched earlier can never be drawn over a newer
// one (that would drop, then rebuild, an action panel and lose what the person typed).
let rendering = null;
let renderAgain = false;

function renderSession() {
  if (rendering) { renderAgain = true; return rendering; }
  rendering = (async () => {
    try { do { renderAgain = false; await renderOnce(); } while (renderAgain); }
    finally { rendering = null; }
  })();
  return rendering;
}

async function renderOnce() {
  const id = state.sessionId;
  if (!id) return;
  let view;
  try { view = await api(`/api/sessions/${id}`); }
  catch (error) {
    // Unreachable: the banner says so, and what is shown (and typed) stays as it is.
    if (state.sessionId === id && !error.unreachable) setContent(el("p", { class: "problems", text: error.message }));
    return;
  }
  if (state.sessionId !== id) return;  // the person moved on while this was fetched
  state.view = view;
  clearTimers();
  const pendingModel = view.pending.find((r) => r.kind === "model");
  const payload = pendingModel && pendingModel.payload;
  const instruction = payload ? payload.instruction : (view.agent && view.agent.instruction) || "";
  const tools = payload ? payload.tools : [];
  const nodes = [
    el("h1", {}, view.target, el("span", { class: `badge ${view.phase}`, text: view.phase.replaceAll("_", " ") }),
      el("span", { class: "badge", text: view.kind === "case" ? `you play ${roleLabel(view.role)}` : "you play the model" })),
    el("details", { class: "instruction", open: true }, el("summary", { text: "Instruction (what the model is told)" }), block(instruction || "(no instruction)")),
  ];
  if (tools.length) {
    nodes.push(el("details", { class: "card tools-panel", open: true }, el("summary", { text: `Tools (${tools.length})` }),
      el("ul", { class: "tools" }, tools.map((t) => el("li", {}, el("code", { text: t.name }), t.note ? el("span", { class: "note", text: t.note }) : null,
        el("div", { class: "muted", text: t.description }))))));
  }
  nodes.push(el("h3", { text: "Conversation" }), el("div", { class: "history" },
    view.entries.map(entryNode), view.running_tools.map((t) => runningNode(view.id, t))));
  if (view.error) nodes.push(entry("error", "Error", { content: [block(view.error)] }));
  if (state.notice && state.notice.session === view.id) {
    nodes.push(el("p", { class: "problems", role: "alert", dataset: { notice: "" }, text: state.notice.text }));
  }
  dropStaleDrafts(view);
  const idle = !view.pending.length && !["running", "awaiting_model"].includes(view.phase);
  const next = idle && view.kind === "agent" && view.phase === "idle" ? `next:${view.entries.length}` : null;
  const kept = new Set([...view.pending.map((request) => request.id), next]);
  for (const key of [...state.actions.keys()]) if (!kept.has(key)) state.actions.delete(key);
  for (const request of view.pending) {
    if (!state.actions.has(request.id)) {
      const build = { model: modelAction, tool_answer: toolAnswerAction, user: userAction }[request.kind];
      if (build) state.actions.set(request.id, build(view, request));
    }
    if (state.actions.has(request.id)) nodes.push(state.actions.get(request.id).node);
  }
  if (view.result) {
    nodes.push(el("div", { class: "card result" }, el("h3", { text: `Eval result: ${view.result.status}` }), block(view.result.explanation)));
  }
  if (next) {
    if (!state.actions.has(next)) state.actions.set(next, nextMessageCard(view));
    nodes.push(state.actions.get(next).node);
  }
  if (idle) nodes.push(exportCard(view));
  setContent(...nodes);
  // A change reported before (or while) this view was fetched: fetch again.
  // Once per view version: a change the server never reaches (a studio that restarted)
  // must not make the page fetch in a loop; the event stream reports the next one.
  if ((state.changedAt.get(view.id) || 0) > view.version) {
    const again = `${view.id}@${view.version}`;
    if (state.refetched !== again) { state.refetched = again; renderAgain = true; return; }
  }
  // "running" always ends by itself; look again soon even if a notification is missed.
  if (view.phase === "running") state.timers.push(setTimeout(renderSession, 750));
}

// -- live updates ------------------------------------------------------------------------

function listen() {
  const source = new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}&since=${state.version}`);
  source.onmessage = async (message) => {
    const data = JSON.parse(message.data);
    if (data.boot !== state.boot) {  // a (re)started studio: its versions, not the old ones
      state.boot = data.boot;
      state.changedAt.clear();
      state.refetched = null;
    }
    state.version = data.version;
    for (const [id, version] of Object.entries(data.sessions)) state.changedAt.set(id, version);
    const current = state.sessionId;
    const changed = current ? data.sessions[current] : undefined;
    if (changed !== undefined && (!state.view || state.view.id !== current || changed > state.view.version)) {
      await renderSession();
    }
    await refreshSessions().catch(() => {});  // unreachable: the banner says so
  };
  // The stream retries every second by itself; while it cannot connect, say why nothing moves.
  source.onerror = () => { if (source.readyState !== EventSource.OPEN) connection(false); };
  source.onopen = () => {
    const wasDown = !document.getElementById("connection").hidden;
    connection(true);
    if (wasDown && state.sessionId) renderSession();
  };
}

// A draft typed in another tab of this browser appears here too (unless this tab is typing in it);
// which pane is open stays this tab's own.
window.addEventListener("storage", (event) => {
  if (!event.key || !event.key.startsWith(DRAFTS) || event.newValue === null) return;
  const active = document.activeElement;
  const typing = document.hasFocus() && active && active.matches("input, textarea, select");
  for (const action of state.actions.values()) {
    if (action.key !== event.key || (typing && action.node.contains(active))) continue;
    try { action.restore(JSON.parse(event.newValue), false); } catch {}
  }
});

document.getElementById("new-session").addEventListener("click", showTargets);
document.getElementById("home").addEventListener("click", (event) => { event.preventDefault(); showTargets(); });
(async () => {
  const id = location.hash.slice(1);
  if (id) await openSession(id); else await showTargets();
  listen();
})();
