// Talking to the studio's server: JSON in and out, the session key in a header.
//
// The address the studio printed (or the file it opened the browser with) carries a
// one-time code. On its first load the page trades that code for the session key
// (POST /api/session), keeps the key in this origin's storage (127.0.0.1 with this port:
// no other page can read it) and sends it as X-Scenarist-Token with every request.
// No cookie is ever involved: browsers send cookies for 127.0.0.1 to every port.

const KEY = "scenarist-studio-key";
let token = null;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The session key: from the code in the address (traded once), else from storage.
// Returns false when neither works (the page says how to get in).
export async function connect() {
  const params = new URLSearchParams(location.search);
  const code = params.get("token");
  if (code) {
    try {
      const r = await fetch("/api/session", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ code }),
      });
      if (r.ok) {
        const body = await r.json();
        token = body.token;
        localStorage.setItem(KEY, token);
        // the page's own address from now on: reloads and new tabs get the page's files
        history.replaceState(null, "", `/?s=${encodeURIComponent(body.ticket)}${location.hash}`);
        return true;
      }
    } catch {
      // fall back on a key this browser already has
    }
  }
  token = localStorage.getItem(KEY);
  if (!token) return false;
  const r = await fetch("/api/suite", { headers: { "X-Scenarist-Token": token } });
  if (r.status === 403) {
    token = null;
    return false;
  }
  if (code) {
    const ticket = new URLSearchParams(location.search).get("s");
    if (!ticket) history.replaceState(null, "", `/${location.hash}`);
  }
  return true;
}

function headers(extra = {}) {
  return token ? { "X-Scenarist-Token": token, ...extra } : extra;
}

async function answer(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const said = body && typeof body.error === "string" ? body.error
      : `the studio answered ${response.status} ${response.statusText || ""}`.trim();
    throw new ApiError(response.status, said);
  }
  return body;
}

export async function get(url) {
  let r;
  try {
    r = await fetch(url, { headers: headers() });
  } catch {
    throw new ApiError(0, "the studio does not answer: is `scenarist studio` still running?");
  }
  return answer(r);
}

export async function post(url, data) {
  let r;
  try {
    r = await fetch(url, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify(data),
    });
  } catch {
    throw new ApiError(0, "the studio does not answer: is `scenarist studio` still running?");
  }
  return answer(r);
}

// Server-sent events read with fetch (an EventSource cannot send the key): calls
// onEvent(name, data) for each, until the stream ends.
export async function events(url, onEvent) {
  const r = await fetch(url, { headers: headers({ Accept: "text/event-stream" }) });
  if (!r.ok) await answer(r);
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of chunk.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}
