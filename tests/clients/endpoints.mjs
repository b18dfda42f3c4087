// Drives the clients of the endpoints beside chat against the gateway for
// endpoints_test.go: the official OpenAI SDK's legacy completions (with a
// fill-in-the-middle suffix, as autocomplete sends) and embeddings (as
// indexing sends), and the official Ollama library (ollama-js) on /ollama:
// chat streamed and not, generate, embed, list, show, ps, and a tool round trip.
// Configuration comes as JSON in SDK_CONFIG: {base, key, model, embedModel,
// fimModel}. It prints one JSON object {case: {...}} ; a case that throws has
// its message in "error". SDK retries are off.
import OpenAI from "openai";
import { Ollama } from "ollama";

const cfg = JSON.parse(process.env.SDK_CONFIG);
const openai = new OpenAI({ baseURL: cfg.base + "/v1", apiKey: cfg.key, maxRetries: 0, timeout: 30000 });
const ollama = new Ollama({ host: cfg.base + "/ollama", headers: { Authorization: "Bearer " + cfg.key } });
const ask = [{ role: "user", content: "Weather in Paris?" }];
const tool = { type: "function", function: { name: "get_weather", description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };

const cases = {
  async "completions-fim"() {
    const r = await openai.completions.create({ model: cfg.fimModel, prompt: "def add(a, b):", suffix: "\nprint(add(1, 2))", max_tokens: 32 });
    return { text: r.choices[0].text, finish: r.choices[0].finish_reason };
  },
  async "completions-stream"() {
    const s = await openai.completions.create({ model: cfg.model, prompt: "Say hi", max_tokens: 32, stream: true });
    let text = "", finish = "";
    for await (const c of s) {
      text += c.choices[0]?.text ?? "";
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    return { text, finish };
  },
  async "embeddings"() {
    const r = await openai.embeddings.create({ model: cfg.embedModel, input: ["a chunk of code", "another chunk"] });
    return { count: r.data.length, dims: r.data[0].embedding.length };
  },
  async "ollama-chat"() {
    const r = await ollama.chat({ model: cfg.model, messages: ask });
    return { text: r.message.content, finish: r.done_reason };
  },
  async "ollama-chat-stream"() {
    const s = await ollama.chat({ model: cfg.model, messages: ask, stream: true });
    let text = "", finish = "";
    for await (const part of s) {
      text += part.message.content;
      if (part.done) finish = part.done_reason;
    }
    return { text, finish };
  },
  async "ollama-tools"() {
    const r = await ollama.chat({ model: cfg.model, messages: ask, tools: [tool] });
    const call = r.message.tool_calls[0];
    const r2 = await ollama.chat({ model: cfg.model, tools: [tool], messages: [...ask, r.message,
      { role: "tool", tool_name: call.function.name, content: "sunny" }] });
    return { args: JSON.stringify(call.function.arguments), text: r2.message.content };
  },
  async "ollama-generate"() {
    const r = await ollama.generate({ model: cfg.model, prompt: "Say hi" });
    return { text: r.response, finish: r.done_reason };
  },
  async "ollama-embed"() {
    const r = await ollama.embed({ model: cfg.embedModel, input: ["a", "b"] });
    return { count: r.embeddings.length, dims: r.embeddings[0].length };
  },
  async "ollama-list"() {
    const r = await ollama.list();
    return { names: r.models.map((m) => m.name) };
  },
  async "ollama-show"() {
    const r = await ollama.show({ model: cfg.model });
    return { text: r.details.family, names: r.capabilities };
  },
  async "ollama-ps"() {
    const r = await ollama.ps();
    return { count: r.models.length };
  },
};

const out = {};
for (const [name, fn] of Object.entries(cases)) {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { error: String(e?.message ?? e) || "error" };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
