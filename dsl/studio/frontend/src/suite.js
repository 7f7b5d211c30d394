// Suite settings: scenarist.yaml as a form — its targets (with Find models), defaults,
// world tables and tool library. Every change is an edit the server makes in the YAML;
// for a tool, the form asks what an author knows and the server writes the JSON Schema
// and the table keys.

import {
  el, button, textField, numberField, checkboxField, selectField, pairsField, rowsField,
} from "./widgets.js";

const WORDS = { base_url: "Base URL", model: "Model", api_key_env: "API key variable",
                cassette: "Cassette", entry: "Entry", url: "URL", command: "Command" };
const HINTS = {
  base_url: "The endpoint, up to and including /v1, e.g. http://127.0.0.1:8080/v1.",
  model: "The model's name, as the endpoint knows it: Find models asks it.",
  api_key_env: "The NAME of the environment variable that holds the key, never the key itself.",
};
const ACTION_WORDS = { read: "read: finds rows", create: "create: adds a row",
                       update: "update: changes rows", delete: "delete: removes rows" };

function targetItem(t, model, ctx) {
  const { edit } = ctx;
  const item = `target:${t.name}`;
  const box = el("fieldset", { class: "target", "data-item": item }, el("legend", { text: `Target ${t.name}` }));
  box.append(textField("Target name", t.name, (v) => {
    if (v.trim() && v.trim() !== t.name) edit({ op: "rename_target", target: t.name, name: v.trim() }, true, `target:${v.trim()}`);
  }, { hint: "How scenarios, runs and reports call it." }));
  box.append(selectField("Kind", t.kind, Object.keys(model.kinds),
    (v) => edit({ op: "target_set", target: t.name, key: "kind", value: v }, true, item)));
  const reach = el("p", { class: "reach hint", "aria-live": "polite", "data-reach": t.name });
  for (const [key, value] of Object.entries(t.fields)) {
    const label = WORDS[key] || key;
    const field = textField(label, value, (v) => {
      edit({ op: "target_set", target: t.name, key, value: v });
      if (key === "base_url") ctx.reach(t.name, v, t.fields.api_key_env || "", reach, null, true);
    }, { hint: HINTS[key] });
    box.append(field);
    if (key === "model" && t.kind === "openai") {
      const offered = el("div", { class: "models" });
      box.append(el("div", { class: "row" }, button("Find models", () => {
        const base = box.querySelector(`[data-key="base_url"]`);
        ctx.reach(t.name, base ? base.value : t.fields.base_url, t.fields.api_key_env || "", reach,
          { list: offered, model: field.querySelector("input"),
            pick: (m) => edit({ op: "target_set", target: t.name, key: "model", value: m }) });
      })), offered);
    }
    field.querySelector("input").setAttribute("data-key", key);
  }
  box.append(reach);
  if (t.kind === "openai" && t.fields.base_url) ctx.reach(t.name, t.fields.base_url, t.fields.api_key_env || "", reach, null);
  if (t.yaml_only.length) {
    box.append(el("p", { class: "hint", text: `Kept only in the YAML tab: ${t.yaml_only.join(", ")}.` }));
  }
  box.append(button(`Remove target ${t.name}`, () => edit({ op: "remove_target", target: t.name }, true, item, true), "small"));
  return box;
}

function argRow(a, k, tool, ctx) {
  const { edit } = ctx;
  const set = (key) => (v) => edit({ op: "arg_set", tool: tool.name, index: k, key, value: v }, key !== "description");
  return el("div", { class: "row arg", "data-item": `arg:${tool.name}:${k}` },
    textField("Argument name", a.name, (v) => { if (v.trim()) set("name")(v.trim()); }),
    selectField("Type", a.type, ["string", "number", "integer", "boolean"], set("type")),
    checkboxField("Required", a.required, set("required")),
    textField("What it is", a.description, set("description")),
    button(`Remove argument ${a.name}`, () => edit({ op: "remove_arg", tool: tool.name, index: k }, true,
      `arg:${tool.name}:${k}`, true), "small"));
}

function toolItem(t, model, ctx) {
  const { edit } = ctx;
  const item = `tool:${t.name}`;
  const set = (key, structural = false) => (v) => edit({ op: "tool_set", tool: t.name, key, value: v }, structural, item);
  const box = el("fieldset", { class: "tool", "data-item": item }, el("legend", { text: `Tool ${t.name}` }));
  box.append(textField("Tool name", t.name, (v) => {
    if (v.trim() && v.trim() !== t.name) edit({ op: "rename_tool", tool: t.name, name: v.trim() }, true, `tool:${v.trim()}`);
  }, { hint: "The name the agent sees: letters, digits, _ and -." }));
  box.append(textField("Description", t.description, set("description"), {
    multiline: true, hint: "What the tool does, as the agent reads it." }));
  const args = el("fieldset", { class: "args" }, el("legend", { text: "Arguments" }));
  if (t.args_yaml) {
    args.append(el("p", { class: "hint", text: "These arguments are written in a way the form cannot show: change them in the YAML tab." }));
  } else {
    t.args.forEach((a, k) => args.append(argRow(a, k, t, ctx)));
    args.append(button("Add argument", () => edit({ op: "add_arg", tool: t.name }, true, `arg:${t.name}:${t.args.length}`),
      "", `arg:${t.name}`));
  }
  box.append(args);
  const tables = model.world.map((w) => w.name);
  box.append(selectField("Acts on table", t.table, tables, set("table", true), {
    empty: "(none: it answers what Returns says)", hint: "A tool that reads or changes a table of the world." }));
  if (t.table) {
    box.append(selectField("Action", t.action, model.actions.map((a) => [a, ACTION_WORDS[a] || a]), set("action", true)));
    const names = t.args.map((a) => a.name).join(", ") || "none yet";
    box.append(textField("Where", t.where, set("where"), {
      hint: `Which rows: column = value, separated by commas; a value that is an argument's name (${names}) is what the agent sends in it. E.g. id = ${t.args[0] ? t.args[0].name : "card_id"}.` }));
    if (t.action === "update" || t.action === "create") {
      box.append(textField("Set", t.set, set("set"), {
        hint: t.action === "create" ? "The new row's columns: column = value, separated by commas."
          : "What it writes in the rows: column = value, separated by commas, e.g. status = blocked." }));
    }
  }
  box.append(checkboxField("Needs confirmation", t.confirm, set("confirm"),
    { hint: "The agent must ask the person before it runs (confirm: true)." }));
  if (t.returns_yaml) {
    box.append(el("p", { class: "hint", text: "What it returns is kept only in the YAML tab." }));
  } else {
    box.append(textField("Returns", t.returns, set("returns"), {
      multiline: true, hint: t.table ? "Optional: replaces the rows the agent gets; may use {{ rows }} and {{ args.NAME }}."
        : "What the tool answers; {{ args.NAME }} is replaced by an argument." }));
  }
  if (t.more.length) {
    const more = el("details", { class: "more" }, el("summary", { text: `More settings of ${t.name}` }));
    for (const f of t.more) {
      const send = set(f.key, f.kind === "bool" || f.kind === "enum");
      if (f.kind === "bool") more.append(checkboxField(f.label, f.value === true, send, { hint: f.doc }));
      else if (f.kind === "enum") more.append(selectField(f.label, f.value ?? "", f.options, send, { hint: f.doc, empty: "(not set)" }));
      else if (f.kind === "number" || f.kind === "integer") more.append(numberField(f.label, f.value, send, { hint: f.doc }));
      else if (f.kind === "texts") more.append(textField(f.label, Array.isArray(f.value) ? f.value.join(", ") : (f.value ?? ""), send, { hint: `${f.doc} (separated by commas)` }));
      else if (f.kind === "map") more.append(pairsField(f.label, f.value, set(f.key, true), { key: "Column", val: "Value of the column", add: `Add a column to ${f.label.toLowerCase()}`, hint: f.doc }));
      else if (f.kind === "rows") more.append(rowsField(f, f.value, set(f.key, true), (sub, v, s2) => textField(sub.label, v ?? "", s2, { hint: sub.doc })));
      else more.append(textField(f.label, f.value ?? "", send, { hint: f.doc }));
    }
    box.append(more);
  }
  if (t.yaml_only.length) {
    box.append(el("p", { class: "hint", text: `Kept only in the YAML tab: ${t.yaml_only.join(", ")}.` }));
  }
  box.append(button(`Remove tool ${t.name}`, () => edit({ op: "remove_tool", tool: t.name }, true, item, true), "small"));
  return box;
}

export function renderSuite(container, model, ctx) {
  const { edit } = ctx;
  container.replaceChildren();
  if (model.yaml_only.length) {
    container.append(el("p", { class: "note", id: "yaml-only",
      text: `Kept only in the YAML tab (the form does not show them): ${model.yaml_only.join(", ")}.` }));
  }
  const targets = el("section", { class: "targets", "aria-labelledby": "targets-h", "data-item": "targets" },
    el("h3", { id: "targets-h", text: "Targets" }),
    el("p", { class: "hint", text: "The systems under test: an OpenAI-compatible endpoint and its model, a recording, your own agent." }));
  for (const t of model.targets) targets.append(targetItem(t, model, ctx));
  targets.append(button("Add target", () => edit({ op: "add_target" }, true, "target:new"), "", "target"));
  container.append(targets);

  const d = model.defaults;
  const defaults = el("section", { class: "defaults", "aria-labelledby": "defaults-h" },
    el("h3", { id: "defaults-h", text: "Defaults" }),
    el("div", { class: "row counts" },
      numberField("Runs", d.runs, (v) => edit({ op: "defaults_set", key: "runs", value: v }),
        { hint: "How many times each scenario is tried (default 5)." }),
      numberField("Min pass", d.min_pass, (v) => edit({ op: "defaults_set", key: "min_pass", value: v }, true),
        { hint: d.min_pass_rate !== null && d.min_pass_rate !== undefined
          ? `How many of the runs must pass (now a share: ${d.min_pass_rate}; a count replaces it).`
          : "How many of the runs must pass." }),
      numberField("Concurrency", d.concurrency, (v) => edit({ op: "defaults_set", key: "concurrency", value: v }),
        { hint: "Attempts in flight at once (default 8)." })),
    selectField("Default target", d.target || "", model.targets.map((t) => t.name),
      (v) => edit({ op: "defaults_set", key: "target", value: v || null }),
      { empty: "(the only target)", hint: "What a run tests when no target is named." }));
  container.append(defaults);

  const world = el("section", { class: "world", "aria-labelledby": "world-h", "data-item": "tables" },
    el("h3", { id: "world-h", text: "World" }),
    el("p", { class: "hint", text: "Tables of rows the tools read and change; every attempt starts from a fresh copy." }));
  for (const t of model.world) world.append(ctx.grid(t, { scope: "suite" }));
  world.append(button("Add table", async () => {
    const name = await ctx.ask("Add a table to the world", "Table name", "Add table");
    if (name) edit({ op: "table", action: "add_table", table: name }, true, `table:${name}`);
  }, "", "table"));
  container.append(world);

  const tools = el("section", { class: "library", "aria-labelledby": "tools-h", "data-item": "tools" },
    el("h3", { id: "tools-h", text: "Tools" }),
    el("p", { class: "hint", text: "The fake tools scenarios give the agent: they never touch a real system." }));
  for (const t of model.tools) tools.append(toolItem(t, model, ctx));
  tools.append(button("Add tool", () => edit({ op: "add_tool" }, true, "tool:new"), "", "tool"));
  container.append(tools);
}
