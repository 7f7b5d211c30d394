// Where the cursor is in a scenario's YAML, read from the lines above it (indentation):
// the keys that lead to it, and whether it is a list item, a key or a value. Enough for
// completion and hover; the server's lint is the judge of what is right.

const KEY = /^(\s*)(-\s+)?([A-Za-z_][\w.-]*)\s*:(?:\s|$)/;

// The keys of the mappings that hold line `n` (1-based), outermost first.
export function parents(doc, n) {
  const out = [];
  let limit = /^\s*/.exec(doc.line(n).text)[0].length;
  for (let i = n - 1; i >= 1 && limit > 0; i--) {
    const text = doc.line(i).text;
    if (!text.trim() || text.trim().startsWith("#")) continue;
    const p = /^\s*/.exec(text)[0].length;
    if (p >= limit) continue;
    const m = KEY.exec(text);
    if (m && m[1].length + (m[2] ? m[2].length : 0) < limit) out.unshift(m[3]);
    limit = p;
  }
  return out;
}

// What the cursor at `pos` is on: {kind: "key"|"item"|"value"|"flow", parents, key, word, from}
export function contextAt(state, pos) {
  const doc = state.doc;
  const line = doc.lineAt(pos);
  const before = line.text.slice(0, pos - line.from);
  const word = /[\w.-]*$/.exec(before)[0];
  const from = pos - word.length;
  const path = parents(doc, line.number);
  let m;
  if ((m = /^(\s*)-\s+(\{\s*)?[\w.-]*$/.exec(before))) {
    return { kind: "item", parents: path, word, from };
  }
  if ((m = /^\s*(?:-\s+)?\{?\s*([\w.-]+)\s*:\s*\{(?:[^}]*,)?\s*[\w.-]*$/.exec(before))) {
    return { kind: "param", parents: path, key: m[1], word, from };
  }
  if ((m = /^(\s*)[\w.-]*$/.exec(before))) {
    return { kind: "key", parents: path, word, from, indent: m[1].length };
  }
  if ((m = /^\s*(?:-\s+)?\{?\s*([\w.-]+)\s*:\s*\[?([^\]]*,\s*)?[\w.-]*$/.exec(before))) {
    return { kind: "value", parents: path, key: m[1], word, from };
  }
  if ((m = /^\s*(?:-\s+)?([\w.-]+)\s*:\s*\[/.exec(before))) {
    return { kind: "value", parents: path, key: m[1], word, from };
  }
  return { kind: "other", parents: path, word, from };
}

// The word under `pos` and where it starts and ends.
export function wordAt(state, pos) {
  const line = state.doc.lineAt(pos);
  const i = pos - line.from;
  const left = /[\w.-]*$/.exec(line.text.slice(0, i))[0];
  const right = /^[\w.-]*/.exec(line.text.slice(i))[0];
  const word = left + right;
  return word ? { word, from: pos - left.length, to: pos + right.length, line } : null;
}
