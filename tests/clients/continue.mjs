// Sends what Continue's "openai" provider sends for its two roles beside
// chat, with the models, base URL and key of the config.yaml that
// `omniroute setup continue` wrote (read with js-yaml, picked by role), over
// the official OpenAI SDK, the wire Continue speaks: autocomplete as a raw
// fill-in-the-middle prompt to the legacy /v1/completions (streamed, with
// stop words), and indexing as a batch to /v1/embeddings. The Continue CLI
// (cn) never makes these requests itself: they come from its editor
// extensions. Configuration comes as JSON in SDK_CONFIG: {config}. It prints
// {autocomplete: {model, text, finish}, embed: {model, count, dims}}; a case
// that throws has its message in "error". SDK retries are off.
import fs from "node:fs";
import yaml from "js-yaml";
import OpenAI from "openai";

const cfg = JSON.parse(process.env.SDK_CONFIG);
const models = yaml.load(fs.readFileSync(cfg.config, "utf8")).models ?? [];
const byRole = (role) => {
  const m = models.find((m) => (m.roles ?? ["chat", "edit", "apply"]).includes(role));
  if (!m) throw new Error("no model with role " + role);
  if (m.provider !== "openai") throw new Error(m.name + ": provider " + m.provider);
  return { model: m.model, client: new OpenAI({ baseURL: m.apiBase, apiKey: m.apiKey, maxRetries: 0, timeout: 30000 }) };
};

const cases = {
  async autocomplete() {
    const { model, client } = byRole("autocomplete");
    const s = await client.completions.create({
      model, prompt: "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\nprint(add(1, 2))<|fim_middle|>",
      max_tokens: 256, temperature: 0.01, stop: ["<|endoftext|>", "<|fim_pad|>", "<|repo_name|>", "\n\n"], stream: true,
    });
    let text = "", finish = "";
    for await (const c of s) {
      text += c.choices[0]?.text ?? "";
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    return { model, text, finish };
  },
  async embed() {
    const { model, client } = byRole("embed");
    const r = await client.embeddings.create({ model, input: ["def add(a, b):\n    return a + b", "print(add(1, 2))"] });
    return { model, count: r.data.length, dims: r.data[0].embedding.length };
  },
};

const out = {};
for (const [name, fn] of Object.entries(cases)) {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { error: String(e?.message ?? e) };
  }
}
process.stdout.write(JSON.stringify(out));
