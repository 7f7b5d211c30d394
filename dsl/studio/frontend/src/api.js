// Talking to the studio's server: JSON in and out, the token travels in its cookie.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function answer(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const said = body && body.error ? body.error : `the studio answered ${response.status}`;
    throw new ApiError(response.status, said);
  }
  return body;
}

export async function get(url) {
  return answer(await fetch(url, { credentials: "same-origin" }));
}

export async function post(url, data) {
  return answer(await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(data),
  }));
}
