// A world table as a grid (role grid, named by the table): editable cells, Add row, Add
// column (asking its name), Import CSV (a file from this computer), and a way to remove a
// row, a column or the table. Every change is an edit the server makes where the table
// lives: in the YAML, or in the table's own CSV or JSONL file.

import { el, id, button, watch } from "./widgets.js";

let serial = 0;

// ctx: { edit(action, fields, focus), ask(title, label, action) -> Promise<string|null>,
//        where: text saying where the table is kept }
export function renderGrid(table, ctx) {
  const n = ++serial;
  const gid = `grid-${n}`;
  const head = el("h4", { id: `${gid}-h`, text: `Table ${table.name}` });
  const box = el("section", { class: "table", "aria-labelledby": head.id, "data-item": `table:${table.name}` }, head);
  if (ctx.where) box.append(el("p", { class: "hint", text: ctx.where }));
  if (table.note) box.append(el("p", { class: "note", text: table.note }));
  if (!table.editable) return box;
  const cols = table.columns;
  const grid = el("table", { role: "grid", "aria-label": table.name, class: "grid" });
  const hrow = el("tr", { role: "row" });
  const headIds = cols.map((c, i) => `${gid}-c${i}`);
  cols.forEach((c, i) => {
    hrow.append(el("th", { role: "columnheader", scope: "col" },
      el("span", { id: headIds[i], text: c }),
      c === "id" ? null : el("button", {
        type: "button", class: "tiny", "aria-label": `Remove column ${c}`, text: "×",
        onclick: () => ctx.edit("remove_column", { column: c }, `table:${table.name}`),
      })));
  });
  hrow.append(el("th", { role: "columnheader", scope: "col" }, el("span", { class: "sr", text: "Row" })));
  grid.append(el("thead", {}, hrow));
  const body = el("tbody");
  table.rows.forEach((cells, r) => {
    const tr = el("tr", { role: "row", "data-item": `row:${table.name}:${r}` });
    cells.forEach((value, i) => {
      const input = el("input", { type: "text", id: `${gid}-r${r}c${i}`, "aria-labelledby": headIds[i],
                                  "aria-describedby": `${gid}-rh${r}`, autocomplete: "off",
                                  "data-row": r, "data-col": i });
      input.value = value;
      watch(input, value, (v) => ctx.edit("set_cell", { row: r, column: cols[i], value: v }));
      input.addEventListener("keydown", (ev) => move(ev, grid, r, i));
      tr.append(el("td", { role: "gridcell" }, input));
    });
    const rid = table.ids[r] || String(r + 1);
    tr.append(el("td", { role: "gridcell" },
      el("span", { id: `${gid}-rh${r}`, class: "sr", text: `row ${r + 1} (id ${rid})` }),
      el("button", { type: "button", class: "tiny", "aria-label": `Remove row ${rid} of ${table.name}`,
                     text: "Remove", onclick: () => ctx.edit("remove_row", { row: r }, `row:${table.name}:${r}`, true) })));
    body.append(tr);
  });
  grid.append(body);
  box.append(el("div", { class: "scroll" }, grid));
  const file = el("input", { type: "file", accept: ".csv,text/csv", hidden: true, "aria-label": "Import CSV" });
  file.addEventListener("change", async () => {
    const f = file.files && file.files[0];
    if (!f) return;
    const text = await f.text();
    file.value = "";
    ctx.edit("import_csv", { text }, `row:${table.name}:0`);
  });
  box.append(el("div", { class: "row" },
    button("Add row", () => ctx.edit("add_row", {}, `row:${table.name}:${table.rows.length}`), "", `row:${table.name}`),
    button("Add column", async () => {
      const name = await ctx.ask(`Add a column to ${table.name}`, "Column name", "Add column");
      if (name) ctx.edit("add_column", { column: name }, `col:${table.name}:${name}`);
    }),
    button("Import CSV", () => file.click()),
    file,
    ctx.removable === false ? null : button(`Remove table ${table.name}`,
      () => ctx.edit("remove_table", {}, `table:${table.name}`, true), "small")));
  return box;
}

// Arrow keys and Enter move between the cells of a column, as in a spreadsheet.
function move(ev, grid, r, i) {
  let to = null;
  if (ev.key === "ArrowDown" || ev.key === "Enter") to = [r + 1, i];
  else if (ev.key === "ArrowUp") to = [r - 1, i];
  if (!to) return;
  const next = grid.querySelector(`input[data-row="${to[0]}"][data-col="${to[1]}"]`);
  if (next) {
    ev.preventDefault();
    ev.target.dispatchEvent(new Event("change"));
    next.focus();
    next.select();
  }
}

export { id };
