// The form: a scenario in plain fields. Every change is an edit the server makes in the
// YAML (keeping comments and quoting); the form only draws the model it gets back.

let uid = 0;
const id = (base) => `${base}-${++uid}`;

// An element with attributes (text: its text; onX: a listener) and children.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// A text field that sends its edit as the person types (debounced) and when it changes.
function textField(label, value, send, { hint, multiline } = {}) {
  const fid = id("f");
  const hid = hint ? id("h") : undefined;
  const input = multiline
    ? el("textarea", { id: fid, rows: 2, "aria-describedby": hid })
    : el("input", { id: fid, type: "text", "aria-describedby": hid });
  input.value = value ?? "";
  let timer = null;
  let sent = input.value;
  const flush = () => {
    clearTimeout(timer);
    timer = null;
    if (input.value !== sent) {
      sent = input.value;
      send(input.value);
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(flush, 400);
    pending.add(flush);
  });
  input.addEventListener("change", flush);
  return el("div", { class: "field" },
    el("label", { for: fid, text: label }), input,
    hint ? el("p", { id: hid, class: "hint", text: hint }) : null);
}

// Fields typed into and not yet sent: flushed before a save or a tab change.
const pending = new Set();
export function flushPending() {
  for (const f of pending) f();
  pending.clear();
}

function checkItem(c, i, list, ctx) {
  const { vocab, edit } = ctx;
  const where = list === null ? "" : ` of turn ${list + 1}`;
  const box = el("fieldset", { class: "check" },
    el("legend", { text: `Check ${i + 1}${where}` }));
  const sid = id("check");
  const select = el("select", { id: sid });
  if (!vocab.checks.some((k) => k.name === c.check)) {
    select.append(el("option", { value: "", text: c.check ? `${c.check} (unknown)` : "(choose)" }));
  }
  for (const k of vocab.checks) {
    select.append(el("option", { value: k.name, text: `${k.name} — ${k.doc}` }));
  }
  select.value = vocab.checks.some((k) => k.name === c.check) ? c.check : "";
  select.addEventListener("change", () => {
    if (select.value) edit({ op: "set_check", list, index: i, check: select.value }, true);
  });
  box.append(el("div", { class: "field" }, el("label", { for: sid, text: "Check" }), select));
  if (c.takes === "text") {
    box.append(textField("Value", c.value, (v) =>
      edit({ op: "check_value", list, index: i, value: v })));
  } else if (c.takes === "other") {
    box.append(el("p", { class: "hint" }, "Written in the YAML tab: ",
      el("code", { text: c.yaml || "(no value)" })));
  }
  const aid = id("always");
  const always = el("input", { type: "checkbox", id: aid });
  always.checked = !!c.always;
  always.addEventListener("change", () =>
    edit({ op: "check_always", list, index: i, value: always.checked }));
  box.append(el("div", { class: "field inline" }, always,
    el("label", { for: aid, text: "Always" }),
    el("span", { class: "hint", text: " (must pass in every attempt)" })));
  box.append(textField("Name", c.name, (v) =>
    edit({ op: "check_name", list, index: i, value: v }),
    { hint: "How reports call this check (optional)." }));
  box.append(el("button", {
    type: "button", class: "small", text: `Remove check ${i + 1}${where}`,
    onclick: () => edit({ op: "remove_check", list, index: i }, true),
  }));
  return box;
}

function checkList(checks, list, ctx, addLabel) {
  const wrap = el("div", { class: "checks" });
  checks.forEach((c, i) => wrap.append(checkItem(c, i, list, ctx)));
  wrap.append(el("button", {
    type: "button", text: addLabel,
    onclick: () => ctx.edit({ op: "add_check", list, check: "contains" }, true),
  }));
  return wrap;
}

const KINDS = [["say", "says"], ["confirm", "confirms"], ["cancel", "cancels"]];

function turnItem(t, i, count, ctx) {
  const { edit } = ctx;
  const box = el("fieldset", { class: "turn" }, el("legend", { text: `Turn ${i + 1}` }));
  if (t.kind === "other") {
    box.append(el("p", { class: "hint", text: "This turn is written in the YAML tab." }));
    return box;
  }
  const kid = id("kind");
  const kind = el("select", { id: kid });
  for (const [value, words] of KINDS) kind.append(el("option", { value, text: `The person ${words}` }));
  kind.value = t.kind;
  const text = textField(t.kind === "say" ? `Turn ${i + 1}: what the person says`
                                          : `Turn ${i + 1}: which tool (or all)`,
    t.value, (v) => edit({ op: "turn", index: i, kind: kind.value, value: v }));
  kind.addEventListener("change", () => edit({
    op: "turn", index: i, kind: kind.value,
    value: kind.value === "say" ? (t.value || "") : (t.kind === "say" ? "all" : t.value),
  }, true));
  box.append(el("div", { class: "field" },
    el("label", { for: kid, text: `Turn ${i + 1}: what the person does` }), kind), text);
  const row = el("div", { class: "row" });
  if (i > 0) row.append(el("button", { type: "button", class: "small", text: `Move turn ${i + 1} up`,
    onclick: () => edit({ op: "move_turn", index: i, to: i - 1 }, true) }));
  if (i < count - 1) row.append(el("button", { type: "button", class: "small", text: `Move turn ${i + 1} down`,
    onclick: () => edit({ op: "move_turn", index: i, to: i + 1 }, true) }));
  row.append(el("button", { type: "button", class: "small", text: `Remove turn ${i + 1}`,
    onclick: () => edit({ op: "remove_turn", index: i }, true) }));
  box.append(row);
  box.append(el("h4", { text: `Checks on turn ${i + 1}` }));
  box.append(checkList(t.checks, i, ctx, `Add a check on turn ${i + 1}`));
  return box;
}

// The moment in words, as the agent is told it (kept up to date as the person types).
export function showMoment(model) {
  const words = document.getElementById("moment-words");
  if (words) {
    words.textContent = model.moment_words ? `That is ${model.moment_words}.`
      : "Not a moment yet: see Problems.";
  }
}

export function renderForm(container, model, ctx) {
  const { vocab, edit } = ctx;
  container.replaceChildren();
  const f = model;
  container.append(textField("Description", f.description, (v) =>
    edit({ op: "description", value: v }), { hint: "What this scenario is about, in a sentence." }));
  container.append(textField("Moment", f.moment, (v) => edit({ op: "moment", value: v }), {
    hint: "When the person speaks: date, time and UTC offset, e.g. 2026-09-29T10:00:00-03:00.",
  }));
  container.append(el("p", { id: "moment-words", class: "said", "aria-live": "polite" }));
  showMoment(f);

  const tools = el("fieldset", { class: "tools" }, el("legend", { text: "Tools the agent has" }));
  if (!f.tools.length) tools.append(el("p", { class: "hint", text: "The suite defines no tools." }));
  for (const t of f.tools) {
    const tid = id("tool");
    const desc = vocab.tools.find((x) => x.name === t.name);
    const did = id("tooldesc");
    const box = el("input", { type: "checkbox", id: tid, "aria-describedby": desc ? did : undefined });
    box.checked = t.on;
    box.addEventListener("change", () => edit({ op: "tool", name: t.name, on: box.checked }));
    tools.append(el("div", { class: "field inline" }, box, el("label", { for: tid, text: t.name }),
      desc ? el("span", { id: did, class: "hint", text: ` — ${desc.description}` }) : null));
  }
  if (f.inline_tools.length) {
    tools.append(el("p", { class: "hint", text:
      `Defined in this file (edit them in the YAML tab): ${f.inline_tools.join(", ")}.` }));
  }
  container.append(tools);

  const person = el("section", { class: "person", "aria-labelledby": "person-h" },
    el("h3", { id: "person-h", text: "What the person does" }));
  const w = f.when;
  if (w.kind === "message") {
    person.append(textField("What the person says", w.message, (v) =>
      edit({ op: "message", value: v }), { multiline: true }));
  } else if (w.kind === "turns") {
    w.turns.forEach((t, i) => person.append(turnItem(t, i, w.turns.length, ctx)));
  } else {
    person.append(el("p", { class: "hint", text:
      "A simulated user plays the person here: edit it in the YAML tab." }));
  }
  if (w.kind === "message" || w.kind === "turns") {
    person.append(el("button", { type: "button", text: "Add turn",
      onclick: () => edit({ op: "add_turn" }, true) }));
  }
  container.append(person);

  const checks = el("section", { class: "then", "aria-labelledby": "then-h" },
    el("h3", { id: "then-h", text: "Checks on the answer" }));
  checks.append(checkList(f.checks, null, ctx, "Add check"));
  container.append(checks);
}
