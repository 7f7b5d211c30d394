// The scenario form: a scenario in plain fields. Every change is an edit the server makes
// in the YAML (keeping comments and quoting); the form only draws the model it gets back.
// A check's settings are drawn from its shape (the server reads it from the check
// registry's schemas): text, yes/no, numbers, choices, tools, arguments as rows; a world
// check from the suite's own tables, rows and columns.

import {
  el, id, button, textField, numberField, checkboxField, selectField, checkChooser,
  flushPending, pairsField, rowsField,
} from "./widgets.js";
import { renderGrid } from "./grid.js";

export { el, flushPending };

// The tables a world check of this scenario can look at: the suite's, and the
// scenario's own (which replace the suite's of the same name).
function worldTables(model, vocab) {
  const out = new Map();
  for (const t of vocab.tables || []) out.set(t.name, { columns: t.columns, ids: t.ids });
  for (const t of model.world || []) {
    if (t.editable) out.set(t.name, { columns: t.columns, ids: t.ids });
  }
  return out;
}

function scenarioTools(model) {
  return [...model.tools.filter((t) => t.on).map((t) => t.name), ...model.inline_tools];
}

function toolChoice(label, value, tools, send) {
  return selectField(label, value, tools, send, { empty: tools.length ? undefined : "(give the scenario a tool first)" });
}

// One setting of a check, drawn by its kind.
function fieldOf(f, values, check, tools, ctx, main) {
  const { edit, list, index } = check;
  // the main setting's text goes as check_value: it still lands if the check was changed
  // to another that takes a text meanwhile
  const typed = (v) => edit(f.key === main && typeof v === "string"
    ? { op: "check_value", list, index, value: v }
    : { op: "check_field", list, index, key: f.key, value: v });
  const set = (v) => edit({ op: "check_field", list, index, key: f.key, value: v }, true);
  const value = values[f.key];
  switch (f.kind) {
    case "text":
      return textField(f.label, value ?? "", typed, { hint: f.doc, multiline: f.key === "rubric" });
    case "texts": {
      const items = Array.isArray(value) ? value : [value ?? ""];
      const wrap = el("div", { class: "texts" });
      items.forEach((v, k) => wrap.append(textField(f.label, v, (text) => {
        const next = [...items];
        next[k] = text;
        typed(next.length === 1 ? next[0] : next);
      }, { hint: k === 0 ? f.doc : undefined })));
      wrap.append(button(`Add another text to ${check.name}`, () => set([...items, ""]), "small"));
      return wrap;
    }
    case "tool":
      return toolChoice(f.label, value ?? "", tools, set);
    case "tools": {
      const items = Array.isArray(value) ? value : (value ? [value] : []);
      const wrap = el("fieldset", { class: "tools-list" }, el("legend", { text: f.label }));
      items.forEach((v, k) => {
        wrap.append(el("div", { class: "row" },
          toolChoice(`Tool ${k + 1}`, v, tools, (t) => { const next = [...items]; next[k] = t; set(next); }),
          button(`Remove tool ${k + 1}`, () => set(items.filter((_, j) => j !== k)), "small")));
      });
      wrap.append(button("Add a tool", () => set([...items, tools[0] || ""]), "small"));
      return wrap;
    }
    case "bool":
      return checkboxField(f.label, value === true, (v) => set(v), { hint: f.doc });
    case "number":
    case "integer":
      return numberField(f.label, value, (v) => set(v), { hint: f.doc });
    case "enum":
      return selectField(f.label, value ?? "", f.options, set, { hint: f.doc, empty: "(default)" });
    case "map": {
      const arg = f.label === "Arguments";
      return pairsField(f.label, value, set, { key: arg ? "Argument" : "Field", val: "Equal to",
        add: arg ? "Add an argument to match" : "Add a field", hint: f.doc });
    }
    case "rows":
      return rowsField(f, value, set, (sub, v, send) => fieldOf(sub, { [sub.key]: v },
        { edit: (op) => send(op.value), list, index }, tools, ctx, null) || el("span"));
    default:
      return null;
  }
}

function worldCheck(c, check, tables) {
  const { edit, list, index } = check;
  const entries = c.world.length ? c.world : [];
  const send = (next) => edit({ op: "check_world", list, index, entries: next }, true);
  const wrap = el("div", { class: "world-check" });
  entries.forEach((e, k) => {
    const t = tables.get(e.table);
    const change = (key, v) => {
      const next = entries.map((x) => ({ ...x }));
      next[k][key] = v;
      if (key === "table") {
        const nt = tables.get(v);
        next[k].row = nt && nt.ids.length ? nt.ids[0] : "";
        next[k].column = nt ? (nt.columns.find((col) => col !== "id") || "id") : "";
      }
      if (key === "column") {
        next[k].absent = v === "";
        if (v === "") next[k].column = "";
      }
      send(next);
    };
    const group = el("fieldset", { class: "condition" },
      el("legend", { text: entries.length > 1 ? `Row ${k + 1} to look at` : "The row to look at" }),
      selectField("Table", e.table, [...tables.keys()], (v) => change("table", v)),
      selectField("Row", e.row, t ? t.ids.map((x) => [x, x]) : [], (v) => change("row", v),
        { hint: "By its id." }),
      selectField("Column", e.absent ? "" : e.column,
        t ? t.columns.map((x) => [x, x]) : [], (v) => change("column", v),
        { empty: "(the row must not exist)" }));
    if (!e.absent) {
      group.append(textField("Value", e.value, (v) => {
        const next = entries.map((x) => ({ ...x }));
        next[k].value = v;
        edit({ op: "check_world", list, index, entries: next });
      }, { hint: "What the column must hold at the end of the conversation." }));
    }
    if (entries.length > 1) {
      group.append(button(`Stop looking at row ${k + 1}`, () => send(entries.filter((_, j) => j !== k)), "small"));
    }
    wrap.append(group);
  });
  wrap.append(button("Look at another row", () => {
    const first = [...tables.entries()][0];
    if (!first) return;
    const [name, t] = first;
    send([...entries, { table: name, row: t.ids[0] || "", column: t.columns.find((x) => x !== "id") || "id",
                        value: "", absent: false }]);
  }, "small"));
  return wrap;
}

function checkItem(c, i, list, model, ctx) {
  const { vocab, edit } = ctx;
  const where = list === null ? "" : ` of turn ${list + 1}`;
  const item = `check:${list}:${i}`;
  const box = el("fieldset", { class: "check", "data-item": item },
    el("legend", { text: `Check ${i + 1}${where}` }));
  box.append(checkChooser("Check", c.check, vocab.checks,
    (name) => edit({ op: "set_check", list, index: i, check: name }, true, item)));
  const check = { edit, list, index: i, name: c.check };
  const settings = el("div", { class: "settings" });
  const spec = vocab.checks.find((k) => k.name === c.check);
  if (c.shape === "world") {
    settings.append(worldCheck(c, check, worldTables(model, vocab)));
  } else if (c.shape === "fields" && spec) {
    const tools = scenarioTools(model);
    for (const f of spec.shape.fields) {
      const node = fieldOf(f, c.values || {}, check, tools, ctx, spec.shape.main);
      if (node) settings.append(node);
    }
  } else if (c.shape === "yaml" || c.yaml) {
    settings.append(el("p", { class: "hint" }, "Kept only in the YAML tab (the form cannot show it): ",
      el("code", { text: c.yaml || "(no value)" })));
  }
  box.append(settings);
  box.append(checkboxField("Always", c.always, (v) => edit({ op: "check_always", list, index: i, value: v }),
    { hint: "It must pass in every attempt." }));
  box.append(textField("Name", c.name, (v) => edit({ op: "check_name", list, index: i, value: v }),
    { hint: "How reports call this check (optional)." }));
  box.append(button(`Remove check ${i + 1}${where}`,
    () => edit({ op: "remove_check", list, index: i }, true, item, true), "small"));
  return box;
}

function checkList(checks, list, model, ctx, addLabel) {
  const wrap = el("div", { class: "checks" });
  checks.forEach((c, i) => wrap.append(checkItem(c, i, list, model, ctx)));
  wrap.append(button(addLabel, () => ctx.edit({ op: "add_check", list, check: "contains" }, true,
    `check:${list}:${checks.length}`), "", `check:${list}`));
  return wrap;
}

const KINDS = [["say", "says"], ["confirm", "confirms"], ["cancel", "cancels"]];

function turnItem(t, i, count, model, ctx) {
  const { edit } = ctx;
  const item = `turn:${i}`;
  const box = el("fieldset", { class: "turn", "data-item": item }, el("legend", { text: `Turn ${i + 1}` }));
  if (t.kind === "other") {
    box.append(el("p", { class: "hint", text: "This turn is kept only in the YAML tab." }));
    return box;
  }
  box.append(selectField(`Turn ${i + 1}: what the person does`, t.kind,
    KINDS.map(([v, w]) => [v, `The person ${w}`]), (kind) => edit({
      op: "turn", index: i, kind,
      value: kind === "say" ? (t.kind === "say" ? t.value || "" : "") : (t.kind === "say" ? "all" : t.value),
    }, true, item)));
  box.append(textField(t.kind === "say" ? `Turn ${i + 1}: what the person says`
                                        : `Turn ${i + 1}: which tool (or all)`,
    t.value, (v) => edit({ op: "turn", index: i, kind: t.kind, value: v })));
  const row = el("div", { class: "row" });
  if (i > 0) row.append(button(`Move turn ${i + 1} up`, () => edit({ op: "move_turn", index: i, to: i - 1 }, true, `turn:${i - 1}`), "small"));
  if (i < count - 1) row.append(button(`Move turn ${i + 1} down`, () => edit({ op: "move_turn", index: i, to: i + 1 }, true, `turn:${i + 1}`), "small"));
  row.append(button(`Remove turn ${i + 1}`, () => edit({ op: "remove_turn", index: i }, true, item, true), "small"));
  box.append(row);
  box.append(el("h4", { text: `Checks on turn ${i + 1}` }));
  box.append(checkList(t.checks, i, model, ctx, `Add a check on turn ${i + 1}`));
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

function simulatedUser(w, ctx) {
  const { edit, vocab } = ctx;
  const user = w.kind === "user" ? w.user : { goal: "", persona: "", max_turns: null, target: null };
  const set = (key) => (v) => edit({ op: "user", key, value: v }, w.kind !== "user");
  const box = el("fieldset", { class: "user", "data-item": "user" },
    el("legend", { text: "A simulated user: a model plays the person" }));
  if (w.kind !== "user") {
    box.append(el("p", { class: "hint", text:
      "Give a goal to let a model play the person instead of the message or turns above." }));
  }
  box.append(textField("Goal", user.goal, set("goal"), { multiline: true,
    hint: "What the person wants, in a sentence; the model says when it is reached." }));
  box.append(textField("Persona", user.persona, set("persona"), { hint: "Who the person is and how they write (optional)." }));
  box.append(numberField("Max turns", user.max_turns, set("max_turns"), { hint: "The most messages the person writes (default 5)." }));
  if (w.kind === "user") {
    box.append(selectField("Played by", user.target || "", vocab.model_targets || [], set("target"),
      { hint: "The suite's model target that writes the person's messages." }));
    box.append(button("Write the person's messages instead", () => edit({ op: "messages" }, true), "small"));
  }
  return box;
}

export function renderForm(container, model, ctx) {
  const { vocab, edit } = ctx;
  container.replaceChildren();
  const f = model;
  if (f.yaml_only && f.yaml_only.length) {
    container.append(el("p", { class: "note", id: "yaml-only",
      text: `Kept only in the YAML tab (the form does not show them): ${f.yaml_only.join("; ")}.` }));
  }
  container.append(textField("Description", f.description, (v) =>
    edit({ op: "description", value: v }), { hint: "What this scenario is about, in a sentence." }));
  container.append(textField("Moment", f.moment, (v) => edit({ op: "moment", value: v }), {
    hint: "When the person speaks: date, time and UTC offset, e.g. 2026-09-29T10:00:00-03:00.",
  }));
  container.append(el("p", { id: "moment-words", class: "said", "aria-live": "polite" }));
  showMoment(f);
  container.append(textField("System", f.system, (v) => edit({ op: "system", value: v }), {
    multiline: true, hint: "Extra instructions for the agent in this situation (given.system), e.g. “The patient is Ana Gómez.”",
  }));
  const counts = el("div", { class: "row counts" },
    numberField("Runs", f.runs, (v) => edit({ op: "runs", value: v }), { hint: "How many times to try it (empty: the suite's default)." }),
    numberField("Min pass", f.min_pass, (v) => edit({ op: "min_pass", value: v }), { hint: "How many of the runs must pass." }));
  if (f.min_pass_rate !== null && f.min_pass_rate !== undefined) {
    counts.append(numberField("Share of runs that must pass", f.min_pass_rate,
      (v) => edit({ op: "min_pass_rate", value: v }),
      { hint: "min_pass_rate: a share of the runs (0 to 1) instead of a count; Min pass replaces it." }));
  }
  container.append(counts);

  const tools = el("fieldset", { class: "tools" }, el("legend", { text: "Tools the agent has" }));
  if (!f.tools.length) tools.append(el("p", { class: "hint", text: "The suite defines no tools: add them in Suite settings." }));
  for (const t of f.tools) {
    const desc = vocab.tools.find((x) => x.name === t.name);
    tools.append(checkboxField(t.name, t.on, (on) => edit({ op: "tool", name: t.name, on }, true),
      { hint: desc ? desc.description : undefined }));
  }
  if (f.inline_tools.length) {
    tools.append(el("p", { class: "hint", text:
      `Defined in this file (kept only in the YAML tab): ${f.inline_tools.join(", ")}.` }));
  }
  container.append(tools);

  const world = el("section", { class: "world", "aria-labelledby": "sworld-h", "data-item": "tables" },
    el("h3", { id: "sworld-h", text: "This scenario's own world" }),
    el("p", { class: "hint", text: "Tables here add to the suite's world, or replace its table of the same name, for this scenario only." }));
  for (const t of f.world || []) {
    world.append(ctx.grid(t, { scope: "scenario" }));
  }
  world.append(button("Add table", async () => {
    const name = await ctx.ask("Add a table to this scenario's world", "Table name", "Add table");
    if (name) edit({ op: "table", action: "add_table", table: name }, true, `table:${name}`);
  }, "", "table"));
  container.append(world);

  const person = el("section", { class: "person", "aria-labelledby": "person-h" },
    el("h3", { id: "person-h", text: "What the person does" }));
  const w = f.when;
  if (w.kind === "message") {
    person.append(textField("What the person says", w.message, (v) =>
      edit({ op: "message", value: v }), { multiline: true }));
  } else if (w.kind === "turns") {
    w.turns.forEach((t, i) => person.append(turnItem(t, i, w.turns.length, f, ctx)));
  } else if (w.kind === "other") {
    person.append(el("p", { class: "hint", text: "What the person does is kept only in the YAML tab." }));
  }
  if (w.kind === "message" || w.kind === "turns") {
    const count = w.kind === "turns" ? w.turns.length : (w.message ? 2 : 1);
    person.append(button("Add turn", () => edit({ op: "add_turn" }, true, `turn:${count - 1}`), "", "turn"));
  }
  if (w.kind !== "other") person.append(simulatedUser(w, ctx));
  container.append(person);

  const checks = el("section", { class: "then", "aria-labelledby": "then-h" },
    el("h3", { id: "then-h", text: "Checks on the answer" }));
  checks.append(checkList(f.checks, null, f, ctx, "Add check"));
  container.append(checks);
}

export { id };
