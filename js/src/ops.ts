/** The core operations: the spec dialect's list, search_nodes, search_tool_by_category and expand_tool, and
 * find_tool (``spec_dialect``, ``namespaced``). The gateway dialect is in gateway.ts; tool_list, prompts and
 * always-loaded tools in full.ts. Each takes the store and the caller's raw arguments and returns a result
 * envelope or throws ``ReaderError``. */
import { bad, dropEmpty, isError, ok, type Action } from "./errors.js";
import { isObject, pyRound, shown, type Json } from "./py.js";
import { checkLimit, checkQuery, checkStr, checkTags, decodeCursor, deprecationNote, encodeCursor, nodePath, type Artifact, type Store } from "./store.js";

/** Decides whether the host runs a tool: the TypeScript reader runs none itself (``executable`` is the host's answer). */
export type Runs = (toolId: string, handler: Json | null) => boolean;

const HIDDEN_POINTER_KEYS = new Set(["spec", "alias", "aliases", "tokens", "optional"]);
const DESCRIBED_KEYS = [
  "tool_id", "type", "path", "categories", "summary", "description", "args_schema", "result_schema", "examples", "errors", "tags", "kind",
  "optional", "when_to_use", "policy", "annotations", "version", "author", "capabilities", "constraints", "tools", "deprecated",
];
export const clone = <T>(value: T): T => (value === undefined ? value : structuredClone(value));
const isBlank = (v: unknown) => v === null || v === undefined || v === false || v === "" || (Array.isArray(v) && !v.length) || (isObject(v) && !Object.keys(v).length);

/** A tool pointer as an agent sees it: lean, ``confidence`` when ranked. */
export function publicPointer(pointer: Artifact, confidence?: number): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(pointer)) {
    if (HIDDEN_POINTER_KEYS.has(k) || isBlank(v) || (k === "type" && v === "tool")) continue;
    out[k] = clone(v);
  }
  if (confidence !== undefined) out.confidence = roundTo4(confidence);
  return out;
}

const roundTo4 = (x: number) => pyRound(x, 4);

export function checkCapability(capability: unknown): string | null {
  if (capability === null || capability === undefined) return null;
  if (typeof capability !== "string" || !capability.trim() || capability.length > 200) {
    throw bad(`'capability' must be a capability name such as 'code-analysis', got ${shown(capability)}`);
  }
  return capability.trim().toLowerCase();
}

export function hasCapability(pointer: Artifact, capability: string): boolean {
  const declared = pointer.capabilities;
  return Array.isArray(declared) && declared.map((c) => String(c).toLowerCase()).includes(capability);
}

/** A search answer as a reader envelope: public pointers, the envelope's keys filled in. */
function delegate(result: Json, helpPath = "root"): Json {
  if (isError(result)) return result;
  const out: Json = { ...result };
  for (const key of ["tools", "results"]) {
    if (Array.isArray(out[key])) out[key] = (out[key] as Artifact[]).map((t) => (isObject(t) && "tool_id" in t ? publicPointer(t) : t));
  }
  return { ok: true, ...out, help_path: out.help_path ?? helpPath, hints: out.hints ?? [], next_action: out.next_action ?? null };
}

// == spec dialect ================================================================================
export async function listNode(store: Store, path: unknown, tags: unknown, query: unknown, limit: unknown, cursor: unknown, capability: unknown): Promise<Json> {
  const where = await store.canonicalPath(nodePath(path));
  const wanted = checkTags(tags);
  const able = checkCapability(capability);
  const count = checkLimit(limit, 10);
  if (query !== null && query !== undefined) checkStr(query, "query", true);
  const offset = await decodeCursor(cursor);
  const shard = await store.node(where);
  const searched = typeof query === "string" && !!query.trim();
  let hits: [Artifact, number, string[]][] = [];
  const filtered = !!wanted.length || able !== null;
  let page: Artifact[];
  let total: number;
  if (searched && !filtered) {
    [hits, total] = await store.searcherRequired().rankToolsPage(query as string, where, offset, count);
    page = hits.map((h) => h[0]);
  } else {
    let pointers: Artifact[];
    if (searched) {
      hits = await store.searcherRequired().rankTools(query as string, { within: where });
      pointers = hits.map((h) => h[0]);
    } else if (filtered) pointers = [...(await (await import("./deferred.js")).subtreePointers(store, where)).values()];
    else if (offset + count <= (shard.tools ?? []).length) pointers = shard.tools ?? [];
    else pointers = await store.nodeTools(shard);
    if (wanted.length) pointers = pointers.filter((p) => wanted.every((t) => (p.tags ?? []).map((x: string) => x.toLowerCase()).includes(t)));
    if (able !== null) pointers = pointers.filter((p) => hasCapability(p, able));
    page = pointers.slice(offset, offset + count);
    total = searched || filtered ? pointers.length : (shard.direct_tools ?? pointers.length);
  }
  const confidences = new Map(hits.map((h) => [h[0].tool_id, Number(h[1])]));
  const more = offset + count < total;
  const nodes = offset || filtered || searched
    ? []
    : (shard.children ?? []).map((c: Artifact) => dropEmpty(Object.fromEntries(["name", "path", "title", "summary", "tags", "tool_count"].filter((k) => k in c).map((k) => [k, c[k]]))));
  const tools = page.map((p) => publicPointer(p, confidences.size ? confidences.get(p.tool_id) : undefined));
  const hints: string[] = [];
  let next: Action | null;
  const weak = searched && tools.length && !offset ? await (await import("./deferred.js")).weakList(store, query as string, where, confidences) : null;
  if (weak) [hints[0], next] = weak;
  else if (tools.length) next = { op: "describe", args: { tool_id: tools[0]?.tool_id } };
  else if (nodes.length) next = { op: "list", args: { path: nodes[0].path.join("/") } };
  else {
    const text = [searched ? (query as string) : "", ...wanted, able ?? "", ...where].filter(Boolean).join(" ");
    next = text ? { op: "search", args: { query: text } } : null;
    hints.push("Nothing here matches; search the whole catalogue by purpose, or browse from the root.");
  }
  const out = dropEmpty({ path: where, title: shard.title ?? "", summary: shard.summary ?? "", tool_count: shard.tool_count ?? 0, nodes, tools, total_tools: total }, ["path", "nodes", "tools"]);
  out.next_cursor = more ? encodeCursor(offset + count) : null;
  if (weak) out.weak = true;
  return ok(out, { help_path: where.join("/") || "root", hints, next_action: next });
}

export async function searchNodes(store: Store, query: unknown, limit: unknown): Promise<Json> {
  await checkQuery(query);
  const count = checkLimit(limit, 5);
  // no match: the searcher's answer has the hint and the search of tools by purpose (failures.ts noNodes)
  return delegate(await store.searcherRequired().searchNodes(query, count));
}

export async function searchToolByCategory(store: Store, query: unknown, categoryPath: unknown, limit: unknown, cursor: unknown): Promise<Json> {
  await checkQuery(query);
  const count = checkLimit(limit, 5);
  if (cursor !== null && cursor !== undefined && typeof cursor !== "string") throw bad(`cursor ${shown(cursor)} must be a string this reader returned`);
  const where = await store.canonicalPath(nodePath(categoryPath)).catch(async (e) => {
    throw (await import("./deferred.js")).searchNearby(e, query);
  });
  const inside = where.join("/") || "root";
  const answer = await summarized(delegate(await store.searcherRequired().searchToolByCategory(query, where, count, cursor ?? null), inside));
  if (answer.error) (answer.error as Json).help_path = inside;
  const results = answer.results as Json[] | undefined;
  if (answer.ok && results?.length) answer.next_action = answer.next_action ?? { op: "describe", args: { tool_id: results[0]?.tool_id } };
  return answer;
}

/** The full spec of a tool by canonical name or alias (a skill's SKILL.md body too). */
export async function describe(store: Store, runs: Runs, name: unknown): Promise<Json> {
  const [toolId, spec] = await store.spec(name);
  const out: Json = Object.fromEntries(DESCRIBED_KEYS.map((k) => [k, clone(spec[k] ?? null)]));
  if (out.type === "tool") out.type = null;
  for (const flag of ["deprecated", "optional"]) out[flag] = out[flag] || null;
  const aliases = isObject(spec.aliases) ? spec.aliases : {};
  out.alias = aliases.anthropic || aliases.openai || toolId.replaceAll(".", "_");
  if (out.when_to_use === out.summary || out.when_to_use === out.description) out.when_to_use = null;
  if (out.description === out.summary) out.description = null;
  const handler = isObject(spec.handler) ? spec.handler : null;
  out.handler = handler ? { type: handler.type ?? null } : null;
  const hints: string[] = [];
  const executable = runs(toolId, handler);
  out.executable = executable;
  const skill = spec.skill;
  if (isObject(skill)) {
    const body = new TextDecoder().decode(await store.fetchBytes(skill.body as Artifact));
    const frontmatter = isObject(skill.frontmatter) ? skill.frontmatter : {};
    out.skill = dropEmpty({
      name: skill.name ?? null,
      level: 2,
      frontmatter: Object.fromEntries(Object.entries(frontmatter).filter(([k]) => k !== "name" && k !== "description").map(([k, v]) => [k, clone(v)])),
      body,
      resources: ((skill.resources as Artifact[]) ?? []).map((r) => dropEmpty({ path: r.path ?? null, media_type: r.media_type ?? null, bytes: (r.ref ?? {}).bytes ?? null })),
    });
    if ((skill.resources as unknown[] | undefined)?.length) hints.push("Read a resource only when the instructions call for it (the resource argument).");
  }
  if (!executable && !hints.length) hints.push("This tool has no handler this reader can run: the host application executes it.");
  if (spec.deprecated) hints.push(deprecationNote(spec));
  const example = (spec.examples ?? []).find(isObject)?.args;
  const next = executable ? { op: "call", args: { tool_id: toolId, args: clone(example || {}) } } : null;
  return ok(dropEmpty(out, ["tool_id", "args_schema", "executable"]), { help_path: toolId, hints, next_action: next });
}

export async function findTool(store: Store, purpose: unknown, limit: unknown): Promise<Json> {
  await checkQuery(purpose, "purpose");
  const count = checkLimit(limit, 5);
  return summarized(delegate(await store.searcherRequired().findTool(purpose, count)));
}

/** A search answer with each hit's one line (issue 35: summary.ts, a chunk loaded by the first answer). */
async function summarized(answer: Json): Promise<Json> {
  return answer.ok ? (await import("./summary.js")).summarized(answer) : answer;
}
