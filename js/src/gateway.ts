/** The gateway dialect (``toolcat.reader.gateway``): ``tool_help`` over the catalogue's namespaces, groups and
 * operations (its protocol, next_actions as ``tool_help``/``tool_exec`` calls, is in protocol.ts). Imported by
 * full.ts only, so that the main entry does not carry it. */
import { ReaderError, bad, dropEmpty, isError, ok } from "./errors.js";
import { clone, type Runs } from "./ops.js";
import { cmp, isObject, shown, unique, type Json } from "./py.js";
import { examplesText, resolve, schemaRules, typeText } from "./schemaText.js";
import { pyQuote } from "./quote.js";
import { closeNames } from "./failures.js";
import { MAX_NAME, ROOT_NAMES, checkBool, checkLimit, checkQuery, deprecationNote, type Artifact, type Store } from "./store.js";
import { allPointers, namespaceTree, type Group } from "./namespaces.js";

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
    const checked = await checkQuery(query); // a long query is cut (the searcher's answer says so)
    return helpSearch(store, ROOT_NAMES.includes(text) ? "" : text, checked, checkLimit(limit, 5));
  }
  if (ROOT_NAMES.includes(text)) return helpRoot(store, format);
  const toolId = await store.resolve(text);
  if (toolId !== null) return helpOp(store, runs, toolId, format, examples, schemas);
  const namespaces = (store.manifest.namespaces ?? []).map(String);
  if (!namespaces.includes(text.split(".", 1)[0])) throw unknownPath(text, namespaces);
  const [groups, ops] = await namespaceTree(store, text.split(".", 1)[0]);
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
  if (!isObject(refs) || store.pointers !== null) {
    const [groups] = await namespaceTree(store);
    const everything = await allPointers(store);
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
  const { withSummaries } = await import("./summary.js"); // each hit's one line, capped (issue 35)
  const operations = withSummaries(matches.slice(0, limit), "name").map((m) => dropEmpty({ op: m.name, summary: m.summary ?? null, relevance: m.relevance ?? null }));
  const out = { path: group || "root", level: "search", query, operations };
  if (!operations.length) {
    const where = group ? ` under ${group}` : "";
    return ok(out, { help_path: group || "root", hints: [`No operation${where} matches ${pyQuote(query)}; try other words, or browse the groups.`], next_action: { op: "help", args: { path: group || "root" } } });
  }
  const hints = ((found.hints as unknown[]) ?? []).filter((h) => typeof h === "string") as string[]; // a cut query's note, a weak answer's
  const weak = found.weak === true; // no operation matches the whole request: say so, and browse instead
  return ok(weak ? { ...out, weak } : out, { help_path: group || "root", hints, next_action: { op: "help", args: { path: weak ? group || "root" : operations[0]?.op } } });
}

function arg(name: string, raw: unknown, root: Json, required: boolean): Json {
  const sub = isObject(raw) ? raw : {};
  const out: Json = { name, type: typeText(sub, root) };
  if (required) out.required = true;
  const node = resolve(sub, root);
  if (Object.hasOwn(node, "default")) out.default = clone(node.default); // 001's args: name, type, required, default
  const rules = schemaRules(sub, root).filter((r) => !r.startsWith("default: "));
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
