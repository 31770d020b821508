// What adk-eval's pages share (the studio, `adk-eval view` and the HTML report):
// building elements, long values and conversation entries. Every value is inserted
// as text (textContent / text nodes), never as HTML, so model and tool output stay inert.
"use strict";
const AdkEvalPage = (() => {
  const TRUNCATE = 2000;

  // el("div", {class, text, on: {click}, dataset, indent, ...attributes}, ...children)
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class" || key === "className") node.className = value;
      else if (key === "on") for (const [event, fn] of Object.entries(value)) node.addEventListener(event, fn);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key === "indent") node.style.marginLeft = `${value * 24}px`;  // CSSOM: allowed by a strict CSP
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const pretty = (value) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));

  // A value in a <pre>, cut at TRUNCATE characters with a button that shows the rest.
  function block(value, cls = "") {
    const full = pretty(value);
    const pre = el("pre", { class: cls, text: full.length > TRUNCATE ? full.slice(0, TRUNCATE) + "…" : full });
    if (full.length <= TRUNCATE) return pre;
    const more = el("button", { type: "button", class: "more", text: `Show all (${full.length} characters)` });
    more.addEventListener("click", () => { pre.textContent = full; more.remove(); });
    return el("div", {}, pre, more);
  }

  const mark = (text, cls = "") => el("span", { class: `mark ${cls}`.trim(), text });

  // One conversation entry: a box of `kind` (user, model_text, final, tool_call,
  // tool_result, tool_error, error, state_change) with a label, marks and content.
  function entry(kind, label, { marks = [], indent = 0, content = [] } = {}) {
    return el("div", { class: `entry entry-${kind}`, dataset: { kind }, indent: indent || null },
      el("div", { class: "label" }, label, ...marks), ...content);
  }

  // How `delta` changes `state` (a flat {key: value} map), as "key: before → after" lines.
  function diffLines(state, delta) {
    return Object.entries(delta).map(([key, after]) => {
      const had = Object.prototype.hasOwnProperty.call(state, key);
      const before = had ? JSON.stringify(state[key]) : "(unset)";
      return `${key}: ${before} → ${after === null ? "(removed)" : JSON.stringify(after)}`;
    });
  }

  return { TRUNCATE, el, pretty, block, mark, entry, diffLines };
})();
