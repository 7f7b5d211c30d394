/* Scenarist report: sorting and filtering the scenario table, and drawing attempts and
   their transcripts when they are opened.

   Everything from a run is untrusted text. This script never parses data as HTML: it
   builds elements with createElement and fills them with textContent / text nodes only
   (no innerHTML, no insertAdjacentHTML, no document.write). The one URL it sets is an
   attached image's data: URL, which dsl/report.py built from the file the run folder keeps
   and which is checked here again to be a base64 PNG, JPEG or WebP (IMAGE_URL); the page's
   Content-Security-Policy allows no other image source. */
(function () {
  "use strict";

  var TEXT_LIMIT = 4000;       // characters shown before "Show all"
  var SUMMARY_LIMIT = 160;     // characters of an attempt's reason in its summary line
  var PAGE = 100;              // attempts drawn at once in one scenario
  var rows = new Map();         // row index -> its parsed blob

  // The attempts of one table row, parsed the first time they are needed.
  function rowData(row) {
    if (!rows.has(row)) {
      var blob = document.getElementById("attempts-" + row);
      rows.set(row, blob ? JSON.parse(blob.textContent) : { strings: [], attempts: [] });
    }
    return rows.get(row);
  }

  // A text field of a blob: a string, or the index of a string in its string table.
  function str(v, strings) {
    if (typeof v === "number") return strings[v];
    return v == null ? "" : String(v);
  }

  function asText(v) {
    return v == null ? "" : String(v);
  }

  // Where an event holds text (see the layout in dsl/report.py); the rest are flags.
  var TEXT_AT = { s: [1, 2], u: [1], a: [1], A: [1], t: [1, 2], c: [1, 2, 3, 5], e: [1], o: [1, 2], T: [3], U: [1], I: [1, 4], F: [1, 3] };
  var IMAGE_URL = /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+\/]+={0,2}$/;

  // What the person did with a held call in a later turn (a "c" event's decision).
  var DECISIONS = {
    confirmed: ["pass", "held for confirmation: the person confirmed it, so it ran"],
    cancelled: ["plain", "held for confirmation: the person cancelled it, so it did not run"],
    dismissed: ["plain", "held for confirmation: the person wrote something else instead, so it did not run"]
  };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function badge(kind, text, title) {
    var b = el("span", "badge b-" + kind, text);
    if (title) b.title = title;
    return b;
  }

  // ---- text: control characters visible, long text cut with a "Show all" button ----------

  // C0 and C1 controls but tab and newline (and CR before LF), DEL, bidi overrides, and
  // half a surrogate pair (a model can send one; it would show as a mere "\ufffd").
  var CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\r(?!\n)|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

  // A control character as an escape that any font can show: \x1b, \u202e.
  function symbol(ch) {
    var c = ch.charCodeAt(0);
    var hex = c.toString(16);
    return c < 0x100 ? "\\x" + hex.padStart(2, "0") : "\\u" + hex.padStart(4, "0");
  }

  function appendText(parent, text) {
    CONTROL.lastIndex = 0;
    var last = 0;
    var m;
    while ((m = CONTROL.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      var s = el("span", "ctl", symbol(m[0]));
      s.title = "control character U+" + m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
      parent.appendChild(s);
      last = m.index + m[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function cut(text, limit) {
    var n = limit;
    var c = text.charCodeAt(n - 1);
    if (c >= 0xd800 && c <= 0xdbff) n -= 1;  // do not split a surrogate pair
    return text.slice(0, n);
  }

  // A block of text (pre-wrapped), cut at TEXT_LIMIT characters with a button to show all.
  function textBlock(tag, cls, text) {
    var box = el(tag, cls);
    if (text.length <= TEXT_LIMIT) {
      appendText(box, text);
      return box;
    }
    appendText(box, cut(text, TEXT_LIMIT));
    var more = el("button", "more", "Show all " + text.length.toLocaleString("en") + " characters");
    more.type = "button";
    more.addEventListener("click", function () {
      box.textContent = "";
      appendText(box, text);
    });
    box.appendChild(document.createTextNode("\u2026 "));
    box.appendChild(more);
    return box;
  }

  function oneLine(text, limit) {
    var t = text.replace(/\s+/g, " ").trim();
    return t.length > limit ? cut(t, limit) + "\u2026" : t;
  }

  // JSON laid out on lines ({ json: true }), or the text as it is ({ json: false }).
  // Empty arguments are the empty object, as the agent loop reads them.
  function pretty(raw) {
    var t = raw.trim();
    if (t === "") return { text: "{}", json: true };
    if (t[0] !== "{" && t[0] !== "[") return { text: raw, json: false };
    try {
      return { text: JSON.stringify(JSON.parse(t), null, 2), json: true };
    } catch (e) {
      return { text: raw, json: false };
    }
  }

  // ---- transcripts ------------------------------------------------------------------------

  function bubble(cls, who) {
    var box = el("div", "msg " + cls);
    var w = el("span", "who");
    if (typeof who === "string") w.textContent = who; else w.appendChild(who);
    box.appendChild(w);
    return box;
  }

  // A blob's arrays as objects, with every text resolved (layout: dsl/report.py).
  function decodeAttempt(a, strings, files) {
    var e = a[8];
    return {
      run: a[0], status: String(a[1]), reason: str(a[2], strings), at: str(a[3], strings),
      ms: a[4], steps: a[5], tokens: a[6], retries: a[7],
      error: e ? { kind: str(e[0], strings), message: str(e[1], strings), status: e[2],
                   explanation: str(e[3], strings) } : null,
      failure: a[11] ? { kind: str(a[11][0], strings), explanation: str(a[11][1], strings) } : null,
      events: (a[9] || []).map(function (ev) {
        var at = TEXT_AT[ev[0]] || [];
        var out = ev.map(function (v, i) { return at.indexOf(i) >= 0 ? str(v, strings) : v; });
        // an attachment: what the blob keeps of the file (by its hash), at the end
        if (ev[0] === "I") out[5] = files ? files[ev[3]] : undefined;
        if (ev[0] === "F") out[4] = files ? files[ev[2]] : undefined;
        return out;
      }),
      checks: (a[10] || []).map(function (c) { return decodeCheck(c, strings); }),
      stderr: a[13] == null ? "" : str(a[13], strings),
      world: (a[12] || []).map(function (w) {
        return { table: str(w[0], strings), id: str(w[1], strings), kind: String(w[2]),
                 cells: (w[3] || []).map(function (c) {
                   return [str(c[0], strings), c[1] == null ? null : str(c[1], strings),
                           c[2] == null ? null : str(c[2], strings)];
                 }) };
      })
    };
  }

  // What the attempt changed in its world: per table, a row per changed row with each
  // column's value before and after (changed cells marked). Text only, never markup.
  function drawWorld(changes) {
    var box = el("section", "world-changes");
    box.appendChild(el("h5", "turn-head", "What the agent changed in the world"));
    var tables = [];
    var byTable = {};
    changes.forEach(function (c) {
      if (!byTable[c.table]) { byTable[c.table] = []; tables.push(c.table); }
      byTable[c.table].push(c);
    });
    tables.forEach(function (name) {
      var rows = byTable[name];
      var cols = [];
      rows.forEach(function (r) { r.cells.forEach(function (c) { if (c[0] !== "id" && cols.indexOf(c[0]) < 0) cols.push(c[0]); }); });
      var t = el("table", "world-table");
      t.appendChild(el("caption", null, name));
      var head = t.appendChild(el("thead")).appendChild(el("tr"));
      head.appendChild(el("th", null, "id"));
      head.appendChild(el("th", null, ""));
      cols.forEach(function (c) { head.appendChild(el("th", null, c)); });
      var body = t.appendChild(el("tbody"));
      rows.forEach(function (r) {
        var tr = body.appendChild(el("tr", "w-" + r.kind));
        tr.appendChild(el("td", null, r.id));
        tr.appendChild(el("td", "muted", r.kind === "set" ? "changed" : r.kind));
        cols.forEach(function (c) {
          var cell = r.cells.filter(function (x) { return x[0] === c; })[0];
          var td = tr.appendChild(el("td"));
          if (!cell) return;
          td.className = "w-changed";
          if (cell[1] != null) td.appendChild(el("del", null, cell[1]));
          if (cell[1] != null && cell[2] != null) td.appendChild(document.createTextNode(" → "));
          if (cell[2] != null) td.appendChild(el("ins", null, cell[2]));
        });
      });
      box.appendChild(t);
    });
    return box;
  }

  function decodeCheck(c, strings) {
    var e = c[4];
    return {
      label: str(c[0], strings), status: String(c[1]), reason: str(c[2], strings), score: c[3],
      turn: typeof c[5] === "number" ? c[5] : null,
      always: c[6] === 1,
      evidence: e ? {
        reason: str(e[0], strings), rawReply: str(e[1], strings), prompt: str(e[2], strings),
        confidence: e[3]
      } : null
    };
  }

  function drawEvent(ev) {
    var box;
    switch (ev[0]) {
      case "s": {  // system prompt, and the moment it told the model
        var text = asText(ev[1]);
        var frag = document.createDocumentFragment();
        var moment = asText(ev[2]);
        if (moment) {
          var m = el("div", "moment");
          m.appendChild(document.createTextNode("The moment the model saw: "));
          var strong = el("strong");
          appendText(strong, moment);
          m.appendChild(strong);
          frag.appendChild(m);
        }
        var d = el("details", "sys");
        d.appendChild(el("summary", null, "System prompt (" + text.length.toLocaleString("en") + " characters)"));
        d.appendChild(textBlock("div", "text", text));
        frag.appendChild(d);
        return frag;
      }
      case "u":
        box = bubble("m-user", "User");
        box.appendChild(textBlock("div", "text", asText(ev[1])));
        return box;
      case "a":
        box = bubble("m-assistant", "Assistant");
        box.appendChild(textBlock("div", "text", asText(ev[1])));
        return box;
      case "A": {
        var answer = asText(ev[1]);
        box = bubble("m-answer", answer ? "Answer" : "Answer (empty)");
        if (answer) box.appendChild(textBlock("div", "text", answer));
        return box;
      }
      case "c": {  // a tool call: name, raw arguments, action, pending, error
        var pending = ev[4] === 1;
        box = bubble("m-call" + (pending ? " pending" : ""), "Tool call");
        var head = el("div");
        var name = el("code");
        appendText(name, asText(ev[1]));
        head.appendChild(name);
        var action = asText(ev[3]);
        if (action) { head.appendChild(document.createTextNode(" ")); head.appendChild(badge("plain", action)); }
        if (pending) {
          head.appendChild(document.createTextNode(" "));
          head.appendChild(badge("pending", "pending confirmation: not run", "The tool needs the person's confirmation, so the call was held and the attempt ended here."));
        }
        var error = asText(ev[5]);
        if (error) { head.appendChild(document.createTextNode(" ")); head.appendChild(badge("fail", error)); }
        var decided = DECISIONS[asText(ev[6])];
        if (decided) { head.appendChild(document.createTextNode(" ")); head.appendChild(badge(decided[0], decided[1])); }
        box.appendChild(head);
        var args = pretty(asText(ev[2]));
        if (!args.json) box.appendChild(badge("fail", "the arguments are not valid JSON"));
        box.appendChild(textBlock("pre", "args", args.text));
        return box;
      }
      case "t": {  // a tool result
        var label = el("span");
        label.appendChild(document.createTextNode("Tool result"));
        var tn = asText(ev[1]);
        if (tn) label.appendChild(document.createTextNode(" \u00b7 " + tn));
        box = bubble("m-tool", label);
        var result = asText(ev[2]);
        var out = result.trim() ? pretty(result) : { text: "(empty)", json: false };
        box.appendChild(out.json ? textBlock("pre", "args", out.text) : textBlock("div", "text", out.text));
        return box;
      }
      case "I": {  // an attached image: a thumbnail, full size on click
        box = el("figure", "attached");
        var url = asText(ev[5]);
        if (IMAGE_URL.test(url)) {
          var img = el("img", "thumb");
          img.alt = asText(ev[1]);
          img.src = url;
          img.title = "Click to see it full size";
          img.addEventListener("click", function () { img.classList.toggle("full"); });
          box.appendChild(img);
        } else {
          box.appendChild(el("div", "muted", "(the image is not in the run folder)"));
        }
        var cap = el("figcaption");
        appendText(cap, "Attached image: " + asText(ev[1]) + " \u00b7 " + asText(ev[2]) + " \u00b7 " + asText(ev[4]));
        box.appendChild(cap);
        return box;
      }
      case "F": {  // an attached text file, collapsed
        var fd = el("details", "attached");
        var ftext = ev[4];
        var sum = el("summary");
        appendText(sum, "Attached file: " + asText(ev[1]) + " \u00b7 " + asText(ev[3]) +
          (typeof ftext === "string" ? " (" + ftext.length.toLocaleString("en") + " characters)" : ""));
        fd.appendChild(sum);
        fd.appendChild(typeof ftext === "string" ? textBlock("div", "text", ftext)
          : el("div", "muted", "(the file is not in the run folder)"));
        return fd;
      }
      case "U":  // what the simulated user wrote that the agent was not sent
        box = bubble("m-user simulated", ev[2] === 1 ? "The simulated user's last message (it ended the conversation; not sent to the agent)"
          : "The simulated user wrote (its decision on the waiting calls; the words are not sent to the agent)");
        box.appendChild(textBlock("div", "text", asText(ev[1])));
        return box;
      case "e":
        box = el("p", "end muted");
        appendText(box, asText(ev[1]));
        return box;
      default:
        box = bubble("m-other", asText(ev[1]) || "message");
        box.appendChild(textBlock("div", "text", asText(ev[2])));
        return box;
    }
  }

  function drawCheck(c) {
    var li = el("li");
    li.appendChild(c.status === "not_evaluated"
      ? badge("not-evaluated", "not evaluated", "neither passed nor failed: the reason says why")
      : badge(c.status === "error" ? "error-check" : c.status, c.status));
    li.appendChild(document.createTextNode(" "));
    var label = el("code");
    appendText(label, c.label);
    li.appendChild(label);
    if (c.always) {
      li.appendChild(document.createTextNode(" "));
      li.appendChild(badge("always", "always", "always: true \u2014 one failed attempt fails the scenario"));
    }
    if (typeof c.score === "number" && c.score !== 0 && c.score !== 1) {
      li.appendChild(el("span", "muted", " score " + c.score.toFixed(2)));
    }
    var reason = c.reason;
    if (reason) {
      li.appendChild(document.createTextNode(" \u2014 "));
      var r = el("span", "reason text");
      appendText(r, reason);
      li.appendChild(r);
    }
    var ev = c.evidence;
    if (ev) {
      var box = el("div", "evidence");
      var why = ev.reason;
      if (why || typeof ev.confidence === "number") {
        var p = el("div");
        p.appendChild(el("strong", null, "Judge: "));
        if (why) { var w = el("span", "text"); appendText(w, why); p.appendChild(w); }
        if (typeof ev.confidence === "number") p.appendChild(el("span", "muted", " (confidence " + ev.confidence.toFixed(2) + ")"));
        box.appendChild(p);
      }
      [["rawReply", "The judge's raw reply"], ["prompt", "The judge's prompt"]].forEach(function (pair) {
        var t = ev[pair[0]];
        if (!t) return;
        var d = el("details");
        d.appendChild(el("summary", null, pair[1]));
        d.appendChild(textBlock("pre", "args", t));
        box.appendChild(d);
      });
      li.appendChild(box);
    }
    return li;
  }

  function stats(a) {
    var parts = [];
    if (a.at) parts.push("started " + a.at);
    if (typeof a.ms === "number") parts.push(Math.round(a.ms).toLocaleString("en") + " ms");
    if (typeof a.steps === "number") parts.push(a.steps + " model call" + (a.steps === 1 ? "" : "s"));
    if (a.tokens) parts.push(a.tokens.toLocaleString("en") + " tokens");
    if (a.retries) parts.push(a.retries + " retr" + (a.retries === 1 ? "y" : "ies"));
    return parts.join(" \u00b7 ");
  }

  // What the server said, in its own words, one click away; what Scenarist itself saw,
  // for the kinds no server put in words (dsl/errors.py SERVER_WORDS)
  var SERVER_WORDS = {"status": 1, "model_output": 1, "unsupported_tools": 1};
  function said(text, kind) {
    var d = el("details", "said");
    d.appendChild(el("summary", null, SERVER_WORDS[kind] === 1 ? "What the server said" : "What happened"));
    d.appendChild(textBlock("div", "text", text));
    return d;
  }

  // The heading of a conversation's turn: what the person did.
  function turnHead(ev) {
    var kind = asText(ev[2]);
    var who = ev[4] === 1 ? "the simulated user" : "the person";
    var what = asText(ev[3]) === "all" ? "every pending call" : asText(ev[3]);
    var words = kind === "say" ? who + " writes" :
      ev[4] === 1 ? who + " answers " + kind + " to " + what :
      who + " presses " + kind + " on " + what;
    var h = el("h5", "turn-head");
    h.appendChild(document.createTextNode("Turn " + ev[1] + " \u00b7 "));
    appendText(h, words);
    return h;
  }

  function checkList(checks, title) {
    var frag = document.createDocumentFragment();
    if (!checks.length) return frag;
    frag.appendChild(el("h5", null, title));
    var ul = el("ul", "check-list");
    checks.forEach(function (c) { ul.appendChild(drawCheck(c)); });
    frag.appendChild(ul);
    return frag;
  }

  function drawTranscript(a) {
    var box = el("div", "transcript");
    if (a.error) {
      var e = bubble("m-error", "Endpoint error");
      var head = el("div");
      head.appendChild(el("strong", null, a.error.kind));
      if (a.error.status != null) head.appendChild(document.createTextNode(" (HTTP " + a.error.status + ")"));
      e.appendChild(head);
      if (a.error.explanation) {
        e.appendChild(el("div", "explain", a.error.explanation));
        e.appendChild(said(a.error.message, a.error.kind));
      } else {  // a report data blob from before the explanations
        e.appendChild(textBlock("div", "text", a.error.message));
        e.appendChild(el("div", "muted", "An endpoint error says nothing about the model: this attempt counts neither as a pass nor as a failure."));
      }
      box.appendChild(e);
    }
    if (a.failure) {  // failed before its checks could decide: model_output, max_steps
      var f = bubble("m-error", "Failed attempt");
      f.appendChild(el("div", null, null)).appendChild(el("strong", null, a.failure.kind));
      f.appendChild(el("div", "explain", a.failure.explanation));
      f.appendChild(said(a.reason, a.failure.kind));
      box.appendChild(f);
    }
    var events = a.events || [];
    var checks = a.checks || [];
    if (!events.length) box.appendChild(el("p", "muted", "No transcript was recorded."));
    // A conversation: each turn in a section of its own, with its own checks at its end;
    // the given history in a section apart (the agent did not write it).
    var into = box;
    var turn = null;
    var turns = false;
    var drawn = {};
    function closeTurn() {
      if (turn === null) return;
      var n = turn;
      drawn[n] = true;
      into.appendChild(checkList(checks.filter(function (c) { return c.turn === n; }), "Checks of turn " + n));
      turn = null;
    }
    for (var i = 0; i < events.length; i++) {
      var ev = events[i];
      if (ev[0] === "H") {
        into = el("section", "history");
        into.appendChild(el("h5", "turn-head", "Earlier in the conversation (given.history: written by the scenario, not by the agent)"));
        box.appendChild(into);
      } else if (ev[0] === "h") {
        into = box;
      } else if (ev[0] === "T") {
        closeTurn();
        turns = true;
        turn = ev[1];
        into = el("section", "turn");
        into.appendChild(turnHead(ev));
        box.appendChild(into);
      } else {
        into.appendChild(drawEvent(ev));
      }
    }
    closeTurn();
    if (a.world && a.world.length) box.appendChild(drawWorld(a.world));
    if (a.stderr) {
      // an agent program's standard error (kind: command): its end, bounded and redacted
      var errBox = el("details", "stderr");
      errBox.appendChild(el("summary", null, "What the agent program wrote on its standard error"));
      errBox.appendChild(el("pre", null, a.stderr));
      box.appendChild(errBox);
    }
    box.appendChild(el("p", "stats", stats(a)));
    var whole = checks.filter(function (c) { return c.turn === null; });
    var unreached = checks.filter(function (c) { return c.turn !== null && !drawn[c.turn]; });
    box.appendChild(checkList(unreached, "Checks of turns the conversation never reached"));
    box.appendChild(checkList(turns ? whole : checks, turns ? "Checks of the whole conversation" : "Checks"));
    return box;
  }

  // ---- attempts of one scenario -----------------------------------------------------------

  // An attempt's id, its anchor in the report (report.html#ID): SCENARIO@TARGET/RUN — the
  // scenario's id, its target's name and the run index, as results.jsonl keeps them (a
  // scenario's id never holds "@", a target's name never "/").
  function attemptId(body, run) {
    return body.getAttribute("data-scenario") + "@" + body.getAttribute("data-target") + "/" + run;
  }

  function attemptSummary(a, id) {
    var s = el("summary");
    s.appendChild(document.createTextNode("Run " + a.run + " "));
    s.appendChild(badge(a.status, a.status));
    s.appendChild(document.createTextNode(" "));
    var why = el("span", "why");
    appendText(why, oneLine(a.reason, SUMMARY_LIMIT));
    s.appendChild(why);
    // its link: the address of this attempt (report.html#ID) in the address bar, and copied
    // when the browser allows it (the "#" is drawn by the style sheet, so the summary's text
    // stays the run's)
    var link = el("button", "permalink");
    link.type = "button";
    link.setAttribute("data-id", id);
    link.title = "A link to this attempt (report.html#" + id + "): share this conversation";
    link.setAttribute("aria-label", "Link to run " + a.run);
    s.appendChild(link);
    return s;
  }

  function drawAttempts(container, from) {
    var data = rowData(Number(container.getAttribute("data-row")));
    var attempts = data.attempts.map(function (a) { return decodeAttempt(a, data.strings, data.files); });
    var onlyBad = container.parentNode.querySelector("input.only-bad");
    var body = container.closest("tbody");
    var old = container.querySelector("button.more-attempts");
    if (old) old.remove();
    var to = Math.min(attempts.length, from + PAGE);
    for (var i = from; i < to; i++) {
      var a = attempts[i];
      var d = el("details", "attempt");
      d.setAttribute("data-i", String(i));
      d.setAttribute("data-status", a.status);
      d.id = attemptId(body, a.run);
      if (onlyBad && onlyBad.checked && a.status === "pass") d.hidden = true;
      d.appendChild(attemptSummary(a, d.id));
      container.appendChild(d);
    }
    if (!attempts.length) container.appendChild(el("p", "muted", "No attempt was recorded."));
    if (data.omitted && to >= attempts.length) {
      container.appendChild(el("p", "muted omitted", data.omitted + " more attempts are not in this report (a report keeps at most 20,000 transcripts, those that did not pass first); every attempt is in results.jsonl."));
    }
    if (to < attempts.length) {
      var more = el("button", "more more-attempts", "Show " + Math.min(PAGE, attempts.length - to) + " more attempts (" + (attempts.length - to) + " left)");
      more.type = "button";
      more.addEventListener("click", function () { drawAttempts(container, to); });
      container.appendChild(more);
    }
    container.setAttribute("data-drawn", "1");
  }

  function drawTranscriptOf(d) {
    if (d.querySelector(".transcript")) return;
    var data = rowData(Number(d.parentNode.getAttribute("data-row")));
    var a = decodeAttempt(data.attempts[Number(d.getAttribute("data-i"))], data.strings, data.files);
    d.appendChild(drawTranscript(a));
  }

  function onAttemptToggle(e) {
    var d = e.target;
    if (!(d instanceof HTMLDetailsElement) || !d.classList.contains("attempt") || !d.open) return;
    drawTranscriptOf(d);
  }

  // Every attempt of a row drawn (all its pages), at least up to the one at index upTo.
  function drawAll(container, upTo) {
    var n = container.querySelectorAll("details.attempt").length;
    var total = rowData(Number(container.getAttribute("data-row"))).attempts.length;
    var last = upTo == null ? total - 1 : Math.min(upTo, total - 1);
    while (n <= last) {
      drawAttempts(container, n);
      n = container.querySelectorAll("details.attempt").length;
    }
  }

  // Open one attempt: its row, its page, its transcript; then show it.
  function openAttempt(d) {
    d.hidden = false;
    drawTranscriptOf(d);
    d.open = true;
  }

  // ---- the scenario table: open, sort, filter ---------------------------------------------

  var table = document.getElementById("scenario-table");
  if (!table) return;
  var bodies = Array.prototype.filter.call(table.tBodies, function (b) { return b.classList.contains("sc"); });
  var tagsOf = new Map();

  function openRow(body, open) {
    var button = body.querySelector("button.toggle");
    button.setAttribute("aria-expanded", String(open));
    body.classList.toggle("open", open);
    var container = body.querySelector(".attempts");
    if (open && container && !container.getAttribute("data-drawn")) drawAttempts(container, 0);
  }

  table.addEventListener("click", function (e) {
    var t = e.target instanceof Element ? e.target : null;
    var toggle = t && t.closest("button.toggle");
    if (toggle) {
      var body = toggle.closest("tbody");
      openRow(body, toggle.getAttribute("aria-expanded") !== "true");
      return;
    }
    var sorter = t && t.closest("thead button[data-sort]");
    if (sorter) sortBy(sorter);
  });
  table.addEventListener("toggle", onAttemptToggle, true);  // toggle does not bubble
  table.addEventListener("click", function (e) {
    var t = e.target instanceof Element ? e.target.closest("button.permalink") : null;
    if (!t) return;
    e.preventDefault();  // the attempt stays as it is: open or closed
    var id = t.getAttribute("data-id");
    if (location.hash.slice(1) !== id) location.hash = id;
    var copy = navigator.clipboard && navigator.clipboard.writeText(location.href);
    if (copy) copy.catch(function () { /* not allowed here: the address bar has it */ });
  });
  table.addEventListener("change", function (e) {
    var box = e.target;
    if (!(box instanceof HTMLInputElement) || !box.classList.contains("only-bad")) return;
    var list = box.closest("td").querySelectorAll("details.attempt");
    for (var i = 0; i < list.length; i++) {
      list[i].hidden = box.checked && list[i].getAttribute("data-status") === "pass";
    }
  });

  var KEYS = {
    scenario: function (b) { return b.getAttribute("data-scenario"); },
    target: function (b) { return b.getAttribute("data-target"); },
    verdict: function (b) { return Number(b.getAttribute("data-verdict-rank")); },
    rate: function (b) { return Number(b.getAttribute("data-rate")); },
    passes: function (b) { return Number(b.getAttribute("data-passes")); },
    delta: function (b) { var v = b.getAttribute("data-delta"); return v == null ? -9 : Number(v); }
  };

  function sortBy(button) {
    var th = button.closest("th");
    var key = button.getAttribute("data-sort");
    var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    table.querySelectorAll("thead th").forEach(function (h) {
      if (h.hasAttribute("aria-sort")) h.setAttribute("aria-sort", "none");
    });
    th.setAttribute("aria-sort", dir);
    var f = KEYS[key];
    var sign = dir === "ascending" ? 1 : -1;
    var order = bodies.map(function (b, i) { return { b: b, k: f(b), i: i }; });
    order.sort(function (x, y) {
      var c = typeof x.k === "string" ? x.k.localeCompare(y.k) : x.k - y.k;
      return c !== 0 ? sign * c : x.i - y.i;
    });
    var frag = document.createDocumentFragment();
    order.forEach(function (o) { frag.appendChild(o.b); });
    table.appendChild(frag);
  }

  var fVerdict = document.getElementById("f-verdict");
  var fTarget = document.getElementById("f-target");
  var fTag = document.getElementById("f-tag");
  var fChange = document.getElementById("f-change");
  var fSearch = document.getElementById("f-search");
  var count = document.getElementById("count");
  var none = document.getElementById("none-shown");

  function tags(b) {
    if (!tagsOf.has(b)) tagsOf.set(b, JSON.parse(b.getAttribute("data-tags") || "[]"));
    return tagsOf.get(b);
  }

  function applyFilters() {
    var v = fVerdict ? fVerdict.value : "";
    var t = fTarget ? fTarget.value : "";
    var tag = fTag ? fTag.value : "";
    var ch = fChange ? fChange.value : "";
    var words = fSearch ? fSearch.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
    var shown = 0;
    bodies.forEach(function (b) {
      var verdict = b.getAttribute("data-verdict");
      var ok = (!v || (v === "not-pass" ? verdict !== "pass" : verdict === v)) &&
        (!t || b.getAttribute("data-target") === t) &&
        (!tag || tags(b).indexOf(tag) >= 0) &&
        (!ch || b.getAttribute("data-change") === ch);
      if (ok && words.length) {
        var hay = b.getAttribute("data-search");
        ok = words.every(function (w) { return hay.indexOf(w) >= 0; });
      }
      b.hidden = !ok;
      if (ok) shown += 1;
    });
    if (count) count.textContent = shown + " of " + bodies.length + " shown";
    if (none) none.hidden = shown !== 0;
  }

  [fVerdict, fTarget, fTag, fChange].forEach(function (s) {
    if (s) s.addEventListener("change", applyFilters);
  });
  if (fSearch) fSearch.addEventListener("input", applyFilters);
  var form = document.getElementById("filters");
  if (form) form.addEventListener("submit", function (e) { e.preventDefault(); });

  // "Expand all": every scenario open, every attempt drawn with its conversation; again,
  // everything closed. Printing expands everything first (the print view shows every
  // attempt's conversation).
  var expandButton = document.getElementById("expand-all");

  function expandAll(open) {
    bodies.forEach(function (b) {
      openRow(b, open);
      var container = b.querySelector(".attempts");
      if (!container) return;
      if (open) drawAll(container);
      var list = container.querySelectorAll("details.attempt");
      for (var i = 0; i < list.length; i++) {  // (what the filters hide stays hidden on screen)
        if (open) drawTranscriptOf(list[i]);
        list[i].open = open;
      }
    });
    if (expandButton) {
      expandButton.setAttribute("aria-pressed", String(open));
      expandButton.textContent = open ? "Collapse all" : "Expand all";
    }
  }

  if (expandButton) {
    expandButton.addEventListener("click", function () {
      expandAll(expandButton.getAttribute("aria-pressed") !== "true");
    });
  }
  window.addEventListener("beforeprint", function () { expandAll(true); });

  // Escape hides the explanation of the word that has the focus (it shows again when the
  // focus or the pointer leaves and comes back).
  document.addEventListener("keydown", function (e) {
    var t = document.activeElement;
    if (e.key === "Escape" && t && (t.classList.contains("term") || t.classList.contains("has-tip"))) {
      t.classList.add("tip-off");
    }
  });
  ["focusout", "mouseout"].forEach(function (type) {
    document.addEventListener(type, function (e) {
      var t = e.target instanceof Element ? e.target.closest(".tip-off") : null;
      if (t) t.classList.remove("tip-off");
    });
  });

  // A link to #sc-N opens that scenario; a link to #SCENARIO@TARGET/RUN opens that
  // attempt, expanded, and scrolls to it.
  function openFromHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var body = document.getElementById(id);
    if (body && body.classList.contains("sc")) {
      openRow(body, true);
      return;
    }
    var m = /^(.+)@([^@\/]+)\/(\d+)$/.exec(id);
    if (!m) return;
    var row = bodies.filter(function (b) {
      return b.getAttribute("data-scenario") === m[1] && b.getAttribute("data-target") === m[2];
    })[0];
    if (!row) return;
    row.hidden = false;
    openRow(row, true);
    var container = row.querySelector(".attempts");
    var attempts = rowData(Number(container.getAttribute("data-row"))).attempts;
    var at = -1;
    for (var i = 0; i < attempts.length; i++) {
      if (attempts[i][0] === Number(m[3])) { at = i; break; }
    }
    if (at < 0) return;
    drawAll(container, at);
    var d = document.getElementById(id);
    if (!d) return;
    openAttempt(d);
    d.scrollIntoView({ block: "start" });
    var summary = d.querySelector("summary");
    if (summary) summary.focus({ preventScroll: true });
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
  applyFilters();
})();
