// Drives the official OpenAI and Anthropic SDKs against the gateway for the
// Go tests of this directory (sdk_test.go). Configuration comes as JSON in
// SDK_CONFIG: {base, key, model}. Every case runs in each API — Chat
// Completions, Messages, Responses — streaming and not, and with a tool
// round trip (the tool id the SDK got is the one it sends back). It prints
// one JSON object: {case: {text, id, finish, error}}; a case that throws has
// its error message in "error" (the Go test decides which outcome is right).
// SDK retries are off: a retry that succeeded would hide a failure.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const cfg = JSON.parse(process.env.SDK_CONFIG);
const openai = new OpenAI({ baseURL: cfg.base + "/v1", apiKey: cfg.key, maxRetries: 0, timeout: 30000 });
const anthropic = new Anthropic({ baseURL: cfg.base, apiKey: cfg.key, maxRetries: 0, timeout: 30000 });
const model = cfg.model;
const toolOutput = "sunny";

const chatTool = { type: "function", function: { name: "get_weather", description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const messagesTool = { name: "get_weather", description: "Weather for a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const responsesTool = { type: "function", name: "get_weather", description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: false };
const ask = [{ role: "user", content: "Weather in Paris?" }];

const cases = {
  // --- OpenAI Chat Completions ---
  async "chat"() {
    const r = await openai.chat.completions.create({ model, messages: ask });
    return { text: r.choices[0].message.content, finish: r.choices[0].finish_reason };
  },
  async "chat-stream"() {
    const s = await openai.chat.completions.create({ model, messages: ask, stream: true });
    let text = "", finish = "";
    for await (const c of s) {
      text += c.choices[0]?.delta?.content ?? "";
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    return { text, finish };
  },
  async "chat-tools"() {
    const r = await openai.chat.completions.create({ model, messages: ask, tools: [chatTool] });
    const call = r.choices[0].message.tool_calls[0];
    const r2 = await openai.chat.completions.create({ model, tools: [chatTool], messages: [...ask,
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: toolOutput }] });
    return { id: call.id, args: call.function.arguments, text: r2.choices[0].message.content, finish: r.choices[0].finish_reason };
  },
  async "chat-tools-stream"() {
    const s = openai.chat.completions.stream({ model, messages: ask, tools: [chatTool] });
    const done = await s.finalChatCompletion();
    const call = done.choices[0].message.tool_calls[0];
    const s2 = openai.chat.completions.stream({ model, tools: [chatTool], messages: [...ask,
      { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: call.function }] },
      { role: "tool", tool_call_id: call.id, content: toolOutput }] });
    const done2 = await s2.finalChatCompletion();
    return { id: call.id, args: call.function.arguments, text: done2.choices[0].message.content, finish: done.choices[0].finish_reason };
  },
  // --- Anthropic Messages ---
  async "messages"() {
    const r = await anthropic.messages.create({ model, max_tokens: 256, messages: ask });
    return { text: r.content.filter((b) => b.type === "text").map((b) => b.text).join(""), finish: r.stop_reason };
  },
  async "messages-stream"() {
    const s = anthropic.messages.stream({ model, max_tokens: 256, messages: ask });
    const r = await s.finalMessage();
    return { text: r.content.filter((b) => b.type === "text").map((b) => b.text).join(""), finish: r.stop_reason };
  },
  async "messages-tools"() {
    const r = await anthropic.messages.create({ model, max_tokens: 256, messages: ask, tools: [messagesTool] });
    const use = r.content.find((b) => b.type === "tool_use");
    const r2 = await anthropic.messages.create({ model, max_tokens: 256, tools: [messagesTool], messages: [...ask,
      { role: "assistant", content: r.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: toolOutput }] }] });
    return { id: use.id, args: JSON.stringify(use.input), text: r2.content.filter((b) => b.type === "text").map((b) => b.text).join(""), finish: r.stop_reason };
  },
  async "messages-tools-stream"() {
    const r = await anthropic.messages.stream({ model, max_tokens: 256, messages: ask, tools: [messagesTool] }).finalMessage();
    const use = r.content.find((b) => b.type === "tool_use");
    const r2 = await anthropic.messages.stream({ model, max_tokens: 256, tools: [messagesTool], messages: [...ask,
      { role: "assistant", content: r.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: toolOutput }] }] }).finalMessage();
    return { id: use.id, args: JSON.stringify(use.input), text: r2.content.filter((b) => b.type === "text").map((b) => b.text).join(""), finish: r.stop_reason };
  },
  // --- OpenAI Responses ---
  async "responses"() {
    const r = await openai.responses.create({ model, input: "Weather in Paris?" });
    return { text: r.output_text, finish: r.status };
  },
  async "responses-stream"() {
    const s = await openai.responses.create({ model, input: "Weather in Paris?", stream: true });
    let text = "", finish = "";
    for await (const ev of s) {
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") finish = ev.response.status;
      if (ev.type === "response.failed" || ev.type === "error") throw new Error("stream failed: " + JSON.stringify(ev));
    }
    if (finish === "") throw new Error("stream ended without response.completed");
    return { text, finish };
  },
  async "responses-tools"() {
    const r = await openai.responses.create({ model, input: "Weather in Paris?", tools: [responsesTool] });
    const call = r.output.find((o) => o.type === "function_call");
    const r2 = await openai.responses.create({ model, tools: [responsesTool], input: [
      { role: "user", content: "Weather in Paris?" },
      { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: toolOutput }] });
    return { id: call.call_id, args: call.arguments, text: r2.output_text, finish: r.status };
  },
  async "responses-tools-stream"() {
    const r = await openai.responses.stream({ model, input: "Weather in Paris?", tools: [responsesTool] }).finalResponse();
    const call = r.output.find((o) => o.type === "function_call");
    const r2 = await openai.responses.stream({ model, tools: [responsesTool], input: [
      { role: "user", content: "Weather in Paris?" },
      { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: toolOutput }] }).finalResponse();
    return { id: call.call_id, args: call.arguments, text: r2.output_text, finish: r.status };
  },
};

const only = cfg.cases ? new Set(cfg.cases) : null;
const out = {};
for (const [name, fn] of Object.entries(cases)) {
  if (only && !only.has(name)) continue;
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { error: String(e?.message ?? e) || "error" };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
