// The adapters (src/adapters.ts) against a real catalogue served over HTTP by a tiny static server: the OpenAI and
// Vercel AI SDK definitions' shapes, and the find_tool → expand_tool → call loop. The catalogue is the build folder
// in TOOLCAT_BUILD (tests/js/test_js_adapters.py builds the example catalogue there), else ../build (`make build`).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Catalog } from "../dist/index.js";
import { discovery } from "../dist/adapters.js";

const root = resolve(process.env.TOOLCAT_BUILD ?? fileURLToPath(new URL("../../build", import.meta.url)));
const built = existsSync(`${root}${sep}catalog.json`);
const skip = built ? false : `no catalogue at ${root}: run \`make build\` or set TOOLCAT_BUILD`;
const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
let server;
let url;

before(async () => {
  if (!built) return;
  server = createServer((req, res) => {
    const file = resolve(root, "." + decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" }).end(readFileSync(file));
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  url = `http://127.0.0.1:${server.address().port}/`;
});

after(() => server?.close());

/** A host's execute that records its calls. */
function recorder() {
  const calls = [];
  const execute = async (toolId, args, spec) => {
    calls.push({ toolId, args, spec });
    return { ran: toolId, args };
  };
  return { calls, execute };
}

/** An OpenAI function definition as the API accepts it: its name pattern and an object JSON schema. */
function assertOpenAIFunction(definition) {
  assert.equal(definition.type, "function");
  const { name, description, parameters } = definition.function;
  assert.match(name, OPENAI_NAME);
  assert.equal(typeof description, "string");
  assert.equal(parameters.type, "object", `${name}: parameters must be an object schema`);
  if ("properties" in parameters) assert.equal(typeof parameters.properties, "object");
  for (const key of parameters.required ?? []) assert.ok(key in (parameters.properties ?? {}), `${name}: required ${key} is not a property`);
}

/** The first tool find_tool offers for ``purpose``, expanded: [toolId, alias, spec]. */
async function firstTool(loop, purpose) {
  const found = await loop.handle("find_tool", { purpose });
  assert.equal(found.ok, true);
  assert.ok(found.matches.length > 0, `nothing found for ${purpose}`);
  return found.matches[0].name;
}

test("openaiTools: find_tool and expand_tool first, then each expanded tool under a valid function name", { skip }, async () => {
  const loop = discovery(await Catalog.open(url), recorder().execute);
  const initial = loop.openaiTools();
  assert.deepEqual(initial.map((t) => t.function.name), ["find_tool", "expand_tool"]);
  initial.forEach(assertOpenAIFunction);
  assert.deepEqual(initial[0].function.parameters.required, ["purpose"]);
  const toolId = await firstTool(loop, "read the contents of a text file");
  const expanded = await loop.handle("expand_tool", { tool_id: toolId });
  assert.equal(expanded.ok, true);
  const tools = loop.openaiTools();
  assert.equal(tools.length, 3);
  tools.forEach(assertOpenAIFunction);
  assert.equal(tools[2].function.name, expanded.alias);
  assert.deepEqual(tools[2].function.parameters, expanded.args_schema);
});

test("a tool reaches the host's execute only after it was expanded", { skip }, async () => {
  const host = recorder();
  const loop = discovery(await Catalog.open(url), host.execute);
  const toolId = await firstTool(loop, "read the contents of a text file");
  const spec = await (await Catalog.open(url)).expandTool(toolId);
  const early = await loop.handle(spec.alias, { path: "README.md" });
  assert.equal(early.ok, false);
  assert.equal(early.error.code, "NOT_AUTHORIZED");
  assert.deepEqual(early.error.next_action, { op: "expand_tool", args: { tool_id: spec.alias } });
  assert.equal((await loop.handle("call_tool", { tool_id: toolId, args: {} })).error.code, "NOT_AUTHORIZED");
  assert.equal(host.calls.length, 0, "nothing ran before expand_tool");

  await loop.handle("expand_tool", { tool_id: toolId });
  const byAlias = await loop.handle(spec.alias, { path: "README.md" });
  assert.deepEqual(byAlias, { ran: toolId, args: { path: "README.md" } });
  const byCallTool = await loop.handle("call_tool", { tool_id: spec.alias, args: { path: "a.txt" } });
  assert.deepEqual(byCallTool, { ran: toolId, args: { path: "a.txt" } });
  assert.deepEqual(host.calls.map((c) => c.toolId), [toolId, toolId]);
  assert.equal(host.calls[0].spec.tool_id, toolId);
  assert.deepEqual(host.calls[0].spec.args_schema, spec.args_schema);
});

test("an unknown tool gets the reader's envelope, and nothing runs", { skip }, async () => {
  const host = recorder();
  const catalog = await Catalog.open(url);
  const loop = discovery(catalog, host.execute);
  const answer = await loop.handle("expand_tool", { tool_id: "no.such_tool" });
  assert.deepEqual(answer, await catalog.expandTool("no.such_tool"));
  assert.equal(answer.ok, false);
  assert.equal(answer.error.code, "TOOL_NOT_FOUND");
  assert.deepEqual(loop.openaiTools().map((t) => t.function.name), ["find_tool", "expand_tool"]);
  const called = await loop.handle("no_such_tool", {});
  assert.equal(called.error.code, "NOT_AUTHORIZED");
  assert.equal(called.error.help_path, "no_such_tool");
  assert.equal((await loop.handle("find_tool", { purpose: "" })).error.code, "BAD_REQUEST");
  assert.equal(host.calls.length, 0);
});

test("without an execute, an expanded tool answers NOT_EXECUTABLE", { skip }, async () => {
  const loop = discovery(await Catalog.open(url));
  const toolId = await firstTool(loop, "read the contents of a text file");
  await loop.handle("expand_tool", { tool_id: toolId });
  const answer = await loop.handle("call_tool", { tool_id: toolId, args: {} });
  assert.equal(answer.ok, false);
  assert.equal(answer.error.code, "NOT_EXECUTABLE");
});

test("aiSdkTools: find_tool, expand_tool and call_tool, wrapped by the SDK's jsonSchema, run the same loop", { skip }, async () => {
  const host = recorder();
  const loop = discovery(await Catalog.open(url), host.execute);
  const jsonSchema = (schema) => ({ wrapped: schema });
  const tools = loop.aiSdkTools(jsonSchema);
  assert.deepEqual(Object.keys(tools), ["find_tool", "expand_tool", "call_tool"]);
  for (const [name, tool] of Object.entries(tools)) {
    assert.equal(typeof tool.description, "string", name);
    assert.equal(tool.parameters, tool.inputSchema, name);
    assert.equal(tool.parameters.wrapped.type, "object", name);
  }
  const found = await tools.find_tool.execute({ purpose: "read the contents of a text file" });
  const toolId = found.matches[0].name;
  assert.equal((await tools.call_tool.execute({ tool_id: toolId, args: {} })).error.code, "NOT_AUTHORIZED");
  assert.equal((await tools.expand_tool.execute({ tool_id: toolId })).ok, true);
  assert.deepEqual(await tools.call_tool.execute({ tool_id: toolId, args: { path: "x" } }), { ran: toolId, args: { path: "x" } });
  assert.equal(host.calls.length, 1);
});
