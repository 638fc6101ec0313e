/** ``toolcat-reader/full``: the ``Catalog`` with every operation of the Python reader. Beside the main entry's core
 * loop: the gateway dialect's ``toolHelp``, the namespaced ``toolList``, named prompt sections, the always-loaded
 * tools and each dialect's tool definitions. A separate entry so that the main one stays small. */
import { Catalog as CoreCatalog } from "./catalog.js";
import { ReaderError, dropEmpty, ok, type Action } from "./errors.js";
import { toolHelp, unknownPath } from "./gateway.js";
import { checkCapability, hasCapability } from "./ops.js";
import { allPointers, namespacePointers, namespaceTree } from "./namespaces.js";
import type { Dialect } from "./protocol.js";
import { closeMatches } from "./difflib.js";
import { cmp, isObject, type Json } from "./py.js";
import { pyQuote } from "./quote.js";
import { checkStr, checkTags, type Artifact, type Store } from "./store.js";

export * from "./index.js";

export type Provider = "openai" | "anthropic" | "gemini";

export class Catalog extends CoreCatalog {
  // == gateway dialect =====================================================================
  toolHelp(options: { path?: unknown; format?: unknown; includeExamples?: unknown; includeSchemas?: unknown; query?: unknown; limit?: unknown } = {}): Promise<Json> {
    const { path = "root", format = "short", includeExamples = true, includeSchemas = false, query = null, limit = null } = options;
    return this.run(() => toolHelp(this.store, this.runs, path, format, includeExamples, includeSchemas, query, limit), "gateway");
  }

  // == namespaced dialect ==================================================================
  toolList(options: { namespace?: unknown; tags?: unknown; capability?: unknown } = {}): Promise<Json> {
    const { namespace = null, tags = null, capability = null } = options;
    return this.run(() => toolList(this.store, namespace, tags, capability), "namespaced");
  }

  // == prompts, always-loaded tools, dialect tool definitions ===============================
  /** A named prompt section (``system.gateway``, ``tools.short`` ...) as text; without a name, the list. */
  prompt(name: unknown = null): Promise<Json> {
    return this.run(() => namedSection(this.store, name), null);
  }

  /** Lean specs of the tools marked ``always_load: true``, for a host to expose beside the discovery tools. */
  alwaysLoaded(): Promise<Json[]> {
    return alwaysLoaded(this.store);
  }

  /** A dialect's discovery tools in a provider's format, as the build wrote them (``providers/<p>/<dialect>``), then
   * the pinned (always_load) tools when ``pinned`` (default: the catalogue's ``discovery.pinned``): what an MCP server
   * lists and ``toolcat export --dialect`` writes. */
  async dialectTools(dialect: Dialect, provider: Provider = "openai", pinned?: boolean): Promise<Json[]> {
    const providers = this.store.manifest.providers;
    const ref = isObject(providers) && isObject(providers[provider]) && isObject((providers[provider] as Json).dialects) ? ((providers[provider] as Json).dialects as Json)[dialect] : null;
    if (!isObject(ref)) {
      throw new ReaderError("UNAVAILABLE", `this build has no ${provider} definitions of the ${dialect} dialect (manifest.providers)`, { hints: ["Rebuild the catalogue with a toolcat that writes the exports stage."] });
    }
    const artifact = await this.store.fetchJson(ref);
    const tools: Json[] = Array.isArray(artifact.tools) ? artifact.tools : [];
    const discovery = this.store.manifest.discovery;
    const pin = pinned ?? (isObject(discovery) && discovery.pinned === true);
    const count = isObject(artifact.counts) ? artifact.counts.discovery : undefined;
    if (pin || typeof count !== "number") return tools;
    const only = tools.length === 1 ? tools[0] : null; // Gemini: one {functionDeclarations: [...]}
    if (isObject(only) && Array.isArray(only.functionDeclarations)) return [{ ...only, functionDeclarations: only.functionDeclarations.slice(0, count) }];
    return tools.slice(0, count);
  }
}

export async function toolList(store: Store, namespace: unknown, tags: unknown, capability: unknown): Promise<Json> {
  const wanted = checkTags(tags);
  const able = checkCapability(capability);
  let group: string | null = null;
  const namespaces = (store.manifest.namespaces ?? []).map(String);
  if (namespace !== null && namespace !== undefined) {
    group = checkStr(namespace, "namespace").trim().replace(/^\.+|\.+$/g, "");
    if (!namespaces.includes(group.split(".", 1)[0])) throw unknownPath(group, namespaces);
  }
  const pointers = group !== null ? await namespacePointers(store, group.split(".", 1)[0] as string) : await allPointers(store);
  const rows: Json[] = [];
  for (const [toolId, pointer] of pointers) {
    if (group !== null && toolId !== group && !toolId.startsWith(group + ".")) continue;
    if (wanted.length && !wanted.every((t) => (pointer.tags ?? []).map((x: string) => x.toLowerCase()).includes(t))) continue;
    if (able !== null && !hasCapability(pointer, able)) continue;
    rows.push(dropEmpty({ name: toolId, alias: pointer.alias ?? null, type: pointer.type !== "tool" ? (pointer.type ?? null) : null, kind: pointer.kind ?? null, summary: pointer.summary ?? null }));
  }
  if (group !== null && !rows.length && !wanted.length && able === null) {
    const [groups, ops] = await namespaceTree(store, group.split(".", 1)[0]);
    throw unknownPath(group, [...groups.keys(), ...ops.keys()].sort(cmp));
  }
  let next: Action | null = rows.length ? { op: "describe", args: { tool_id: rows[0]?.name } } : null;
  const hints = rows.length ? [] : ["Nothing matches these filters; search by purpose instead."];
  if (!rows.length) next = { op: "search", args: { query: [...wanted, able ?? "", group ?? ""].join(" ").trim() } };
  return ok(dropEmpty({ namespace: group, count: rows.length, tools: rows }, ["count", "tools"]), { help_path: group ?? "root", hints, next_action: next });
}

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
