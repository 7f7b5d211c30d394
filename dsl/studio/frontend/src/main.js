// The studio's page: the scenarios of the suite and its settings, one file open in the
// YAML editor or the form, its problems, saving without losing anything, trying and
// running. Plain modules; the server does the work.

import { connect, get, post, events, ApiError } from "./api.js";
import { makeEditor, setText, setLabel, showProblems, goTo } from "./editor.js";
import { renderForm, showMoment } from "./form.js";
import { renderSuite } from "./suite.js";
import { renderGrid } from "./grid.js";
import { el, flushPending } from "./widgets.js";

const $ = (sel) => document.querySelector(sel);
const LINT_DELAY_MS = 300;
const SUITE = "scenarist.yaml";

const state = {
  suite: null,
  path: null, // the open file, relative to the suite
  buffers: new Map(), // path -> {text, version, saved, kind}: unsaved text survives a switch
  lintTimer: null,
  lintSeq: 0,
  formChain: Promise.resolve(),
  talk: null, // the conversation's id
  running: false,
  results: new Map(), // scenario path -> the last run's verdict, said beside Run
  tables: new Map(), // table file path -> its grid's model
};

// ------------------------------------------------------------------ words on the page

// The status line: one message at a time; a run's verdict has its own region (Run
// result), and only one of the two is shown at once.
function say(text) {
  const s = $("#status");
  s.textContent = text || "";
  s.hidden = !text;
  if (text) $("#run-result").hidden = true;
}

function showResult(text) {
  const r = $("#run-result");
  r.textContent = text || "";
  r.hidden = !text;
  if (text) say("");
}

// ------------------------------------------------------------------ buffers

const buffer = (path = state.path) => state.buffers.get(path);
const dirty = (b) => !!b && b.text !== b.saved;

// The files the open page edits: its YAML and the table files its world names.
function pageFiles() {
  const files = [state.path];
  const model = forms.model;
  for (const t of (model && model.world) || []) {
    const p = t.path || t.file;
    if (p && state.buffers.has(p)) files.push(p);
  }
  return files;
}

function markDirty() {
  $("#dirty").hidden = !pageFiles().some((p) => dirty(buffer(p)));
  drawNav();
}

// ------------------------------------------------------------------ the editor

const editor = makeEditor($("#editor"), {
  vocab: () => state.suite,
  onChange: () => {
    const b = buffer();
    if (!b) return;
    b.text = editor.state.doc.toString();
    markDirty();
    scheduleLint();
  },
});

function scheduleLint() {
  clearTimeout(state.lintTimer);
  state.lintTimer = setTimeout(lintNow, LINT_DELAY_MS);
}

async function lintNow() {
  if (!state.path) return;
  const seq = ++state.lintSeq;
  const path = state.path;
  const text = editor.state.doc.toString();
  try {
    const r = await post("/api/lint", { path, text });
    if (seq !== state.lintSeq || path !== state.path || text !== editor.state.doc.toString()) return;
    showAllProblems(r);
  } catch (e) {
    say(`Lint failed: ${e.message}`);
  }
}

function showAllProblems(r) {
  showProblems(editor, r.problems);
  const list = $("#problems");
  list.replaceChildren(...r.problems.map((p) => el("li", { class: p.severity },
    el("button", { type: "button", title: p.hint ? `hint: ${p.hint}` : undefined,
                   onclick: () => { showTab("yaml"); goTo(editor, p.line, p.col); } },
      p.text))));
  $("#no-problems").hidden = r.problems.length > 0;
  $("#elsewhere").replaceChildren(...r.elsewhere.map((t) => el("li", { text: t })));
  $("#elsewhere-box").hidden = r.elsewhere.length === 0;
}

// ------------------------------------------------------------------ the suite and the navigation

async function loadSuite() {
  state.suite = await get("/api/suite");
  $("#suite-name").textContent = state.suite.name;
  drawNav();
  const select = $("#target");
  const was = select.value;
  select.replaceChildren(...state.suite.targets.map((t) => el("option", { value: t, text: t })));
  if (was && state.suite.targets.includes(was)) select.value = was;
  else if (state.suite.default_target) select.value = state.suite.default_target;
}

function drawNav() {
  if (!state.suite) return;
  const list = $("#files");
  list.replaceChildren(...state.suite.files.map((f) => el("li", {},
    el("a", { href: `#${encodeURIComponent(f.path)}`, "aria-current": f.path === state.path ? "page" : undefined,
              onclick: (ev) => { ev.preventDefault(); openFile(f.path); } }, f.path),
    dirty(buffer(f.path)) ? el("span", { class: "unsaved", text: " (unsaved changes)" }) : null,
    f.verdict ? el("span", { class: `verdict v-${f.verdict.replace(/\s/g, "-")}`,
                             text: ` last run: ${f.verdict}` }) : null)));
  $("#no-files").hidden = state.suite.files.length > 0;
  const settings = $("#settings");
  settings.setAttribute("aria-current", state.path === SUITE ? "page" : "false");
  $("#settings-unsaved").hidden = !dirty(buffer(SUITE));
}

// A conversation belongs to one scenario and one target: another one starts afresh.
function resetTry() {
  state.talk = null;
  $("#conversation").replaceChildren();
  $("#world-changes").hidden = true;
  $("#world-turns").replaceChildren();
  $("#try-result").hidden = true;
  $("#held").hidden = true;
  $("#message").disabled = false;
  $("#send").disabled = false;
  $("#working").hidden = true;
}

async function fetchBuffer(path) {
  const r = await get(`/api/file?path=${encodeURIComponent(path)}`);
  const text = r.text.replace(/\r\n/g, "\n");
  const b = { text, version: r.version, saved: text, kind: r.kind };
  state.buffers.set(path, b);
  return b;
}

async function openFile(path) {
  flushPending();
  await state.formChain;
  if (path !== state.path) {
    $("#form").replaceChildren(); // never another file's form while this one's is drawn
    resetTry();
    $("#open-report").hidden = true;
    $("#run-notes").replaceChildren();
    $("#conflict").hidden = true;
    say("");
  }
  if (!state.buffers.has(path)) {
    try {
      await fetchBuffer(path);
    } catch (e) {
      say(e.message);
      return;
    }
  }
  state.path = path;
  const b = buffer();
  const suite = b.kind === "suite";
  history.replaceState(null, "", `${location.pathname}${location.search}#${encodeURIComponent(path)}`);
  $("#file-name").textContent = suite ? `${path} — Suite settings` : path;
  $("#workspace").hidden = false;
  $("#welcome").hidden = true;
  $("#try-run").hidden = suite;
  setLabel(editor, suite ? "Suite YAML" : "Scenario YAML");
  showResult(suite ? "" : (state.results.get(path) || ""));
  forms.model = null;
  const same = editor.state.doc.toString() === b.text;
  setText(editor, b.text);
  if (same) scheduleLint();
  markDirty();
  if (suite && currentTab() === "yaml") await showTab("form");
  else if (currentTab() === "form") await refreshForm();
  await lintNow();
}

// ------------------------------------------------------------------ tabs

function currentTab() {
  return $("#tab-form").getAttribute("aria-selected") === "true" ? "form" : "yaml";
}

async function showTab(which) {
  flushPending();
  for (const name of ["yaml", "form"]) {
    const on = name === which;
    const tab = $(`#tab-${name}`);
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    $(`#panel-${name}`).hidden = !on;
  }
  if (which === "form") await refreshForm();
}

function setupTabs() {
  for (const name of ["yaml", "form"]) {
    const tab = $(`#tab-${name}`);
    tab.addEventListener("click", () => showTab(name));
    tab.addEventListener("keydown", (ev) => {
      if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(ev.key)) {
        ev.preventDefault();
        const next = name === "yaml" ? "form" : "yaml";
        const to = ev.key === "Home" ? "yaml" : ev.key === "End" ? "form" : next;
        showTab(to);
        $(`#tab-${to}`).focus();
      }
    });
  }
}

// ------------------------------------------------------------------ the form

// Edits go to the server one after the other, each on the text the last one left. The
// form is drawn again after a change of its shape (a check added, a turn moved) once no
// edit is waiting, so that what the person does meanwhile is never drawn over. Focus
// then goes to what was just added, or stays in place after a removal.
const forms = { queued: 0, redraw: false, model: null, focus: null, at: null };

function formEdit(op, structural = false, focusKey = null, removal = false) {
  return editFile(state.path, op, structural, focusKey, removal);
}

// While a change of the form's shape is on its way, the form's controls wait (read-only,
// disabled): nothing typed or clicked lands on a control about to be drawn anew.
function freeze() {
  const box = $("#form");
  if (box.classList.contains("busy")) return;
  forms.at = where(document.activeElement, box);
  box.classList.add("busy");
  box.setAttribute("aria-busy", "true");
  for (const c of box.querySelectorAll("input, textarea")) c.readOnly = true;
  for (const c of box.querySelectorAll("select, button, input[type=checkbox]")) c.disabled = true;
}

function thaw() {
  const box = $("#form");
  box.classList.remove("busy");
  box.removeAttribute("aria-busy");
  for (const c of box.querySelectorAll("input, textarea")) c.readOnly = false;
  for (const c of box.querySelectorAll("select, button, input[type=checkbox]")) c.disabled = false;
}

function editFile(path, op, structural, focusKey, removal) {
  forms.queued++;
  if (structural) {
    forms.redraw = true;
    freeze();
  }
  if (focusKey) forms.focus = removal ? removedAt(focusKey) : { key: focusKey };
  state.formChain = state.formChain.then(async () => {
    const b = buffer(path);
    try {
      if (!b) return;
      const r = await post("/api/form", { path, text: b.text, edits: [op] });
      b.text = r.text;
      if (path === state.path) {
        setText(editor, r.text);
        if (r.problems) showAllProblems(r);
        forms.model = r.form;
        if (op.op === "moment") showMoment(r.form);
      } else if (r.kind === "table") {
        state.tables.set(path, r.form);
      }
      markDirty();
    } catch (e) {
      say(e.message);
      forms.redraw = true; // show the text's own form again
    } finally {
      forms.queued--;
    }
    if (forms.queued === 0 && forms.redraw) {
      flushPending(); // what was typed meanwhile goes first
      if (forms.queued === 0) {
        forms.redraw = false;
        if (forms.model) await drawForm(forms.model);
        else thaw();
      }
    }
  }).catch((e) => {
    forms.queued = Math.max(0, forms.queued);
    thaw();
    say(`The form could not be drawn: ${e.message}`);
  });
  return state.formChain;
}

// A grid: a table of the open file's world, or of a file the world names.
function gridFor(table, { scope }) {
  const path = table.file ? (table.path || table.file) : null;
  if (!path) {
    return renderGrid(table, {
      ask,
      removable: true,
      edit: (action, fields, focus, removal) => formEdit({ op: "table", action, table: table.name, ...fields },
        true, focus, removal),
      where: scope === "suite" ? "" : "",
    });
  }
  const model = state.tables.get(path);
  if (!model) {
    const holder = el("div", { class: "table", "data-item": `table:${table.name}` },
      el("p", { class: "hint", text: `Opening ${path}…` }));
    (async () => {
      try {
        const b = state.buffers.get(path) || await fetchBuffer(path);
        const r = await post("/api/form", { path, text: b.text, edits: [] });
        state.tables.set(path, r.form);
      } catch (e) {
        state.tables.set(path, { name: table.name, columns: [], rows: [], ids: [], editable: false,
                                 note: `${path} cannot be opened: ${e.message}` });
      }
      if (forms.model) drawForm(forms.model);
    })();
    return holder;
  }
  return renderGrid({ ...model, name: table.name }, {
    ask,
    removable: false,
    where: `Kept in ${path}: its changes are saved to that file.`,
    edit: (action, fields, focus, removal) => editFile(path, { op: action, ...fields }, true, focus, removal),
  });
}

async function drawForm(model) {
  const box = $("#form");
  const focusAt = where(document.activeElement, box) || forms.at;
  forms.at = null;
  box.classList.remove("busy");
  box.removeAttribute("aria-busy");
  const ctx = { vocab: state.suite, edit: formEdit, ask, grid: gridFor, reach };
  // what the person opened stays open when the form is drawn anew
  const open = new Set([...box.querySelectorAll("details[open] > summary")].map((s) => s.textContent));
  if (buffer() && buffer().kind === "suite") renderSuite(box, model, ctx);
  else renderForm(box, model, ctx);
  for (const s of box.querySelectorAll("details > summary")) if (open.has(s.textContent)) s.parentNode.open = true;
  $("#form-note").hidden = true;
  const wanted = forms.focus;
  forms.focus = null;
  if (wanted) focusItem(box, wanted);
  else if (focusAt) restore(box, focusAt);
}

// Where the focus is in the form: the item it is in, the label of its control, and
// which of the controls of that label it is.
function where(node, box) {
  if (!node || !box.contains(node)) return null;
  const item = node.closest("[data-item]");
  const label = labelOf(node);
  const scope = item || box;
  const same = [...scope.querySelectorAll("input, select, textarea, button")].filter((x) => labelOf(x) === label);
  return { item: item ? item.getAttribute("data-item") : null, label, n: same.indexOf(node) };
}

function restore(box, at) {
  const scope = (at.item && box.querySelector(`[data-item="${CSS.escape(at.item)}"]`)) || box;
  const same = [...scope.querySelectorAll("input, select, textarea, button")].filter((x) => labelOf(x) === at.label);
  const node = same[Math.max(0, Math.min(at.n, same.length - 1))];
  if (node) node.focus();
}

function firstControl(node) {
  return node && node.querySelector("input:not([type=file]), select, textarea, button");
}

// Where the focus goes after an item is removed: the item that takes its place (the one
// after it), else the button that adds such items.
function removedAt(key) {
  const box = $("#form");
  const node = box.querySelector(`[data-item="${CSS.escape(key)}"]`);
  const prefix = key.slice(0, key.lastIndexOf(":") + 1);
  const siblings = node ? [...node.parentNode.children].filter(
    (x) => (x.getAttribute("data-item") || "").startsWith(prefix)) : [];
  return { removal: true, prefix, index: Math.max(0, siblings.indexOf(node)), add: prefix.slice(0, -1) };
}

function focusItem(box, wanted) {
  let target = null;
  if (wanted.removal) {
    const all = [...box.querySelectorAll("[data-item]")].filter(
      (x) => x.getAttribute("data-item").startsWith(wanted.prefix)
        && !x.getAttribute("data-item").slice(wanted.prefix.length).includes(":"));
    target = all[wanted.index] ? firstControl(all[wanted.index])
      : box.querySelector(`[data-add="${CSS.escape(wanted.add)}"]`);
  } else if (wanted.key === "target:new" || wanted.key === "tool:new") {
    const kind = wanted.key.split(":")[0];
    const all = box.querySelectorAll(`[data-item^="${kind}:"]`);
    target = firstControl([...all].filter((x) => x.getAttribute("data-item").split(":").length === 2).pop());
  } else if (wanted.key.startsWith("col:")) {
    target = colInput(box, wanted.key);
  } else {
    target = firstControl(box.querySelector(`[data-item="${CSS.escape(wanted.key)}"]`));
  }
  if (target) target.focus();
}

function colInput(box, key) {
  const [, table, column] = key.split(":");
  const grid = box.querySelector(`[role="grid"][aria-label="${CSS.escape(table)}"]`);
  if (!grid) return null;
  const heads = [...grid.querySelectorAll("th span")].map((s) => s.textContent);
  const i = heads.indexOf(column);
  return grid.querySelector(`input[data-row="0"][data-col="${i}"]`);
}

function labelOf(node) {
  if (node.id) {
    const l = document.querySelector(`label[for="${CSS.escape(node.id)}"]`);
    if (l) return l.textContent;
  }
  return node.getAttribute("aria-label") || node.textContent || null;
}

async function refreshForm() {
  await state.formChain;
  const path = state.path;
  try {
    const r = await post("/api/form", { path, text: editor.state.doc.toString(), edits: [] });
    if (path !== state.path) return;
    forms.model = r.form;
    await drawForm(r.form);
  } catch (e) {
    forms.model = null;
    $("#form").replaceChildren();
    const note = $("#form-note");
    note.textContent = e.message;
    note.hidden = false;
  }
}

// ------------------------------------------------------------------ asking a name

// A small dialog asking one name (Table name, Column name); the rest of the page is
// hidden from assistive technology while it is open. The name, or null.
function ask(title, label, action) {
  const dialog = $("#ask-dialog");
  $("#ask-h").textContent = title;
  $("#ask-label").textContent = label;
  $("#ask-ok").textContent = action;
  $("#ask-input").value = "";
  $("#ask-error").textContent = "";
  const back = document.activeElement;
  const layout = $(".layout");
  layout.setAttribute("aria-hidden", "true");
  dialog.showModal();
  $("#ask-input").focus();
  return new Promise((resolve) => {
    const done = (value) => {
      dialog.removeEventListener("close", closed);
      $("#ask-form").removeEventListener("submit", submit);
      layout.removeAttribute("aria-hidden");
      if (dialog.open) dialog.close();
      if (value === null && back) back.focus();
      resolve(value);
    };
    const submit = (ev) => {
      ev.preventDefault();
      const value = $("#ask-input").value.trim();
      if (!value) {
        $("#ask-error").textContent = `Write the ${label.toLowerCase()} first.`;
        return;
      }
      done(value);
    };
    const closed = () => done(null);
    $("#ask-form").addEventListener("submit", submit);
    dialog.addEventListener("close", closed);
  });
}

// ------------------------------------------------------------------ Find models

// Ask a target's endpoint which models it serves: say so beside the target (or that it
// cannot be reached); with `offer`, list them to choose one for Model.
// What each endpoint answered, so that drawing the form again asks it nothing new.
const reached = new Map();

async function reach(name, baseUrl, keyEnv, out, offer, fresh = false) {
  if (!baseUrl) {
    out.textContent = "";
    return;
  }
  let r = !offer && !fresh ? reached.get(baseUrl) : undefined;
  if (!r) {
    out.textContent = `Asking ${baseUrl}…`;
    try {
      r = await post("/api/models", { base_url: baseUrl, api_key_env: keyEnv });
    } catch (e) {
      out.textContent = e.message;
      return;
    }
    reached.set(baseUrl, r);
  }
  if (r.error) {
    out.textContent = `Target ${name}: ${r.error.charAt(0).toUpperCase()}${r.error.slice(1)}.`;
    out.classList.add("bad");
    if (offer) offer.list.replaceChildren();
    return;
  }
  out.classList.remove("bad");
  out.textContent = `Target ${name}: the endpoint answers; it serves ${r.models.length} model(s).`;
  if (!offer) return;
  const list = el("ul", { role: "listbox", "aria-label": `Models at ${baseUrl}`, class: "model-list" });
  for (const m of r.models) {
    const pick = () => {
      offer.model.value = m;
      offer.pick(m);
      for (const o of list.children) o.setAttribute("aria-selected", o.textContent === m ? "true" : "false");
    };
    list.append(el("li", { role: "option", tabindex: "0", "aria-selected": offer.model.value === m ? "true" : "false",
      text: m, onclick: pick,
      onkeydown: (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick(); } } }));
  }
  offer.list.replaceChildren(el("p", { class: "hint", text: "Choose the model (the endpoint offers these):" }), list);
  if (!offer.model.value && r.models.length) {
    offer.model.value = r.models[0];
    offer.pick(r.models[0]);
    list.firstChild.setAttribute("aria-selected", "true");
  }
  list.firstChild.focus();
}

// ------------------------------------------------------------------ save, revert, conflicts

async function settle() {
  flushPending();
  await state.formChain;
  flushPending();
  await state.formChain;
}

// Save the open page's files (its YAML, and the table files it changed). True when all
// were saved.
async function save(overwrite = false) {
  await settle();
  const path = state.path;
  if (!path) return false;
  let all = true;
  const saved = [];
  for (const p of pageFiles()) {
    const b = buffer(p);
    if (!b || (!dirty(b) && !overwrite && p !== path)) continue;
    const text = b.text;
    try {
      const r = await post("/api/save", { path: p, text, version: b.version, overwrite });
      b.version = r.version;
      b.saved = text;
      saved.push(p);
      channel.postMessage({ path: p, version: r.version });
    } catch (e) {
      all = false;
      if (e instanceof ApiError && e.status === 409) await showConflict(p, e.message);
      else say(`Not saved: ${e.message}`);
    }
  }
  markDirty();
  if (saved.some((p) => p === SUITE || (buffer(p) && buffer(p).kind === "table"))) {
    try {
      await loadSuite(); // the suite's tools, tables and targets, as the scenarios see them
    } catch (e) {
      say(e.message);
      return false;
    }
  }
  if (all && state.path === path) {
    $("#conflict").hidden = true;
    say("Saved");
  } else if (all) {
    say(`Saved ${path}`);
  }
  return all;
}

async function showConflict(path, message) {
  const b = buffer(path);
  $("#conflict").hidden = false;
  $("#conflict").setAttribute("data-path", path);
  $("#conflict-text").textContent =
    `${message}. Your changes are not saved. What changed on disk is below: overwrite it with your text, or reload what is on disk (your changes are lost).`;
  try {
    const d = await post("/api/diff", { path, text: b.saved });
    $("#diff").replaceChildren(...d.diff.map((line) => el("span", {
      class: line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "",
      text: `${line}\n` })));
  } catch (e) {
    $("#diff").textContent = e.message;
  }
  say(`Not saved: ${message}`);
  $("#overwrite").focus();
}

async function reloadFromDisk() {
  const path = $("#conflict").getAttribute("data-path") || state.path;
  const b = await fetchBuffer(path);
  $("#conflict").hidden = true;
  if (path === state.path) setText(editor, b.text);
  state.tables.delete(path);
  markDirty();
  say("Reloaded from disk");
  if (currentTab() === "form") await refreshForm();
}

async function revert() {
  await settle();
  for (const p of pageFiles()) {
    const b = buffer(p);
    if (b) b.text = b.saved;
    state.tables.delete(p);
  }
  setText(editor, buffer().saved);
  $("#conflict").hidden = true;
  markDirty();
  say("Reverted to the saved file");
  if (currentTab() === "form") await refreshForm();
}

// Another tab saved a file, or it changed on disk: a file with no unsaved edits is
// reloaded; one with unsaved edits says so, with what changed.
const channel = new BroadcastChannel("scenarist-studio");
channel.addEventListener("message", (ev) => changedElsewhere(ev.data.path, ev.data.version, "in another tab"));

async function changedElsewhere(path, version, how) {
  const b = buffer(path);
  if (!b || b.version === version) return;
  if (!dirty(b)) {
    const fresh = await fetchBuffer(path);
    if (path === state.path) {
      setText(editor, fresh.text);
      if (currentTab() === "form") await refreshForm();
      say(`${path} was changed ${how}: reloaded`);
    }
    state.tables.delete(path);
    markDirty();
    return;
  }
  b.version = b.version || version;
  if (path === state.path || pageFiles().includes(path)) {
    await showConflict(path, `'${path}' was changed ${how} since you opened it`);
  }
}

async function checkDisk() {
  const paths = [...state.buffers.keys()];
  if (!paths.length) return;
  try {
    const r = await post("/api/versions", { paths });
    for (const [p, v] of Object.entries(r.versions)) {
      if (v && buffer(p) && buffer(p).version !== v) await changedElsewhere(p, v, "on disk");
    }
  } catch {
    // the next check will tell
  }
}

// A modal dialog: the page behind it is hidden from assistive technology (and from
// searches by role) until it closes.
function modal(dialog) {
  const layout = $(".layout");
  layout.setAttribute("aria-hidden", "true");
  dialog.addEventListener("close", () => layout.removeAttribute("aria-hidden"), { once: true });
  dialog.showModal();
}

function setupNew() {
  const dialog = $("#new-dialog");
  $("#new").addEventListener("click", () => {
    $("#new-name").value = "";
    $("#new-error").textContent = "";
    modal(dialog);
  });
  $("#new-close").addEventListener("click", () => dialog.close());
  $("#new-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const r = await post("/api/new", { name: $("#new-name").value });
      dialog.close();
      await loadSuite();
      await openFile(r.path);
      say(`Created ${r.path}`);
    } catch (e) {
      $("#new-error").textContent = e.message;
    }
  });
}

// ------------------------------------------------------------------ import

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

// Import conversations: the chosen files (gateway logs, OTLP/JSON exports) become
// scenarios in the suite's imported/ folder, as `scenarist import` makes them; they
// appear in the Scenarios list.
function setupImport() {
  const input = $("#import-files");
  $("#import").addEventListener("click", () => input.click());
  input.addEventListener("change", async () => {
    const chosen = [...(input.files || [])];
    input.value = "";
    if (!chosen.length) return;
    say(`Importing ${chosen.map((f) => f.name).join(", ")}…`);
    let r;
    try {
      const files = await Promise.all(chosen.map(async (f) => ({ name: f.name, data: base64(await f.arrayBuffer()) })));
      r = await post("/api/import", { files });
    } catch (e) {
      say(`Not imported: ${e.message}`);
      return;
    }
    await loadSuite();
    const names = r.written.map((w) => w.path);
    say(names.length ? `Imported ${names.length} scenario(s): ${names.join(", ")}`
      : "No scenario was imported: see what the import left out.");
    $("#import-problems").replaceChildren(...r.problems.map((p) => el("li", { text: p })));
    $("#import-box").hidden = r.problems.length === 0;
  });
}

// ------------------------------------------------------------------ try

function logLine(text, kind) {
  const log = $("#conversation");
  log.append(el("p", { class: `line ${kind}`, text }));
  log.scrollTop = log.scrollHeight;
}

function kindOf(line) {
  const t = line.trim();
  if (t.startsWith("agent:")) return "agent";
  if (t.startsWith("world:")) return "tool";
  if (t.startsWith("tool call:") || t.startsWith("fake result") || t.startsWith("confirmed:")
      || t.startsWith("cancelled:") || t.startsWith("waits for")) return "tool";
  return "intro";
}

function showWorld(turns) {
  if (!turns || !turns.length) return;
  const box = $("#world-turns");
  for (const t of turns) {
    const item = el("div", { class: "world-turn" }, el("h5", { text: `After turn ${t.turn}` }));
    if (!t.tables.length) item.append(el("p", { class: "hint", text: "Nothing changed in the world." }));
    for (const table of t.tables) {
      const grid = el("table", { class: "changes" },
        el("caption", { text: table.name }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Row" }), el("th", { scope: "col", text: "Column" }),
          el("th", { scope: "col", text: "Before" }), el("th", { scope: "col", text: "After" }))));
      const body = el("tbody");
      for (const row of table.rows) {
        for (const c of row.cells) {
          body.append(el("tr", { class: row.kind },
            el("th", { scope: "row", text: `${row.id}${row.kind === "changed" ? "" : ` (${row.kind})`}` }),
            el("td", { text: c.column }),
            el("td", { text: c.before === null ? "—" : c.before }),
            el("td", { class: "after", text: c.after === null ? "—" : c.after })));
        }
      }
      grid.append(body);
      item.append(grid);
    }
    box.append(item);
  }
  $("#world-changes").hidden = false;
}

function working(on) {
  $("#working").hidden = !on;
  for (const b of ["#send", "#check", "#confirm", "#cancel"]) $(b).disabled = on;
  $("#message").disabled = on;
}

const WORDS = { pass: "passes", fail: "fails", error: "could not be evaluated",
                not_evaluated: "not evaluated", not_applicable: "not applicable here", unsure: "unsure" };

async function showReply(r) {
  for (const line of r.lines) if (line.trim()) logLine(line.trim(), kindOf(line));
  showWorld(r.world);
  const held = r.waiting === "confirm";
  $("#held").hidden = !held;
  if (held) $("#question").textContent = `The agent wants to run: ${r.question.replace(/^confirm /, "")}`;
  if (r.waiting === "ended") {
    state.talk = null;
    if (r.error) logLine(r.error, "error");
    const list = $("#try-checks");
    list.replaceChildren(...r.checks.map((c) => el("li", { class: c.status },
      `${WORDS[c.status] || c.status}: ${c.label}`
      + (c.always ? " (must hold every time)" : "")
      + (c.status !== "pass" && c.reason ? ` — ${c.reason}` : ""))));
    $("#try-summary").textContent = r.summary || "Nothing was said, so there is nothing to check.";
    $("#try-result").hidden = false;
  }
  if (r.waiting === "working") return talk({ action: "poll" });
  return null;
}

async function talk(body) {
  try {
    const r = await post(`/api/try/${state.talk}`, body);
    await showReply(r);
  } catch (e) {
    state.talk = null;
    logLine(`The conversation stopped: ${e.message}`, "error");
  }
}

function afterTurn() {
  working(false);
  const held = !$("#held").hidden;
  $("#message").disabled = held;
  $("#send").disabled = held;
}

function setupTry() {
  $("#say-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("#message").value.trim();
    if (!text || !state.path || $("#send").disabled) return;
    working(true);
    try {
      if (!state.talk) {
        $("#conversation").replaceChildren();
        $("#world-turns").replaceChildren();
        $("#world-changes").hidden = true;
        $("#try-result").hidden = true;
        if (dirty(buffer())) logLine("(Try uses the saved file: save to try your changes.)", "intro");
        const r = await post("/api/try", { path: state.path, target: $("#target").value });
        state.talk = r.id;
        await showReply(r);
      }
      $("#message").value = "";
      logLine(`you: ${text}`, "you");
      await talk({ action: "say", text });
    } catch (e) {
      logLine(`Cannot try: ${e.message}`, "error");
    } finally {
      afterTurn();
      if (!$("#message").disabled) $("#message").focus();
    }
  });
  for (const [button, action] of [["#confirm", "confirm"], ["#cancel", "cancel"]]) {
    $(button).addEventListener("click", async () => {
      if (!state.talk) return;
      working(true);
      logLine(`you: ${action}`, "you");
      try { await talk({ action }); } finally {
        afterTurn();
        if ($("#held").hidden) $("#message").focus();
      }
    });
  }
  $("#check").addEventListener("click", async () => {
    if (!state.talk) {
      say("Send a message first: Check looks at the conversation.");
      return;
    }
    working(true);
    try { await talk({ action: "check" }); } finally { afterTurn(); }
  });
}

// ------------------------------------------------------------------ run

function progress(done, todo) {
  const bar = $("#progress");
  bar.hidden = false;
  bar.setAttribute("aria-valuemax", String(Math.max(todo, 1)));
  bar.setAttribute("aria-valuenow", String(done));
  bar.setAttribute("aria-valuetext", `${done} of ${todo} attempts`);
  $("#progress-fill").style.width = `${todo ? Math.round((100 * done) / todo) : 0}%`;
  $("#progress-text").textContent = `${done} of ${todo} attempts`;
}

async function run(whole) {
  const path = whole ? null : state.path;
  $("#open-report").hidden = true;
  $("#run-notes").replaceChildren();
  $("#run").disabled = true;
  state.running = true;
  showResult("");
  say(whole ? "Running the whole suite…" : `Running ${path}…`);
  progress(0, 0);
  let job;
  try {
    job = await post("/api/run", { path, target: $("#target").value });
  } catch (e) {
    say(`The run did not start: ${e.message}`);
    $("#run").disabled = false;
    state.running = false;
    return;
  }
  let todo = 0;
  const mine = () => whole || state.path === path;
  try {
    await events(`/api/run/${job.id}/events`, async (name, d) => {
      if (name === "started") { todo = d.todo; if (mine()) progress(0, todo); }
      else if (name === "attempt") { if (mine()) progress(d.done, d.todo); }
      else if (name === "note") { if (mine()) $("#run-notes").append(el("li", { text: d.message })); }
      else if (name === "finished") {
        if (path) state.results.set(path, d.verdict);
        if (mine()) {
          const bar = $("#progress");
          const max = Number(bar.getAttribute("aria-valuenow"));
          progress(max, max || todo);
          showResult(d.verdict);
          const link = $("#open-report");
          link.href = d.report;
          link.hidden = !d.report;
        } else {
          say(`The run of ${path} ended: open it to read its result.`);
        }
        await loadSuite(); // the new verdicts
      } else if (name === "failed") {
        if (path) state.results.set(path, d.message);
        if (mine()) {
          showResult(d.message);
          for (const p of d.problems) $("#run-notes").append(el("li", { text: p }));
        }
      }
    });
  } catch (e) {
    say(`The run's progress was lost: ${e.message}`);
  } finally {
    $("#run").disabled = false;
    state.running = false;
  }
}

function chooseRun() {
  const dialog = $("#run-dialog");
  const layout = $(".layout");
  layout.setAttribute("aria-hidden", "true");
  dialog.showModal();
  $("#save-and-run").focus();
  return new Promise((resolve) => {
    const done = (choice) => {
      layout.removeAttribute("aria-hidden");
      if (dialog.open) dialog.close();
      for (const [b, f] of handlers) $(b).removeEventListener("click", f);
      dialog.removeEventListener("close", closed);
      resolve(choice);
    };
    const handlers = [["#save-and-run", () => done("save")], ["#run-saved", () => done("saved")],
                      ["#run-not", () => done(null)]];
    const closed = () => done(null);
    for (const [b, f] of handlers) $(b).addEventListener("click", f);
    dialog.addEventListener("close", closed);
  });
}

function setupRun() {
  $("#run").addEventListener("click", async () => {
    const whole = $("#whole").checked;
    if (!whole && !state.path) return;
    await settle();
    const unsaved = whole ? [...state.buffers.values()].some(dirty) : pageFiles().some((p) => dirty(buffer(p)));
    if (unsaved) {
      const choice = await chooseRun();
      if (choice === null) {
        $("#run").focus();
        return;
      }
      if (choice === "save" && !(await save(false))) return;
    }
    await run(whole);
    $("#run").focus();
  });
}

// ------------------------------------------------------------------ start

async function start() {
  setupTabs();
  setupNew();
  setupImport();
  setupTry();
  setupRun();
  $("#target").addEventListener("change", resetTry);
  $("#save").addEventListener("click", () => save(false));
  $("#revert").addEventListener("click", revert);
  $("#overwrite").addEventListener("click", () => save(true));
  $("#reload").addEventListener("click", reloadFromDisk);
  $("#settings").addEventListener("click", () => openFile(SUITE));
  $("#ask-close").addEventListener("click", () => $("#ask-dialog").close());
  document.addEventListener("keydown", (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "s") { ev.preventDefault(); save(false); }
  });
  window.addEventListener("beforeunload", (ev) => {
    flushPending();
    if ([...state.buffers.values()].some(dirty)) {
      ev.preventDefault();
      ev.returnValue = "";
    }
  });
  window.addEventListener("focus", checkDisk);
  if (!(await connect())) {
    say("This page needs the address scenarist studio printed when it started (it works once); "
        + "restart scenarist studio for a new one.");
    return;
  }
  try {
    await loadSuite();
  } catch (e) {
    say(e.message);
    return;
  }
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted === SUITE || (wanted && state.suite.files.some((f) => f.path === wanted))) await openFile(wanted);
}

start();
