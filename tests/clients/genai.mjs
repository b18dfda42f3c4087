// Drives the @google/genai SDK on its default API version (v1 since 3.x) and
// the openai SDK's models.retrieve against the gateway, for genai_test.go.
// SDK_CONFIG: {base, key, model, embedModel}. Prints one JSON object:
// {case: {value, error}}; a case that throws has its message in "error".
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

const cfg = JSON.parse(process.env.SDK_CONFIG);
const ai = new GoogleGenAI({ apiKey: cfg.key, httpOptions: { baseUrl: cfg.base } });
const openai = new OpenAI({ baseURL: cfg.base + "/v1", apiKey: cfg.key, maxRetries: 0, timeout: 30000 });
const ask = "Weather in Paris?";

const cases = {
  async "version"() { return ai.apiClient ? ai.apiClient.getApiVersion() : ""; },
  async "list"() {
    const names = [];
    for await (const m of await ai.models.list()) names.push(m.name);
    return names;
  },
  async "get"() { return (await ai.models.get({ model: cfg.model })).name; },
  async "generate"() { return (await ai.models.generateContent({ model: cfg.model, contents: ask })).text; },
  async "stream"() {
    let text = "";
    for await (const c of await ai.models.generateContentStream({ model: cfg.model, contents: ask })) text += c.text ?? "";
    return text;
  },
  async "count"() { return (await ai.models.countTokens({ model: cfg.model, contents: ask })).totalTokens; },
  async "embed"() {
    const r = await ai.models.embedContent({ model: cfg.embedModel, contents: ["a", "bb"] });
    return r.embeddings.map((e) => e.values.length);
  },
  async "openai-retrieve"() { const m = await openai.models.retrieve(cfg.model); return [m.id, m.object]; },
  async "openai-retrieve-unknown"() {
    try { await openai.models.retrieve("no-such-model"); return "no error"; }
    catch (e) { return [e.status, e.error?.code ?? e.code ?? ""]; }
  },
};

const out = {};
for (const [name, fn] of Object.entries(cases)) {
  try { out[name] = { value: await fn() }; }
  catch (e) { out[name] = { error: String(e && e.message || e) }; }
}
console.log(JSON.stringify(out));
