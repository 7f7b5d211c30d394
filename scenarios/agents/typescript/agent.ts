// A TypeScript agent with its own loop, as a team would ship it — tested by Scenarist as a
// `kind: command` target (scenarios/agents/scenarist.yaml, target `typescript`).
//
// One process per conversation. It takes its tools from the MCP server at
// SCENARIST_MCP_URL (in a test, the scenario's fake tools) with the official MCP
// TypeScript SDK, and its model from an OpenAI-compatible endpoint (AGENT_MODEL_URL,
// AGENT_MODEL). Each line on standard input is one turn:
//   {"turn", "message", "confirmed", "cancelled", "messages"}
// (`messages`: the conversation so far in OpenAI's format, this turn's message included);
// it answers each with one line on standard output: {"answer": "..."}.
//
// Run it with Node 20 and the packages of package-lock.json (npm ci): node --import tsx agent.ts

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

type Message = { role: string; content: unknown; tool_calls?: ToolCall[]; tool_call_id?: string };
type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type Turn = { turn: number; message: string; messages: Message[] };

const MODEL_URL = process.env.AGENT_MODEL_URL ?? "http://127.0.0.1:8088/v1";
const MODEL = process.env.AGENT_MODEL ?? "qwen2.5-coder-0.5b";
const MAX_STEPS = 6;
const SYSTEM = `You are the assistant of Clínica Sonrisa, a dental clinic.
Answer briefly, in the language the person writes in.
Use the tools to look facts up; never invent opening hours or appointments.
Some tools need the person's confirmation: when a tool says so, ask the person to confirm.
Current date and time: ${process.env.SCENARIST_AT ?? new Date().toISOString()}.`;

async function main(): Promise<void> {
  const mcp = new Client({ name: "clinic-agent", version: "1.0.0" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(process.env.SCENARIST_MCP_URL!)));
  const { tools } = await mcp.listTools();
  const functions = tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description ?? "", parameters: t.inputSchema },
  }));

  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const turn = JSON.parse(line) as Turn;
    const messages: Message[] = [{ role: "system", content: SYSTEM }, ...turn.messages];
    let answer = "";
    for (let step = 0; step < MAX_STEPS; step++) {
      const reply = await complete(messages, functions);
      const calls = reply.tool_calls ?? [];
      messages.push({ role: "assistant", content: reply.content ?? null, tool_calls: calls.length ? calls : undefined });
      if (!calls.length) {
        answer = typeof reply.content === "string" ? reply.content : "";
        break;
      }
      for (const call of calls) {
        const result = await mcp.callTool({
          name: call.function.name,
          arguments: JSON.parse(call.function.arguments || "{}"),
        }).catch((err: Error) => ({ content: [{ type: "text", text: `error: ${err.message}` }] }));
        const text = (result.content as { type: string; text?: string }[])
          .map((part) => part.text ?? "").join("");
        messages.push({ role: "tool", tool_call_id: call.id, content: text });
      }
    }
    process.stdout.write(JSON.stringify({ answer }) + "\n");
  }
  await mcp.close();
}

async function complete(messages: Message[], tools: unknown[]): Promise<Message> {
  const response = await fetch(`${MODEL_URL}/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${process.env.AGENT_MODEL_KEY ?? "none"}` },
    body: JSON.stringify({ model: MODEL, messages, tools, seed: Number(process.env.SCENARIST_SEED ?? 0) }),
  });
  if (!response.ok) throw new Error(`the model answered HTTP ${response.status}: ${await response.text()}`);
  const data = (await response.json()) as { choices: { message: Message }[] };
  return data.choices[0].message;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
