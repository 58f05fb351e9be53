// A small OpenAI-compatible Chat Completions server (streaming) in front of a local GGUF model, run by
// node-llama-cpp: enough for cairn's summary rung to run end to end against a real model on loopback.
// Usage: node server.mjs MODEL.gguf PORT
import http from "node:http";
import { getLlama, LlamaChatSession } from "node-llama-cpp";

const [modelPath, port] = process.argv.slice(2);
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 8192 });

const server = http.createServer(async (req, res) => {
  if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
    res.writeHead(404).end();
    return;
  }
  let body = "";
  for await (const chunk of req) body += chunk;
  const request = JSON.parse(body);
  const text = (m) => (typeof m.content === "string" ? m.content : (m.content || []).map((p) => p.text || "").join("\n"));
  const system = request.messages.filter((m) => m.role === "system").map(text).join("\n");
  const prompt = request.messages.filter((m) => m.role !== "system").map(text).join("\n\n");
  const sequence = context.getSequence();
  const session = new LlamaChatSession({ contextSequence: sequence, systemPrompt: system || undefined });
  const promptTokens = model.tokenize(prompt).length;
  if (promptTokens > 8192 - 512) {
    sequence.dispose();
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `This model's maximum context length is 8192 tokens. However, your messages resulted in ${promptTokens} tokens.`, code: "context_length_exceeded" } }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  let completion = 0;
  await session.prompt(prompt, {
    maxTokens: 200,
    onTextChunk(chunk) {
      completion += 1;
      res.write(`data: ${JSON.stringify({ model: "SmolLM2-135M-Instruct", choices: [{ delta: { content: chunk } }] })}\n\n`);
    },
  });
  res.write(`data: ${JSON.stringify({ model: "SmolLM2-135M-Instruct", choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completion } })}\n\n`);
  res.end("data: [DONE]\n\n");
  sequence.dispose();
});
server.listen(Number(port), "127.0.0.1", () => console.log(`listening on 127.0.0.1:${port}`));
