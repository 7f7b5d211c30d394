// The form's building blocks: every control has a visible label that is its accessible
// name, and sends its edit as the person types (debounced) and when it changes.

let uid = 0;
export const id = (base) => `${base}-${++uid}`;

// An element with attributes (text: its text; onX: a listener) and children.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

// Fields typed into and not yet sent: flushed before a save, a run or a tab change.
const pending = new Set();
export function flushPending() {
  for (const f of [...pending]) f();
  pending.clear();
}

const DELAY_MS = 400;

function described(hint) {
  const hid = hint ? id("h") : undefined;
  return [hid, hint ? el("p", { id: hid, class: "hint", text: hint }) : null];
}

// Send what is typed into ``input``: a moment after the last key, and when it changes.
export function watch(input, value, send) {
  let timer = null;
  let sent = value ?? "";
  const flush = () => {
    clearTimeout(timer);
    timer = null;
    pending.delete(flush);
    if (input.value !== sent) {
      sent = input.value;
      send(input.value);
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(flush, DELAY_MS);
    pending.add(flush);
  });
  input.addEventListener("change", flush);
}

// A text field (a textarea when multiline).
export function textField(label, value, send, { hint, multiline, kind = "text", cls } = {}) {
  const fid = id("f");
  const [hid, note] = described(hint);
  const input = multiline
    ? el("textarea", { id: fid, rows: 3, "aria-describedby": hid })
    : el("input", { id: fid, type: kind, "aria-describedby": hid, autocomplete: "off",
                    step: kind === "number" ? "any" : undefined });
  input.value = value ?? "";
  watch(input, input.value, send);
  return el("div", { class: `field ${cls || ""}` }, el("label", { for: fid, text: label }), input, note);
}

export function numberField(label, value, send, opts = {}) {
  return textField(label, value === null || value === undefined ? "" : String(value),
    (v) => send(v.trim() === "" ? null : Number(v)), { ...opts, kind: "number" });
}

export function checkboxField(label, checked, send, { hint } = {}) {
  const fid = id("c");
  const [hid, note] = described(hint);
  const box = el("input", { type: "checkbox", id: fid, "aria-describedby": hid });
  box.checked = !!checked;
  box.addEventListener("change", () => send(box.checked));
  return el("div", { class: "field inline" }, box, el("label", { for: fid, text: label }), note);
}

// A choice among options ([value, words] pairs, or plain values).
export function selectField(label, value, options, send, { hint, empty } = {}) {
  const fid = id("s");
  const [hid, note] = described(hint);
  const select = el("select", { id: fid, "aria-describedby": hid });
  if (empty !== undefined) select.append(el("option", { value: "", text: empty }));
  for (const o of options) {
    const [v, words] = Array.isArray(o) ? o : [o, o];
    select.append(el("option", { value: v, text: words }));
  }
  if (value !== null && value !== undefined && ![...select.options].some((o) => o.value === value)) {
    select.append(el("option", { value, text: `${value} (not defined)` }));
  }
  select.value = value ?? "";
  select.addEventListener("change", () => send(select.value));
  return el("div", { class: "field" }, el("label", { for: fid, text: label }), select, note);
}

// "Check": a native select of every check (so it is chosen with the mouse, the arrow
// keys or a screen reader as any list is) that also takes typed text: what is typed
// filters the list to the checks whose name holds it and picks the best match — the
// exact name, else the first that starts with it. A typed choice is sent when the person
// stops (a moment without typing), presses Enter or leaves the field, or at once when
// what is typed is the whole name of one check: the form is never redrawn while they
// type. Text that arrives all at once (pasted, or put by a tool) is taken the same way:
// the select is marked contenteditable so that such text reaches it.
export function checkChooser(label, value, checks, send) {
  const fid = id("check");
  const hid = id("h");
  const select = el("select", { id: fid, contenteditable: "true", "aria-describedby": hid,
                                spellcheck: "false" });
  const said = el("p", { id: hid, class: "hint", "aria-live": "polite" });
  const known = checks.some((k) => k.name === value);
  let filter = "";
  let timer = null;
  let last = known ? value : "";
  const fill = (matches) => {
    const keep = select.value;
    select.replaceChildren();
    if (!known && !filter) select.append(el("option", { value: "", text: value ? `${value} (unknown)` : "(choose)" }));
    for (const k of matches) select.append(el("option", { value: k.name, text: `${k.name} — ${k.doc}` }));
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  };
  const best = () => {
    const low = filter.toLowerCase();
    const matches = checks.filter((k) => k.name.includes(low));
    fill(matches.length ? matches : checks);
    const pick = matches.find((k) => k.name === low)
      || matches.find((k) => k.name.startsWith(low)) || matches[0];
    if (pick) select.value = pick.name;
    said.textContent = filter
      ? (matches.length ? `Typed “${filter}”: ${matches.length} check(s) hold it; Enter takes ${pick.name}.`
        : `No check holds “${filter}”.`)
      : "";
    return pick;
  };
  const commit = () => {
    clearTimeout(timer);
    timer = null;
    pending.delete(commit);
    if (filter) {
      filter = "";
      said.textContent = "";
    }
    if (select.value && select.value !== last) {
      last = select.value;
      send(select.value);
    }
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(commit, DELAY_MS);
    pending.add(commit);
  };
  const typed = (text, replace) => {
    filter = replace ? text : filter + text;
    best();
    const low = filter.toLowerCase();
    // the whole name of one check, and of no longer one: taken at once
    if (checks.some((k) => k.name === low) && !checks.some((k) => k.name !== low && k.name.startsWith(low))) {
      commit();
    } else {
      soon();
    }
  };
  select.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key.length === 1 && /[\w.-]/.test(ev.key)) {
      ev.preventDefault();
      typed(ev.key, false);
    } else if (ev.key === "Backspace" && filter) {
      ev.preventDefault();
      filter = filter.slice(0, -1);
      best();
      soon();
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      commit();
    } else if (ev.key === "Escape" && filter) {
      ev.preventDefault();
      filter = "";
      fill(checks);
      select.value = last;
      said.textContent = "";
    }
  });
  select.addEventListener("beforeinput", (ev) => {
    ev.preventDefault();
    if (ev.inputType.startsWith("insert") && ev.data) typed(ev.data.trim(), ev.data.length > 1);
    else if (ev.inputType === "insertParagraph" || ev.inputType === "insertLineBreak") commit();
    else if (ev.inputType.startsWith("delete")) { filter = ""; best(); }
  });
  // a choice made in the list itself (the mouse, the arrow keys) is taken at once
  select.addEventListener("change", () => (filter ? soon() : commit()));
  select.addEventListener("blur", commit);
  fill(checks);
  select.value = known ? value : "";
  return el("div", { class: "field" }, el("label", { for: fid, text: label }), select, said);
}

// A button; ``adds`` names the kind of item it adds (where the focus goes when the last
// such item is removed).
export function button(text, onclick, cls = "", adds = undefined) {
  return el("button", { type: "button", class: cls, text, onclick, "data-add": adds });
}

// A mapping of names to values as rows (a call's arguments, a tool's computed columns):
// a name and a value each, Add and Remove. `send` gets the whole mapping (null: empty).
export function pairsField(label, value, send, { key = "Name", val = "Equal to", add = "Add a row", hint } = {}) {
  const pairs = Object.entries(value || {});
  const wrap = el("fieldset", { class: "pairs" }, el("legend", { text: label }));
  if (hint) wrap.append(el("p", { class: "hint", text: hint }));
  const out = (next) => send(Object.keys(next).length ? next : null);
  pairs.forEach(([k, v], j) => {
    wrap.append(el("div", { class: "row" },
      textField(key, k, (nk) => {
        const next = {};
        pairs.forEach(([a, b], x) => { next[x === j ? nk : a] = b; });
        out(next);
      }),
      textField(val, typeof v === "string" ? v : JSON.stringify(v), (nv) => {
        const next = Object.fromEntries(pairs);
        next[k] = nv;
        out(next);
      }),
      button(`Remove ${k}`, () => out(Object.fromEntries(pairs.filter((_, x) => x !== j))), "small")));
  });
  wrap.append(button(add, () => {
    const next = Object.fromEntries(pairs);
    let n = pairs.length + 1;
    while (`${key.toLowerCase().replace(/\W+/g, "_")}_${n}` in next) n++;
    next[`${key.toLowerCase().replace(/\W+/g, "_")}_${n}`] = "";
    out(next);
  }, "small"));
  return wrap;
}

// A list of items, each a few settings (a tool's rules {if, else}, the calls of
// same_world_as {name, args}): one group per item, Add and Remove. `itemField(f, value,
// set)` draws one setting of an item; `send` gets the whole list, an item that holds only
// its main setting written as that value alone.
export function rowsField(f, value, send, itemField) {
  const items = (Array.isArray(value) ? value : []).map((v) =>
    (typeof v === "string" && f.item_main ? { [f.item_main]: v } : { ...v }));
  const packed = (list) => list.map((v) => (f.item_main && Object.keys(v).length === 1 && f.item_main in v
    ? v[f.item_main] : v));
  const wrap = el("fieldset", { class: "rows-field" }, el("legend", { text: f.label }));
  if (f.doc) wrap.append(el("p", { class: "hint", text: f.doc }));
  const noun = f.label.replace(/s$/, "").toLowerCase();
  items.forEach((item, k) => {
    const group = el("fieldset", { class: "item" }, el("legend", { text: `${f.label} ${k + 1}` }));
    for (const sub of f.item) {
      group.append(itemField(sub, item[sub.key], (v) => {
        const next = items.map((x) => ({ ...x }));
        if (v === null || v === "" || v === false) delete next[k][sub.key];
        else next[k][sub.key] = v;
        send(packed(next));
      }));
    }
    group.append(button(`Remove ${noun} ${k + 1}`, () => send(packed(items.filter((_, j) => j !== k))), "small"));
    wrap.append(group);
  });
  wrap.append(button(`Add ${f.label === "Same world as" ? "a call" : `a ${noun}`}`, () => {
    const fresh = {};
    for (const sub of f.item) if (sub.required) fresh[sub.key] = "";
    send(packed([...items, fresh]));
  }, "small"));
  return wrap;
}
