/** The operations of the three dialects (``spec_dialect``, ``namespaced``, ``gateway``), prompts and always-loaded tools.
 * Each takes the store and the caller's raw arguments and returns a result envelope or throws ``ReaderError``. */
import { ReaderError, bad, isError, ok, type Action } from "./errors.js";
import { dropEmpty } from "./protocol.js";
import { closeMatches, cmp, isObject, pyRound, shown, unique, type Json } from "./py.js";
import { examplesText, schemaRules, typeText } from "./schemaText.js";
import { pyQuote } from "./search.js";
import {
  MAX_NAME, ROOT_NAMES, checkBool, checkLimit, checkStr, checkTags, closeNames, decodeCursor, deprecationNote, encodeCursor, nodePath,
  type Artifact, type Group, type Store,
} from "./store.js";

/** Decides whether the host runs a tool: the TypeScript reader runs none itself (``executable`` is the host's answer). */
export type Runs = (toolId: string, handler: Json | null) => boolean;

const HIDDEN_POINTER_KEYS = new Set(["spec", "alias", "aliases", "tokens", "optional"]);
const DESCRIBED_KEYS = [
  "tool_id", "type", "path", "categories", "summary", "description", "args_schema", "result_schema", "examples", "errors", "tags", "kind",
  "optional", "when_to_use", "policy", "annotations", "version", "author", "capabilities", "constraints", "tools", "deprecated",
];
const clone = <T>(value: T): T => (value === undefined ? value : structuredClone(value));
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

function checkCapability(capability: unknown): string | null {
  if (capability === null || capability === undefined) return null;
  if (typeof capability !== "string" || !capability.trim() || capability.length > 200) {
    throw bad(`'capability' must be a capability name such as 'code-analysis', got ${shown(capability)}`);
  }
  return capability.trim().toLowerCase();
}

function hasCapability(pointer: Artifact, capability: string): boolean {
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
  const offset = decodeCursor(cursor);
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
    } else if (filtered) pointers = [...(await store.subtreePointers(where)).values()];
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
  if (tools.length) next = { op: "describe", args: { tool_id: tools[0]?.tool_id } };
  else if (nodes.length) next = { op: "list", args: { path: nodes[0].path.join("/") } };
  else {
    const text = [searched ? (query as string) : "", ...wanted, able ?? "", ...where].filter(Boolean).join(" ");
    next = text ? { op: "search", args: { query: text } } : null;
    hints.push("Nothing here matches; search the whole catalogue by purpose, or browse from the root.");
  }
  const out = dropEmpty({ path: where, title: shard.title ?? "", summary: shard.summary ?? "", tool_count: shard.tool_count ?? 0, nodes, tools, total_tools: total }, ["path", "nodes", "tools"]);
  out.next_cursor = more ? encodeCursor(offset + count) : null;
  return ok(out, { help_path: where.join("/") || "root", hints, next_action: next });
}

export async function searchNodes(store: Store, query: unknown, limit: unknown): Promise<Json> {
  checkStr(query, "query");
  const count = checkLimit(limit, 5);
  const answer = delegate(await store.searcherRequired().searchNodes(query, count));
  if (answer.ok && !(answer.results as unknown[] | undefined)?.length && !(answer.hints as unknown[] | undefined)?.length) {
    answer.hints = [`No category matches ${shown(query, 80)}; search tools by purpose instead, or browse from the root.`];
    answer.next_action = answer.next_action ?? { op: "search", args: { query } };
  }
  return answer;
}

export async function searchToolByCategory(store: Store, query: unknown, categoryPath: unknown, limit: unknown, cursor: unknown): Promise<Json> {
  checkStr(query, "query");
  const count = checkLimit(limit, 5);
  if (cursor !== null && cursor !== undefined && typeof cursor !== "string") throw bad(`cursor ${shown(cursor)} must be a string this reader returned`);
  const where = await store.canonicalPath(nodePath(categoryPath));
  const answer = delegate(await store.searcherRequired().searchToolByCategory(query, where, count, cursor ?? null));
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

// == namespaced dialect ==========================================================================
export async function toolList(store: Store, namespace: unknown, tags: unknown, capability: unknown): Promise<Json> {
  const wanted = checkTags(tags);
  const able = checkCapability(capability);
  let group: string | null = null;
  const namespaces = (store.manifest.namespaces ?? []).map(String);
  if (namespace !== null && namespace !== undefined) {
    group = checkStr(namespace, "namespace").trim().replace(/^\.+|\.+$/g, "");
    if (!namespaces.includes(group.split(".", 1)[0])) throw unknownPath(group, namespaces);
  }
  const pointers = group !== null ? await store.namespacePointers(group.split(".", 1)[0] as string) : await store.allPointers();
  const rows: Json[] = [];
  for (const [toolId, pointer] of pointers) {
    if (group !== null && toolId !== group && !toolId.startsWith(group + ".")) continue;
    if (wanted.length && !wanted.every((t) => (pointer.tags ?? []).map((x: string) => x.toLowerCase()).includes(t))) continue;
    if (able !== null && !hasCapability(pointer, able)) continue;
    rows.push(dropEmpty({ name: toolId, alias: pointer.alias ?? null, type: pointer.type !== "tool" ? (pointer.type ?? null) : null, kind: pointer.kind ?? null, summary: pointer.summary ?? null }));
  }
  if (group !== null && !rows.length && !wanted.length && able === null) {
    const [groups, ops] = await store.namespaceTree(group.split(".", 1)[0]);
    throw unknownPath(group, [...groups.keys(), ...ops.keys()].sort(cmp));
  }
  let next: Action | null = rows.length ? { op: "describe", args: { tool_id: rows[0]?.name } } : null;
  const hints = rows.length ? [] : ["Nothing matches these filters; search by purpose instead."];
  if (!rows.length) next = { op: "search", args: { query: [...wanted, able ?? "", group ?? ""].join(" ").trim() } };
  return ok(dropEmpty({ namespace: group, count: rows.length, tools: rows }, ["count", "tools"]), { help_path: group ?? "root", hints, next_action: next });
}

export async function findTool(store: Store, purpose: unknown, limit: unknown): Promise<Json> {
  checkStr(purpose, "purpose");
  const count = checkLimit(limit, 5);
  return delegate(await store.searcherRequired().findTool(purpose, count));
}

// == gateway dialect =============================================================================
export function unknownPath(text: string, names: string[]): ReaderError {
  const close = closeNames(text, names);
  return new ReaderError("UNKNOWN_PATH", `no group or operation ${shown(text, 120)}`, {
    details: { path: text, suggestions: close },
    hints: [close.length ? `Did you mean ${close.join(", ")}?` : "Search by purpose, or start at the root to see the groups."],
    next_action: close.length ? { op: "help", args: { path: close[0] } } : { op: "search", args: { query: text.replaceAll(".", " ").replaceAll("_", " ") } },
    help_path: "root",
  });
}

export async function toolHelp(store: Store, runs: Runs, path: unknown, format: unknown, includeExamples: unknown, includeSchemas: unknown, query: unknown, limit: unknown): Promise<Json> {
  if (format !== "short" && format !== "full") throw bad(`format must be 'short' or 'full', got ${shown(format)}`);
  const examples = checkBool(includeExamples, "include_examples");
  const schemas = checkBool(includeSchemas, "include_schemas");
  if (path === null || path === undefined) path = "root";
  if (typeof path !== "string" || path.length > MAX_NAME) throw bad(`a help path is a dotted string like 'onto.task', got ${shown(path)}`);
  const text = path.trim().replace(/^\.+|\.+$/g, "").replaceAll("/", ".");
  if (query !== null && query !== undefined) {
    if (typeof query !== "string" || !query.trim() || query.length > 4 * MAX_NAME) throw bad(`'query' must be a non-empty string saying what you need, got ${shown(query)}`);
    return helpSearch(store, ROOT_NAMES.includes(text) ? "" : text, query.trim(), checkLimit(limit, 5));
  }
  if (ROOT_NAMES.includes(text)) return helpRoot(store, format);
  const toolId = await store.resolve(text);
  if (toolId !== null) return helpOp(store, runs, toolId, format, examples, schemas);
  const namespaces = (store.manifest.namespaces ?? []).map(String);
  if (!namespaces.includes(text.split(".", 1)[0])) throw unknownPath(text, namespaces);
  const [groups, ops] = await store.namespaceTree(text.split(".", 1)[0]);
  if (!groups.has(text)) throw unknownPath(text, [...groups.keys(), ...ops.keys()].sort(cmp));
  return helpGroup(store, text, groups, ops, format);
}

function commonPath(pointers: Artifact[]): string[] {
  const paths: string[][] = pointers.filter(isObject).map((p: Artifact) => [...(p.path ?? [])]);
  if (!paths.length) return [];
  let common = paths[0] as string[];
  for (const other of paths.slice(1)) {
    let size = 0;
    while (size < Math.min(common.length, other.length) && common[size] === other[size]) size++;
    common = common.slice(0, size);
  }
  return common;
}

async function nodeSummary(store: Store, pointers: Artifact[]): Promise<string> {
  const common = commonPath(pointers);
  let root: Artifact;
  try {
    if (common.length) {
      const shard = await store.node(common);
      const title = String(shard.title || common[common.length - 1]);
      const summary = String(shard.summary || "");
      return summary ? `${title}: ${summary}` : title;
    }
    root = await store.node([]);
  } catch (err) {
    if (err instanceof ReaderError) return "";
    throw err;
  }
  const titles = new Map<string, string>((root.children ?? []).map((c: Artifact) => [c.name, String(c.title || c.name)]));
  const tops = unique(pointers.filter((p) => p.path?.length).map((p) => titles.get(p.path[0]) ?? p.path[0]));
  return tops.length ? "Spans " + tops.slice(0, 4).join(", ") : "";
}

async function namespaceHeads(store: Store, namespaces: string[]): Promise<Map<string, [Artifact[], number]>> {
  const index = store.manifest.namespace_index;
  const refs = isObject(index) ? (await store.fetchJson(index)).namespaces : null;
  const out = new Map<string, [Artifact[], number]>();
  if (!isObject(refs) || store.pointersLoaded) {
    const [groups] = await store.namespaceTree();
    const everything = await store.allPointers();
    for (const n of namespaces) out.set(n, [[...everything].filter(([i]) => i.split(".", 1)[0] === n).map(([, p]) => p), groups.get(n)?.count ?? 0]);
    return out;
  }
  await store.prefetch(namespaces.filter((n) => isObject(refs[n])).map((n) => refs[n]));
  for (const name of namespaces) {
    const shard = isObject(refs[name]) ? await store.fetchJson(refs[name]) : {};
    const tools = (shard.tools ?? []).filter(isObject);
    out.set(name, [tools, Number(shard.tool_count ?? tools.length)]);
  }
  return out;
}

async function helpRoot(store: Store, format: string): Promise<Json> {
  const namespaces: string[] = (store.manifest.namespaces ?? []).map(String);
  const heads = await namespaceHeads(store, namespaces);
  const groups: Json[] = [];
  for (const n of namespaces) groups.push(dropEmpty({ name: n, summary: await nodeSummary(store, heads.get(n)?.[0] ?? []), op_count: heads.get(n)?.[1] }));
  const out: Json = {
    path: "root", level: "root", title: store.manifest.title ?? "", summary: store.manifest.summary ?? "", groups,
    usage: "tool_help(path) for a group or an operation; tool_help(query) to search by purpose; tool_exec(op, args) to run an operation.",
  };
  if (format === "full") Object.assign(out, { registry_version: store.registry_version, counts: store.manifest.counts ?? {} });
  return ok(dropEmpty(out), { help_path: "root", next_action: namespaces.length ? { op: "help", args: { path: namespaces[0] } } : null });
}

async function helpGroup(store: Store, group: string, groups: Map<string, Group>, ops: Map<string, Artifact>, format: string): Promise<Json> {
  const entry = groups.get(group) as Group;
  const opLine = (toolId: string): Json => {
    const pointer = ops.get(toolId);
    const line: Json = { op: toolId, summary: pointer.summary ?? null, kind: pointer.kind ?? null };
    if (format === "full") Object.assign(line, { type: pointer.type !== "tool" ? (pointer.type ?? null) : null, tags: [...(pointer.tags ?? [])], deprecated: pointer.deprecated || null });
    return dropEmpty(line);
  };
  const below = (prefix: string) => [...ops].filter(([i]) => i.startsWith(prefix + ".")).map(([, p]) => p);
  const subgroups: Json[] = [];
  for (const g of [...entry.groups].sort(cmp)) {
    const sub = groups.get(g) as Group;
    subgroups.push(dropEmpty({ path: g, summary: await nodeSummary(store, below(g)), op_count: sub.count, sample_ops: sub.ops.map((i) => i.split(".").pop() as string).sort(cmp).slice(0, 8) }));
  }
  const operations = [...entry.ops].sort(cmp).map(opLine);
  const out = { path: group, level: "group", summary: await nodeSummary(store, below(group)), op_count: entry.count, groups: subgroups, operations };
  const first = operations.length ? operations[0]?.op : subgroups[0]?.path;
  return ok(dropEmpty(out), { help_path: group, next_action: { op: "help", args: { path: first } } });
}

async function helpSearch(store: Store, group: string, query: string, limit: number): Promise<Json> {
  const found = await store.searcherRequired().findTool(query, group ? 50 : limit);
  if (isError(found)) {
    const e = found.error as Json;
    throw new ReaderError(String(e.code), String(e.message), { details: e.details as Json, hints: e.hints as string[], help_path: e.help_path as string });
  }
  let matches = ((found.matches as Json[]) ?? []).filter((m) => isObject(m) && typeof m.name === "string");
  if (group) matches = matches.filter((m) => (m.name as string).startsWith(group + "."));
  const operations = matches.slice(0, limit).map((m) => dropEmpty({ op: m.name, summary: m.summary ?? null, relevance: m.relevance ?? null }));
  const out = { path: group || "root", level: "search", query, operations };
  if (!operations.length) {
    const where = group ? ` under ${group}` : "";
    return ok(out, { help_path: group || "root", hints: [`No operation${where} matches ${pyQuote(query)}; try other words, or browse the groups.`], next_action: { op: "help", args: { path: group || "root" } } });
  }
  return ok(out, { help_path: group || "root", next_action: { op: "help", args: { path: operations[0]?.op } } });
}

function arg(name: string, raw: unknown, root: Json, required: boolean): Json {
  const sub = isObject(raw) ? raw : {};
  const out: Json = { name, type: typeText(sub, root) };
  if (required) out.required = true;
  const rules = schemaRules(sub, root);
  if (rules.length) out.rules = rules.join("; ");
  if (sub.description) out.description = sub.description;
  const examples = examplesText(sub);
  if (examples.length) out.examples = examples;
  return out;
}

async function helpOp(store: Store, runs: Runs, toolId: string, format: string, examples: boolean, schemas: boolean): Promise<Json> {
  const spec = (await store.spec(toolId))[1];
  const schema = spec.args_schema || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const args = Object.entries(props).map(([name, raw]) => arg(name, raw, schema, required.has(name)));
  const usageArgs = args.filter((a) => a.required).map((a) => `"${a.name}": <${a.type}>`).join(", ");
  const policy = spec.policy || {};
  let notes = unique([spec.when_to_use || "", ...(policy.edge_cases ?? [])]).filter(Boolean) as string[];
  if (notes.length && (notes[0] === spec.summary || notes[0] === spec.description)) notes = notes.slice(1);
  if (spec.deprecated) notes.unshift(deprecationNote(spec));
  let out: Json = {
    path: toolId, level: "operation", op: toolId, type: spec.type !== "tool" ? (spec.type ?? null) : null, summary: spec.summary ?? null, kind: spec.kind ?? null,
    usage: `tool_exec(op="${toolId}", args={${usageArgs}})`, args, notes,
    policy: format === "full" ? clone(policy) : { dont: [...(policy.dont ?? [])] },
  };
  if (examples) out.examples = clone(spec.examples ?? []);
  if (format === "full") {
    Object.assign(out, { description: spec.description !== spec.summary ? (spec.description ?? null) : null, errors: clone(spec.errors ?? []), tags: [...(spec.tags ?? [])] });
    if (isObject(spec.skill)) out.resources = ((spec.skill.resources as Artifact[]) ?? []).map((r) => r.path ?? null);
  }
  if (schemas) Object.assign(out, { args_schema: clone(schema), result_schema: clone(spec.result_schema ?? null) });
  out = dropEmpty(out, ["args"]);
  if (isObject(out.policy)) {
    out.policy = dropEmpty(out.policy);
    if (!Object.keys(out.policy as Json).length) delete out.policy;
  }
  const example = (spec.examples ?? []).find(isObject)?.args;
  const canRun = runs(toolId, isObject(spec.handler) ? spec.handler : null);
  return ok(out, {
    help_path: toolId,
    hints: canRun ? [] : ["This reader cannot run this operation here: the host application runs it."],
    next_action: canRun ? { op: "call", args: { tool_id: toolId, args: clone(example || {}) } } : null,
  });
}

// == prompts and always-loaded tools =============================================================
export async function namedSection(store: Store, name: unknown): Promise<Json> {
  const entry = store.manifest.prompts;
  if (!isObject(entry) || !isObject(entry.index)) {
    throw new ReaderError("UNAVAILABLE", "this build has no prompt sections (manifest.prompts)", { hints: ["Rebuild the catalogue with a toolcat that writes the prompts stage."] });
  }
  const index = await store.fetchJson(entry.index);
  if (!isObject(index) || !isObject(index.sections)) throw new ReaderError("INTEGRITY", "the prompts index has no 'sections' table");
  const sections = index.sections as Record<string, Artifact>;
  const known = Object.keys(sections).sort(cmp);
  if (name === null || name === undefined) return { ok: true, sections: known.map((n) => ({ name: n, media_type: sections[n].media_type ?? null, tokens: sections[n].tokens ?? null })) };
  if (typeof name !== "string" || !name.trim()) {
    throw new ReaderError("BAD_REQUEST", `a prompt section name must be a non-empty string, got ${pyTypeName(name)}`, {
      details: { sections: known },
      hints: ["Pass one of the names in details.sections, e.g. 'system.gateway'."],
    });
  }
  const wanted = name.trim();
  if (!Object.hasOwn(sections, wanted)) {
    const close = closeMatches(wanted, known, 3, 0.5);
    const hints = close.length ? [`Did you mean ${close.join(", ")}?`] : [];
    hints.push("Known sections: " + known.join(", "));
    throw new ReaderError("NOT_FOUND", `no prompt section named ${pyQuote(Array.from(wanted).slice(0, 120).join(""))}`, { details: { name: Array.from(wanted).slice(0, 120).join(""), sections: known }, hints });
  }
  const section = sections[wanted];
  const text = new TextDecoder().decode(await store.fetchBytes(section.ref));
  return { ok: true, name: wanted, media_type: section.media_type ?? null, tokens: section.tokens ?? null, text };
}

function pyTypeName(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "string") return "str";
  return Array.isArray(value) ? "list" : isObject(value) ? "dict" : "NoneType";
}

/** Lean specs of the tools marked ``always_load: true``, by tool_id; an unreadable one is left out. */
export async function alwaysLoaded(store: Store): Promise<Json[]> {
  const entries = store.manifest.always_load;
  const out: Json[] = [];
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (!isObject(entry) || typeof entry.tool_id !== "string") continue;
    let spec: Artifact;
    try {
      spec = isObject(entry.ref) ? await store.fetchJson(entry.ref) : (await store.spec(entry.tool_id))[1];
    } catch (err) {
      if (err instanceof ReaderError) continue;
      throw err;
    }
    if (!isObject(spec)) continue;
    out.push(dropEmpty({
      tool_id: entry.tool_id,
      alias: String(entry.alias || entry.tool_id.replaceAll(".", "_")),
      summary: spec.summary ?? null,
      description: spec.description !== spec.summary ? (spec.description ?? null) : null,
      args_schema: isObject(spec.args_schema) ? spec.args_schema : { type: "object" },
      kind: spec.kind ?? null,
      annotations: spec.annotations ?? null,
    }));
  }
  return out.sort((a, b) => cmp(a.tool_id as string, b.tool_id as string));
}
