// The studio's page: the scenarios of the suite, one open in the YAML editor or the form,
// its problems, saving, trying and running. Plain modules; the server does the work.

import { get, post, ApiError } from "./api.js";
import { makeEditor, setText, showProblems, goTo } from "./editor.js";
import { el, renderForm, flushPending, showMoment } from "./form.js";

const $ = (sel) => document.querySelector(sel);
const LINT_DELAY_MS = 300;

const state = {
  suite: null,
  path: null, // the open file, relative to the suite
  buffers: new Map(), // path -> {text, version, saved}: unsaved text survives a switch
  lintTimer: null,
  lintSeq: 0,
  formChain: Promise.resolve(),
  talk: null, // the conversation's id
  events: null, // the run's EventSource
};

function say(text) {
  $("#status").textContent = text;
}

// ------------------------------------------------------------------ the editor

const editor = makeEditor($("#editor"), {
  vocab: () => state.suite,
  onChange: () => {
    const b = state.buffers.get(state.path);
    if (!b) return;
    b.text = editor.state.doc.toString();
    markDirty();
    scheduleLint();
  },
});

function markDirty() {
  const b = state.buffers.get(state.path);
  const dirty = b && b.text !== b.saved;
  $("#dirty").hidden = !dirty;
}

function scheduleLint() {
  clearTimeout(state.lintTimer);
  state.lintTimer = setTimeout(lintNow, LINT_DELAY_MS);
}

async function lintNow() {
  if (!state.path) return;
  const seq = ++state.lintSeq;
  const text = editor.state.doc.toString();
  try {
    const r = await post("/api/lint", { path: state.path, text });
    if (seq !== state.lintSeq || text !== editor.state.doc.toString()) return;
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
  const other = $("#elsewhere");
  other.replaceChildren(...r.elsewhere.map((t) => el("li", { text: t })));
  $("#elsewhere-box").hidden = r.elsewhere.length === 0;
}

// ------------------------------------------------------------------ the scenarios

async function loadSuite() {
  state.suite = await get("/api/suite");
  $("#suite-name").textContent = state.suite.name;
  drawNav();
  const select = $("#target");
  select.replaceChildren(...state.suite.targets.map((t) => el("option", { value: t, text: t })));
  if (state.suite.default_target) select.value = state.suite.default_target;
}

function drawNav() {
  const list = $("#files");
  list.replaceChildren(...state.suite.files.map((f) => el("li", {},
    el("a", { href: `#${encodeURIComponent(f.path)}`, "aria-current": f.path === state.path ? "page" : undefined,
              onclick: (ev) => { ev.preventDefault(); openFile(f.path); } }, f.path),
    f.verdict ? el("span", { class: `verdict v-${f.verdict.replace(/\s/g, "-")}`,
                             text: ` last run: ${f.verdict}` }) : null)));
  $("#no-files").hidden = state.suite.files.length > 0;
}

// A conversation belongs to one scenario and one target: another one starts afresh.
function resetTry() {
  state.talk = null;
  $("#conversation").replaceChildren();
  $("#try-result").hidden = true;
  $("#held").hidden = true;
  $("#message").disabled = false;
  $("#send").disabled = false;
}

async function openFile(path) {
  if (path !== state.path) {
    resetTry();
    $("#open-report").hidden = true;
    $("#run-notes").replaceChildren();
  }
  if (!state.buffers.has(path)) {
    try {
      const r = await get(`/api/file?path=${encodeURIComponent(path)}`);
      state.buffers.set(path, { text: r.text, version: r.version, saved: r.text });
    } catch (e) {
      say(e.message);
      return;
    }
  }
  state.path = path;
  history.replaceState(null, "", `#${encodeURIComponent(path)}`);
  $("#file-name").textContent = path;
  $("#workspace").hidden = false;
  $("#welcome").hidden = true;
  const b = state.buffers.get(path);
  const same = editor.state.doc.toString() === b.text;
  setText(editor, b.text);
  if (same) scheduleLint();
  markDirty();
  drawNav();
  if (currentTab() === "form") await refreshForm();
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
// edit is waiting, so that what the person does meanwhile is never drawn over; adding or
// removing a check shows at once.
const forms = { queued: 0, redraw: false, model: null };

function formEdit(op, structural = false) {
  forms.queued++;
  if (structural) forms.redraw = true;
  if (forms.model && (op.op === "add_check" || op.op === "remove_check")) {
    const model = structuredClone(forms.model);
    const list = op.list === null ? model.checks : model.when.turns[op.list].checks;
    if (op.op === "add_check") {
      const takes = (state.suite.checks.find((c) => c.name === op.check) || {}).takes;
      list.push({ check: op.check, takes: takes || "other", value: takes === "text" ? "" : null,
                  yaml: "", always: false, name: "" });
    } else {
      list.splice(op.index, 1);
    }
    forms.model = model;
    drawForm(model);
  }
  state.formChain = state.formChain.then(async () => {
    const path = state.path;
    try {
      const r = await post("/api/form", { path, text: editor.state.doc.toString(), edits: [op] });
      if (path !== state.path) return;
      setText(editor, r.text);
      if (r.problems) showAllProblems(r);
      forms.model = r.form;
      if (op.op === "moment") showMoment(r.form);
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
        if (forms.model) drawForm(forms.model);
      }
    }
  });
  return state.formChain;
}

function drawForm(model) {
  const box = $("#form");
  const focused = document.activeElement && box.contains(document.activeElement)
    ? labelOf(document.activeElement) : null;
  renderForm(box, model, { vocab: state.suite, edit: formEdit });
  $("#form-note").hidden = true;
  if (focused) {
    const again = [...box.querySelectorAll("input, select, textarea, button")]
      .find((x) => labelOf(x) === focused);
    if (again) again.focus();
  }
}

function labelOf(node) {
  if (node.id) {
    const l = document.querySelector(`label[for="${node.id}"]`);
    if (l) return `${l.textContent}#${[...document.querySelectorAll(`label`)].filter((x) => x.textContent === l.textContent).indexOf(l)}`;
  }
  return node.textContent || null;
}

async function refreshForm() {
  await state.formChain;
  try {
    const r = await post("/api/form", { path: state.path, text: editor.state.doc.toString(), edits: [] });
    forms.model = r.form;
    drawForm(r.form);
  } catch (e) {
    forms.model = null;
    $("#form").replaceChildren();
    const note = $("#form-note");
    note.textContent = e.message;
    note.hidden = false;
  }
}

// ------------------------------------------------------------------ save and new

async function save(overwrite = false) {
  flushPending();
  await state.formChain;
  const path = state.path;
  const b = state.buffers.get(path);
  if (!b) return;
  const text = editor.state.doc.toString();
  try {
    const r = await post("/api/save", { path, text, version: b.version, overwrite });
    b.version = r.version;
    b.saved = text;
    $("#conflict").hidden = true;
    markDirty();
    say("Saved");
  } catch (e) {
    if (e instanceof ApiError && e.status === 409) {
      $("#conflict-text").textContent =
        `${e.message}. Overwrite it with your text, or reload what is on disk (your changes are lost)?`;
      $("#conflict").hidden = false;
      say(`Not saved: ${e.message}`);
    } else {
      say(`Not saved: ${e.message}`);
    }
  }
}

async function reloadFromDisk() {
  const r = await get(`/api/file?path=${encodeURIComponent(state.path)}`);
  state.buffers.set(state.path, { text: r.text, version: r.version, saved: r.text });
  setText(editor, r.text);
  $("#conflict").hidden = true;
  markDirty();
  say("Reloaded from disk");
  if (currentTab() === "form") await refreshForm();
}

function setupNew() {
  const dialog = $("#new-dialog");
  $("#new").addEventListener("click", () => {
    $("#new-name").value = "";
    $("#new-error").textContent = "";
    dialog.showModal();
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

// ------------------------------------------------------------------ try

function logLine(text, kind) {
  const log = $("#conversation");
  log.append(el("p", { class: `line ${kind}`, text }));
  log.scrollTop = log.scrollHeight;
}

function kindOf(line) {
  const t = line.trim();
  if (t.startsWith("agent:")) return "agent";
  if (t.startsWith("tool call:") || t.startsWith("fake result") || t.startsWith("confirmed:")
      || t.startsWith("cancelled:") || t.startsWith("waits for")) return "tool";
  return "intro";
}

function showReply(r) {
  for (const line of r.lines) if (line.trim()) logLine(line.trim(), kindOf(line));
  const held = r.waiting === "confirm";
  $("#held").hidden = !held;
  if (held) $("#question").textContent = `The agent wants to run: ${r.question.replace(/^confirm /, "")}`;
  $("#message").disabled = held;
  $("#send").disabled = held;
  if (r.waiting === "ended") {
    state.talk = null;
    const list = $("#try-checks");
    list.replaceChildren(...r.checks.map((c) => el("li", { class: c.status },
      `${c.status === "pass" ? "passes" : c.status === "fail" ? "fails" : c.status}: ${c.label}`
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
    say(e.message);
  }
}

function busy(on) {
  for (const b of ["#send", "#check", "#confirm", "#cancel"]) $(b).disabled = on;
}

function setupTry() {
  $("#say-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("#message").value.trim();
    if (!text || !state.path) return;
    busy(true);
    try {
      if (!state.talk) {
        $("#conversation").replaceChildren();
        $("#try-result").hidden = true;
        const b = state.buffers.get(state.path);
        if (b && b.text !== b.saved) logLine("(Try uses the saved file: save to try your changes.)", "intro");
        const r = await post("/api/try", { path: state.path, target: $("#target").value });
        state.talk = r.id;
        await showReply(r);
      }
      $("#message").value = "";
      logLine(`you: ${text}`, "you");
      await talk({ action: "say", text });
    } catch (e) {
      logLine(e.message, "intro");
      say(`Cannot try: ${e.message.split("\n")[0]}`);
    } finally {
      busy(false);
      if (!$("#held").hidden) { $("#message").disabled = true; $("#send").disabled = true; }
    }
  });
  for (const [button, action] of [["#confirm", "confirm"], ["#cancel", "cancel"]]) {
    $(button).addEventListener("click", async () => {
      if (!state.talk) return;
      busy(true);
      logLine(`you: ${action}`, "you");
      try { await talk({ action }); } finally {
        busy(false);
        if (!$("#held").hidden) { $("#message").disabled = true; $("#send").disabled = true; }
        else $("#message").focus();
      }
    });
  }
  $("#check").addEventListener("click", async () => {
    if (!state.talk) {
      say("Send a message first: Check looks at the conversation.");
      return;
    }
    busy(true);
    try { await talk({ action: "check" }); } finally { busy(false); }
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

function setupRun() {
  $("#run").addEventListener("click", async () => {
    const whole = $("#whole").checked;
    if (!whole && !state.path) return;
    $("#open-report").hidden = true;
    $("#run-notes").replaceChildren();
    $("#run").disabled = true;
    say(whole ? "Running the whole suite…" : `Running ${state.path}…`);
    progress(0, 0);
    let job;
    try {
      job = await post("/api/run", { path: whole ? null : state.path, target: $("#target").value });
    } catch (e) {
      say(`The run did not start: ${e.message}`);
      $("#run").disabled = false;
      return;
    }
    const events = new EventSource(`/api/run/${job.id}/events`);
    state.events = events;
    let todo = 0;
    events.addEventListener("started", (ev) => { todo = JSON.parse(ev.data).todo; progress(0, todo); });
    events.addEventListener("attempt", (ev) => {
      const d = JSON.parse(ev.data);
      progress(d.done, d.todo);
    });
    events.addEventListener("note", (ev) => {
      $("#run-notes").append(el("li", { text: JSON.parse(ev.data).message }));
    });
    events.addEventListener("finished", async (ev) => {
      events.close();
      const d = JSON.parse(ev.data);
      const bar = $("#progress");
      const max = Number(bar.getAttribute("aria-valuenow"));
      progress(max, max || todo);
      say(d.verdict);
      const link = $("#open-report");
      link.href = d.report;
      link.hidden = !d.report;
      $("#run").disabled = false;
      await loadSuite(); // the new verdicts
    });
    events.addEventListener("failed", (ev) => {
      events.close();
      const d = JSON.parse(ev.data);
      say(d.message);
      for (const p of d.problems) $("#run-notes").append(el("li", { text: p }));
      $("#run").disabled = false;
    });
  });
}

// ------------------------------------------------------------------ start

async function start() {
  if (location.search.includes("token=")) history.replaceState(null, "", "/" + location.hash);
  setupTabs();
  setupNew();
  setupTry();
  setupRun();
  $("#target").addEventListener("change", resetTry);
  $("#save").addEventListener("click", () => save(false));
  $("#overwrite").addEventListener("click", () => save(true));
  $("#reload").addEventListener("click", reloadFromDisk);
  document.addEventListener("keydown", (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "s") { ev.preventDefault(); save(false); }
  });
  try {
    await loadSuite();
  } catch (e) {
    say(e.message);
    return;
  }
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted && state.suite.files.some((f) => f.path === wanted)) await openFile(wanted);
}

start();
