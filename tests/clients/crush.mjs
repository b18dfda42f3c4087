// Plays Crush's side of a tool round trip with the config that `omniroute
// setup crush` wrote: Crush's CLI cannot be installed here (its npm package
// downloads the binary at install time), so this reads crush.json the way
// Crush does — models.large names a provider and a model; the provider's
// type says the wire ("openai-compat": OpenAI Chat at base_url with api_key)
// — and speaks that wire with the official OpenAI SDK as Crush does: a
// streamed chat with its bash tool, the command the model asks for run, its
// output sent back as the tool result, the streamed answer read to the end.
// Configuration comes as JSON in SDK_CONFIG: {config}. It prints {provider,
// type, model, contextWindow, command, toolCallId, text}, or {error}. SDK
// retries are off.
import fs from "node:fs";
import { execSync } from "node:child_process";
import OpenAI from "openai";

const { config } = JSON.parse(process.env.SDK_CONFIG);
const out = {};
try {
  const cfg = JSON.parse(fs.readFileSync(config, "utf8"));
  const pick = cfg.models?.large;
  if (!pick) throw new Error("crush.json selects no large model");
  const prov = cfg.providers?.[pick.provider];
  if (!prov) throw new Error("crush.json has no provider " + pick.provider);
  const entry = (prov.models ?? []).find((m) => m.id === pick.model);
  if (!entry) throw new Error("provider " + pick.provider + " does not list " + pick.model);
  Object.assign(out, { provider: pick.provider, type: prov.type, model: pick.model, contextWindow: entry.context_window ?? 0 });
  if (prov.type !== "openai-compat" && prov.type !== "openai") throw new Error("provider type " + prov.type);
  const client = new OpenAI({ baseURL: prov.base_url, apiKey: prov.api_key, maxRetries: 0, timeout: 60000 });
  const tools = [{
    type: "function",
    function: {
      name: "bash", description: "Run a shell command.",
      parameters: { type: "object", properties: { command: { type: "string" }, description: { type: "string" } }, required: ["command"] },
    },
  }];
  const messages = [{ role: "system", content: "You are Crush." }, { role: "user", content: "Run the marker command." }];
  const turn = async () => {
    const s = await client.chat.completions.create({ model: pick.model, messages, tools, stream: true, stream_options: { include_usage: true } });
    let text = "", finish = "";
    const calls = [];
    for await (const c of s) {
      const ch = c.choices[0];
      if (!ch) continue;
      text += ch.delta?.content ?? "";
      for (const tc of ch.delta?.tool_calls ?? []) {
        calls[tc.index] ??= { id: "", name: "", args: "" };
        if (tc.id) calls[tc.index].id = tc.id;
        if (tc.function?.name) calls[tc.index].name += tc.function.name;
        calls[tc.index].args += tc.function?.arguments ?? "";
      }
      finish = ch.finish_reason ?? finish;
    }
    return { text, finish, calls };
  };
  const first = await turn();
  const call = first.calls[0];
  if (first.finish !== "tool_calls" || !call || call.name !== "bash") throw new Error("first turn: " + JSON.stringify(first));
  const { command } = JSON.parse(call.args);
  const output = execSync(command, { encoding: "utf8" });
  messages.push({ role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.args } }] });
  messages.push({ role: "tool", tool_call_id: call.id, content: output });
  const second = await turn();
  if (second.finish !== "stop") throw new Error("second turn ended with " + JSON.stringify(second.finish) + " after " + JSON.stringify(second.text));
  Object.assign(out, { command, toolCallId: call.id, text: second.text });
} catch (e) {
  out.error = String(e?.message ?? e);
}
process.stdout.write(JSON.stringify(out));
