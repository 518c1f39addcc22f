// Talks to a running snapstream server with the official OpenAI client and prints one JSON
// object of what it saw; the C++ end-to-end test checks it. Usage: node openai_client.mjs URL MODEL KEY
import OpenAI from "openai";

const [baseURL, model, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey, maxRetries: 0 });
const out = {};

const prompt = "Once upon a time";
const completion = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0 });
out.completion_text = completion.choices[0].text;
out.completion_finish = completion.choices[0].finish_reason;
out.completion_usage = completion.usage;

let streamed = "";
let streamUsage = null;
const stream = await client.completions.create({
  model, prompt, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  for (const choice of chunk.choices) streamed += choice.text;
  if (chunk.usage) streamUsage = chunk.usage;
}
out.completion_streamed = streamed;
out.completion_stream_usage = streamUsage;

const messages = [{ role: "user", content: "Tell me a story about a cat." }];
const chat = await client.chat.completions.create({ model, messages, max_tokens: 20, temperature: 0 });
out.chat_text = chat.choices[0].message.content;
out.chat_role = chat.choices[0].message.role;
let chatStreamed = "";
const chatStream = await client.chat.completions.create({ model, messages, max_tokens: 20, temperature: 0, stream: true });
for await (const chunk of chatStream) chatStreamed += chunk.choices[0]?.delta?.content ?? "";
out.chat_streamed = chatStreamed;

const stopped = await client.completions.create({ model, prompt, max_tokens: 60, temperature: 0, stop: ["Lily"] });
out.stop_text = stopped.choices[0].text;
out.stop_finish = stopped.choices[0].finish_reason;

const sampled = async (seed) =>
  (await client.completions.create({ model, prompt, max_tokens: 30, temperature: 1, seed })).choices[0].text;
out.seed_a = await sampled(7);
out.seed_b = await sampled(7);
out.seed_c = await sampled(8);
// n choices through the client's own types, in one request.
const several = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 1, seed: 7, n: 3 });
out.n_indices = several.choices.map((c) => c.index);
out.n_first = several.choices[0].message.content;
out.n_single = (await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 1, seed: 7 })).choices[0].message.content;

try {
  await client.completions.create({ model: "no-such-model", prompt, max_tokens: 5 });
  out.error_status = 0;
} catch (e) {
  out.error_status = e.status;
  out.error_message = e.message;
}
try {
  await new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: "wrong", maxRetries: 0 }).models.list();
  out.auth_status = 0;
} catch (e) {
  out.auth_status = e.status;
}
out.models = (await client.models.list()).data.map((m) => m.id);
out.retrieved = (await client.models.retrieve(model)).id;
console.log(JSON.stringify(out));
