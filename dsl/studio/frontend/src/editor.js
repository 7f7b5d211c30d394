// The YAML editor: CodeMirror 6 with YAML highlighting, completion and hover from
// Scenarist's own vocabulary (the check registry, the scenario schema's keys, the suite's
// tools and targets, all served by the studio), and lint's problems underlined.

import { EditorState, Compartment } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, hoverTooltip,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, insertNewline } from "@codemirror/commands";
import { syntaxHighlighting, defaultHighlightStyle } from "@codemirror/language";
import { yaml } from "@codemirror/lang-yaml";
import {
  autocompletion, acceptCompletion, closeCompletion, startCompletion,
  moveCompletionSelection,
} from "@codemirror/autocomplete";
import { setDiagnostics, lintGutter } from "@codemirror/lint";
import { searchKeymap } from "@codemirror/search";
import { contextAt, wordAt } from "./yamlcontext.js";

function option(label, type, detail, info, apply) {
  return { label, type, detail, info, apply };
}

function completions(vocab, ctx) {
  const last = ctx.parents[ctx.parents.length - 1];
  const checks = () => vocab.checks.map((c) => option(
    c.name, "function", c.takes === "flag" ? "" : "takes a value", c.doc,
    c.takes === "flag" ? c.name : `${c.name}: `));
  const tools = () => vocab.tools.map((t) => option(
    t.name, "variable", t.confirm ? "asks to confirm" : t.action, t.description));
  const targets = () => vocab.targets.map((t) => option(t, "constant", "target"));
  if (ctx.kind === "item" && last === "then") return checks();
  if (ctx.kind === "item" && last === "tools") return tools();
  if (ctx.kind === "item" && last === "targets") return targets();
  if (ctx.kind === "key" && ctx.parents.length === 0) {
    return Object.entries(vocab.keys).map(([k, doc]) => option(k, "property", "", doc, `${k}: `));
  }
  if (ctx.kind === "key" && last === "given") {
    return Object.entries(vocab.given_keys).map(([k, doc]) =>
      option(k, "property", "", doc, `${k}: `));
  }
  const params = (name) => {
    const check = vocab.checks.find((c) => c.name === name);
    return check ? Object.entries(check.params).map(([k, doc]) =>
      option(k, "property", `of ${name}`, doc, `${k}: `)) : null;
  };
  if (ctx.kind === "param") return params(ctx.key);
  if (ctx.kind === "key" && ctx.parents.length >= 2 && ctx.parents[ctx.parents.length - 2] === "then") {
    return params(last);
  }
  if (ctx.kind === "value") {
    if (ctx.key === "tools" && last === "given") return tools();
    if (["calls", "not_calls", "calls_only", "calls_in_order", "asks_to_confirm",
         "confirm", "cancel", "name"].includes(ctx.key)) return tools();
    if (ctx.key === "targets" || ctx.key === "target") return targets();
    if (ctx.key === "expect") return vocab.named_checks.map((n) => option(n, "function", "named check"));
  }
  return null;
}

export function scenarioCompletion(vocab) {
  return (context) => {
    const ctx = contextAt(context.state, context.pos);
    if (!ctx.word && !context.explicit) return null;
    const all = completions(vocab(), ctx);
    if (!all) return null;
    // the names that hold what was typed (not CodeMirror's fuzzy match: `not_c` is no
    // `asks_nothing_to_confirm`)
    const options = all.filter((o) => o.label.includes(ctx.word));
    return { from: ctx.from, options, validFor: /^[\w.-]*$/ };
  };
}

export function scenarioHover(vocab) {
  return hoverTooltip((view, pos) => {
    const at = wordAt(view.state, pos);
    if (!at) return null;
    const v = vocab();
    const check = v.checks.find((c) => c.name === at.word);
    const tool = v.tools.find((t) => t.name === at.word);
    const key = v.keys[at.word] || v.given_keys[at.word];
    let title;
    let text;
    if (check) {
      title = `check ${check.name}`;
      text = check.doc + (check.examples.length ? `\nFor example: ${check.examples[0]}` : "");
    } else if (tool) {
      title = `tool ${tool.name}`;
      text = tool.description + (tool.confirm ? " (asks the person to confirm)" : "");
    } else if (v.targets.includes(at.word)) {
      title = `target ${at.word}`;
      text = "A target of the suite (scenarist.yaml).";
    } else if (key) {
      title = at.word;
      text = key;
    } else {
      return null;
    }
    return {
      pos: at.from, end: at.to, above: true,
      create() {
        const dom = document.createElement("div");
        dom.className = "hover";
        const b = document.createElement("strong");
        b.textContent = title;
        const p = document.createElement("p");
        p.textContent = text;
        dom.append(b, p);
        return { dom };
      },
    };
  });
}

// Enter starts a new line without indenting it (what is typed is what is written);
// Tab accepts a completion only while the list is open, and otherwise leaves the editor.
const keys = [
  { key: "Enter", run: insertNewline },
  { key: "Ctrl-Space", run: startCompletion },
  { key: "Tab", run: acceptCompletion },
  { key: "Escape", run: closeCompletion },
  { key: "ArrowDown", run: moveCompletionSelection(true) },
  { key: "ArrowUp", run: moveCompletionSelection(false) },
];

const label = new Compartment();

// The editor's accessible name: "Scenario YAML", or "Suite YAML" for scenarist.yaml.
export function setLabel(view, name) {
  view.dispatch({ effects: label.reconfigure(EditorView.contentAttributes.of({ "aria-label": name })) });
}

export function makeEditor(parent, { onChange, vocab }) {
  const state = EditorState.create({
    doc: "",
    extensions: [
      lineNumbers(),
      highlightActiveLineGutter(),
      history(),
      drawSelection(),
      highlightActiveLine(),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      yaml(),
      autocompletion({ override: [scenarioCompletion(vocab)], defaultKeymap: false,
                       interactionDelay: 0,
                       icons: false }),
      scenarioHover(vocab),
      lintGutter(),
      keymap.of([...keys, ...historyKeymap, ...searchKeymap, ...defaultKeymap]),
      EditorView.lineWrapping,
      label.of(EditorView.contentAttributes.of({ "aria-label": "Scenario YAML" })),
      EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u); }),
    ],
  });
  const view = new EditorView({ state, parent });
  return view;
}

export function setText(view, text) {
  const old = view.state.doc.toString();
  if (old === text) return;
  // replace only the part that differs, so the cursor and the undo history stay sensible
  let start = 0;
  while (start < old.length && start < text.length && old[start] === text[start]) start++;
  let endOld = old.length;
  let endNew = text.length;
  while (endOld > start && endNew > start && old[endOld - 1] === text[endNew - 1]) {
    endOld--;
    endNew--;
  }
  view.dispatch({ changes: { from: start, to: endOld, insert: text.slice(start, endNew) } });
}

export function posOf(doc, line, col) {
  const n = Math.min(Math.max(line, 1), doc.lines);
  const l = doc.line(n);
  return Math.min(l.from + Math.max(col - 1, 0), l.to);
}

export function showProblems(view, problems) {
  const doc = view.state.doc;
  const diagnostics = problems.map((p) => {
    const from = posOf(doc, p.line, p.col);
    const line = doc.lineAt(from);
    const rest = /^[^\s,:}\]]*/.exec(line.text.slice(from - line.from))[0];
    const to = Math.min(line.to, from + Math.max(rest.length, 1));
    return {
      from, to: to > from ? to : Math.min(from + 1, doc.length),
      severity: p.severity === "warning" ? "warning" : "error",
      message: `${p.code} ${p.message}${p.hint ? `\nhint: ${p.hint}` : ""}`,
    };
  });
  view.dispatch(setDiagnostics(view.state, diagnostics));
}

export function goTo(view, line, col) {
  const pos = posOf(view.state.doc, line, col);
  view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
  view.focus();
}
