/** The catalogue's store: the entry and manifest, verified files in memory, lookups and node walks (``toolcat.reader.store``). */
import { ReaderError, bad } from "./errors.js";
import { isObject, shown, unique, type Json } from "./py.js";
import { lookupBucket } from "./sha256.js";
import { HttpSource, checkRef, verify, type PendingRef, type Ref } from "./source.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Artifact = any; // a verified, shape-checked JSON artifact (docs/format.md)

export const SUPPORTED_FORMAT_VERSION = 1;
export const MAX_NAME = 300;
export const SUGGEST_WALK_LIMIT = 2000;
const decoder = new TextDecoder("utf-8", { fatal: false });
/** The messages of failures and failed lookups, loaded on the first one. */
const failures = () => import("./deferred.js");

type Shape = Record<string, [string, string | null]>;
const SHAPES: Record<string, Shape> = {
  catalog: { manifest: ["object", null], registry_version: ["string", null], versions: ["array", "object"] },
  manifest: {
    root: ["object", null], lookup: ["object", null], namespaces: ["array", "string"], namespace_index: ["object", null],
    index: ["object", null], prompts: ["object", null], counts: ["object", null],
  },
  node: { children: ["array", "object"], tools: ["array", "object"], pages: ["array", "object"], path: ["array", "string"] },
  namespace_index: { namespaces: ["object", "object"] },
  namespace: { tools: ["array", "object"], pages: ["array", "object"] },
  lookup: { entries: ["object", "object"], bucket: ["integer", null], buckets: ["integer", null] },
  tool: {
    tool_id: ["string", null], args_schema: ["object", null], path: ["array", "string"], tags: ["array", "string"],
    examples: ["array", null], handler: ["object", null], policy: ["object", null], aliases: ["object", null],
  },
  index_meta: { analyzer: ["object", null], tools: ["object", null], nodes: ["object", null], score: ["object", null] },
  index_terms: { terms: ["object", "object"] },
  index_docs: { docs: ["array", "object"], first: ["integer", null] },
  index_delta_docs: { docs: ["array", "object"], ids: ["array", "integer"] },
  index_pages: { folder: ["string", null], prefix: ["string", null], first: ["integer", null], files: ["array", "array"] },
  prompts: { sections: ["object", null], snippets: ["object", null], focused: ["object", null] },
  prompt_snippets: { entries: ["object", null] },
  aliases: { to_alias: ["object", "string"], to_id: ["object", "string"] },
};
const NULLABLE = new Set(["tool.handler", "tool.policy", "tool.aliases", "tool.examples", "tool.tags", "manifest.index", "manifest.prompts", "manifest.namespace_index", "manifest.lookup", "manifest.counts"]);

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "float";
  return typeof value === "object" ? "object" : typeof value === "boolean" ? "bool" : typeof value === "string" ? "string" : typeof value;
}

/** INTEGRITY unless ``value`` is an object whose known top-level fields have their types (``toolcat.reader.shapes``). */
export function checkShape(path: string, value: unknown): void {
  const hint = "The host serves files a toolcat build did not write; rebuild and republish the catalogue.";
  if (!isObject(value)) {
    const kind = kindOf(value).replace("integer", "int").replace("string", "str");
    throw new ReaderError("INTEGRITY", `${path} is not what a build writes: a JSON ${kind} where every artifact is an object`, { details: { path }, hints: [hint] });
  }
  const kind = value.artifact;
  const shape = typeof kind === "string" ? SHAPES[kind] : undefined;
  for (const [field, [want, element]] of Object.entries(shape ?? {})) {
    if (!(field in value)) continue;
    const got = value[field];
    if (got === null && NULLABLE.has(`${kind}.${field}`)) continue;
    const items = Array.isArray(got) ? got : isObject(got) ? Object.values(got) : [];
    if (kindOf(got) !== want || (element !== null && !items.every((x) => kindOf(x) === element))) {
      throw new ReaderError("INTEGRITY", `${path}: field '${field}' of this ${kind} artifact has the wrong type`, { details: { path, field }, hints: [hint] });
    }
  }
}

/** ``str.casefold`` for the names a catalogue uses. */
const fold = (text: string) => text.toLowerCase();

export function childName(asked: string, children: Map<string, Artifact>): string | null {
  if (children.has(asked)) return asked;
  const folded = fold(asked);
  for (const [name, child] of children) if (fold(name) === folded || fold(String(child.title ?? "")) === folded) return name;
  return null;
}

export function deprecationNote(spec: Artifact): string {
  const value = spec.deprecated;
  if (typeof value === "string" && value.trim()) return `${spec.tool_id} is deprecated: ${value}`;
  return `${spec.tool_id} is deprecated; search for its replacement before relying on it`;
}


/** One published catalogue's files, read through ``source`` at a registry_version (or a pinned manifest). */
export class Store {
  entry: Artifact = {};
  manifest: Artifact = {};
  registry_version = "";
  private json = new Map<string, Promise<unknown>>();
  private pending = new Map<string, Uint8Array>();
  private prefetchErrors = new Map<string, ReaderError>();
  private nodes = new Map<string, Artifact>();
  /** Every pointer by tool_id, once a walk of the whole tree loaded them (namespaces.ts). */
  pointers: Map<string, Artifact> | null = null;
  searcherInstance: unknown = null;

  constructor(readonly source: HttpSource, readonly pinned: string | null, readonly pin: string | null) {}

  // -- the entry and the manifest ------------------------------------------------------------
  async readEntry(): Promise<Artifact> {
    const raw = await this.source.readEntry();
    const location = this.source.location;
    let entry: unknown;
    try {
      entry = JSON.parse(decoder.decode(raw));
    } catch (err) {
      throw (await failures()).notAnEntry(`${location}: catalog.json is not valid JSON (${(err as Error).message})`);
    }
    if (!isObject(entry) || entry.artifact !== "catalog" || entry.format !== "toolcat") throw (await failures()).notAnEntry(`${location}: catalog.json is not a toolcat entry point`);
    if (entry.format_version !== SUPPORTED_FORMAT_VERSION) throw (await failures()).formatVersion(location, entry.format_version);
    checkShape("catalog.json", entry);
    return entry;
  }

  private async manifestRef(entry: Artifact): Promise<[string, Artifact]> {
    const versions: [string, Artifact][] = (entry.versions ?? []).filter(isObject).map((v: Artifact) => [String(v.registry_version), v.manifest ?? {}]);
    let candidates: [string, Artifact][];
    if (this.pinned === null) candidates = [[String(entry.registry_version), entry.manifest ?? {}], ...versions];
    else {
      candidates = versions.filter(([v]) => v === this.pinned);
      if (!candidates.length) throw (await failures()).versionNotPublished(this.pinned, this.source.location, versions.map(([v]) => v));
    }
    if (this.pin === null) return candidates[0] as [string, Artifact];
    for (const [version, ref] of candidates) if (isObject(ref) && ref.sha256 === this.pin) return [version, ref];
    const first = candidates[0] as [string, Artifact];
    throw (await failures()).pinMismatch(this.source.location, this.pin, this.pinned, first[0], isObject(first[1]) ? (first[1].sha256 ?? null) : null);
  }

  async load(entry: Artifact): Promise<void> {
    const [version, ref] = await this.manifestRef(entry);
    const manifest = await this.fetchJson(ref);
    if (!isObject(manifest) || manifest.artifact !== "manifest" || manifest.format_version !== SUPPORTED_FORMAT_VERSION || manifest.registry_version !== version) {
      throw (await failures()).notTheManifest(manifest, version);
    }
    this.entry = entry;
    this.manifest = manifest;
    this.registry_version = version;
    this.nodes = new Map();
    this.pointers = null;
    this.searcherInstance = null;
  }

  async refresh(): Promise<boolean> {
    const entry = await this.readEntry();
    if (this.pinned !== null || this.pin !== null || entry.registry_version === this.registry_version) {
      this.entry = entry;
      return false;
    }
    await this.load(entry);
    return true;
  }

  // -- fetching -------------------------------------------------------------------------------
  /** The bytes a ref points to, verified against its sha256. */
  async fetchBytes(ref: Ref): Promise<Uint8Array> {
    return this.source.fetch(ref);
  }

  /** The parsed JSON a ref points to (verified, kept in memory by sha256; treat it as read-only). */
  fetchJson(ref: Ref | Artifact): Promise<Artifact> {
    const digest = isObject(ref) ? ref.sha256 : undefined;
    if (typeof digest === "string") {
      const known = this.json.get(digest);
      if (known) return known;
      const failed = this.prefetchErrors.get(digest);
      if (failed) {
        this.prefetchErrors.delete(digest);
        return Promise.reject(failed);
      }
    }
    const promise = this.read(ref);
    if (typeof digest === "string") {
      this.json.set(digest, promise);
      promise.catch(() => this.json.delete(digest)); // a failure is reported once; the next read fetches again
    }
    return promise;
  }

  private async read(ref: Artifact): Promise<Artifact> {
    const pendingBytes = isObject(ref) ? this.pending.get(String(ref.path)) : undefined;
    if (pendingBytes !== undefined) {
      this.pending.delete(String(ref.path));
      const [path, digest, size] = checkRef(ref);
      return this.parse(ref, await verify(pendingBytes, path, digest, size, path));
    }
    return this.parse(ref, await this.source.fetch(ref));
  }

  private parse(ref: Artifact, data: Uint8Array): Artifact {
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(data));
    } catch (err) {
      throw new ReaderError("INTEGRITY", `${ref.path} is not valid JSON: ${(err as Error).message}`);
    }
    checkShape(String(ref.path), value);
    return value;
  }

  /** Several JSON files at once (one round trip); an error is kept for the next ``fetchJson`` of that file. */
  async prefetch(refs: (Ref | PendingRef | Artifact)[]): Promise<void> {
    if (!this.source.concurrent) return;
    const wanted = [...new Map(refs.filter((r) => isObject(r) && typeof r.sha256 === "string" && !this.json.has(r.sha256)).map((r) => [r.sha256, r])).values()];
    // a file fetched by path once a round, and not again while its bytes wait for their check (``Searcher._prefetch``)
    const pending = [...new Map(refs.filter((r) => isObject(r) && "max_bytes" in r && !("sha256" in r) && !this.pending.has(String(r.path))).map((r) => [r.path, r])).values()] as PendingRef[];
    if (wanted.length + pending.length < 2) return;
    const results = await this.source.fetchMany([...wanted, ...pending]);
    pending.forEach((r, i) => {
      const data = results[wanted.length + i];
      if (data instanceof Uint8Array) this.pending.set(String(r.path), data);
    });
    wanted.forEach((ref, i) => {
      const data = results[i] as Uint8Array | ReaderError;
      const digest = String(ref.sha256);
      try {
        if (data instanceof ReaderError) throw data;
        this.json.set(digest, Promise.resolve(this.parse(ref, data)));
        this.prefetchErrors.delete(digest);
      } catch (err) {
        if (!(err instanceof ReaderError)) throw err;
        this.prefetchErrors.set(digest, err);
      }
    });
  }

  stats(): Json {
    return { ...this.source.stats, memory_files: this.json.size };
  }

  // -- lookups ---------------------------------------------------------------------------------
  private async lookup(name: string): Promise<Artifact | null> {
    const lookup = this.manifest.lookup ?? {};
    const refs = lookup.refs ?? [];
    const count = lookup.buckets ?? 0;
    if (!refs.length || !Number.isInteger(count) || count < 1) return null;
    const entries = (await this.fetchJson(refs[await lookupBucket(name, count)])).entries ?? {};
    const found = Object.hasOwn(entries, name) ? entries[name] : null;
    return isObject(found) ? found : null;
  }

  private async find(name: string): Promise<Artifact | null> {
    for (const candidate of unique([name, name.trim(), name.trim().toLowerCase()])) {
      const found = await this.lookup(candidate);
      if (found !== null) return found;
    }
    return null;
  }

  async resolve(name: unknown): Promise<string | null> {
    if (typeof name !== "string" || !name.trim() || name.length > MAX_NAME) return null;
    const found = await this.find(name);
    return found !== null ? String(found.tool_id) : null;
  }

  /** ``[tool_id, spec]`` for a name, or TOOL_NOT_FOUND with suggestions. */
  async spec(name: unknown, helpPath = "root"): Promise<[string, Artifact]> {
    if (typeof name !== "string" || !name.trim() || name.length > MAX_NAME) {
      throw bad(`a tool name must be a non-empty string, got ${shown(name)}`, { help_path: helpPath });
    }
    const found = await this.find(name);
    if (found === null) throw await (await failures()).toolNotFound(this, name);
    return [String(found.tool_id), await this.fetchJson(found.spec)];
  }

  // -- the search index -----------------------------------------------------------------------
  searcherFactory: ((store: Store) => import("./search.js").Searcher) | null = null;

  searcher(): import("./search.js").Searcher | null {
    if (this.searcherInstance === null && "index" in this.manifest && this.searcherFactory) this.searcherInstance = this.searcherFactory(this);
    return this.searcherInstance as import("./search.js").Searcher | null;
  }

  searcherRequired(): import("./search.js").Searcher {
    const searcher = this.searcher();
    if (searcher === null) {
      throw new ReaderError("UNAVAILABLE", "search is unavailable: this catalogue was built without a search index", {
        hints: ["Browse with list()/tool_help() instead, or rebuild with the search stage."],
        next_action: { op: "list", args: { path: "" } },
      });
    }
    return searcher;
  }

  // -- node shards ------------------------------------------------------------------------------
  async node(path: string[]): Promise<Artifact> {
    const key = JSON.stringify(path);
    const known = this.nodes.get(key);
    if (known) return known;
    let shard = await this.fetchJson(this.manifest.root);
    const walked: string[] = [];
    for (const asked of path) {
      const children = new Map<string, Artifact>((shard.children ?? []).map((c: Artifact) => [c.name, c]));
      const name = childName(asked, children);
      if (name === null) throw (await failures()).noChild(path, walked, asked, [...children.keys()]);
      walked.push(name);
      const walkedKey = JSON.stringify(walked);
      shard = this.nodes.get(walkedKey) ?? (await this.fetchJson(children.get(name).ref));
      this.nodes.set(walkedKey, shard);
    }
    if (!isObject(shard)) throw new ReaderError("INTEGRITY", `node shard of ${path.join("/") || "root"} is not an object`); // checkShape lets no such shard in
    this.nodes.set(key, shard);
    return shard;
  }

  async canonicalPath(path: string[]): Promise<string[]> {
    return path.length ? [...((await this.node(path)).path ?? [])] : [];
  }




  /** The pointers of a paged shard (node or namespace): its first page, then the others (fetched together). */
  async nodeTools(shard: Artifact): Promise<Artifact[]> {
    await this.prefetch(shard.pages ?? []);
    const tools = [...(shard.tools ?? [])];
    for (const ref of shard.pages ?? []) tools.push(...((await this.fetchJson(ref)).tools ?? []));
    return tools;
  }







}

// -- argument checks shared by the operations (``toolcat.reader.checks``) ----------------------------
export const MAX_LIMIT = 50;
export const MAX_PATH_DEPTH = 32;
export const ROOT_NAMES = ["", "root", "/", "."];

/** ``["a","b"]``, ``"a/b"``, ``"a.b"`` → ``["a", "b"]``; ``null``/``""``/``"root"`` → the root. */
export function nodePath(path: unknown): string[] {
  if (path === null || path === undefined) return [];
  let parts: string[];
  if (typeof path === "string") {
    const text = path.trim();
    if (ROOT_NAMES.includes(text)) return [];
    parts = text.replace(/^\/+|\/+$/g, "").replaceAll("/", ".").split(".");
  } else if (Array.isArray(path) && path.every((p) => typeof p === "string")) parts = [...path];
  else throw bad(`a path is a list of names or a 'a/b' string, got ${shown(path)}`);
  if (parts.some((p) => !p) || parts.length > MAX_PATH_DEPTH) throw bad(`path ${shown(path)} has an empty segment or more than ${MAX_PATH_DEPTH} names`);
  return parts;
}

export function checkLimit(limit: unknown, fallback: number): number {
  if (limit === null || limit === undefined) return fallback;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
    throw bad(`'limit' must be an integer from 1 to ${MAX_LIMIT}, got ${shown(limit, 40)}`, { hints: [`Use a limit between 1 and ${MAX_LIMIT}.`] });
  }
  return Math.min(MAX_LIMIT, limit);
}

export function checkStr(value: unknown, name: string, allowEmpty = false, helpPath = "root"): string {
  if (typeof value !== "string" || (!allowEmpty && !value.trim()) || value.length > 4 * MAX_NAME) {
    throw bad(`'${name}' must be a non-empty string (at most ${4 * MAX_NAME} characters), got ${shown(value)}`, { help_path: helpPath });
  }
  return value;
}

/** A query is ranked on at most this many characters; a longer one is cut (with a note): failures.ts ``checkLongQuery``. */
export const MAX_QUERY_CHARS = 4 * MAX_NAME;

/** A search query as the ranking takes it (``checks.check_query``): a non-blank string, stripped, at most MAX_QUERY_CHARS. */
export async function checkQuery(value: unknown, name = "query"): Promise<string> {
  return typeof value === "string" && value.trim() && value.length <= MAX_QUERY_CHARS ? value.trim() : (await failures()).checkLongQuery(value, name);
}

export function checkTags(tags: unknown): string[] {
  if (tags === null || tags === undefined) return [];
  const list = typeof tags === "string" ? [tags] : tags;
  if (!Array.isArray(list) || !list.every((t) => typeof t === "string")) throw bad(`'tags' must be a list of strings, got ${shown(tags)}`);
  return list.map((t: string) => t.toLowerCase());
}

export function checkBool(value: unknown, name: string): boolean {
  if (typeof value !== "boolean") throw bad(`'${name}' must be true or false, got ${shown(value)}`);
  return value;
}

export function encodeCursor(offset: number, key?: string): string {
  return `o:${offset}` + (key ? `:${key}` : "");
}

export async function decodeCursor(cursor: unknown, key?: string): Promise<number> {
  if (cursor === null || cursor === undefined) return 0;
  const parts = typeof cursor === "string" && cursor.length <= 100 ? cursor.split(":") : [];
  const wellFormed = parts.length >= 2 && parts[0] === "o" && /^[0-9]+$/.test(parts[1] as string);
  if (!wellFormed || JSON.stringify(parts.slice(2)) !== JSON.stringify(key ? [key] : [])) throw (await failures()).badCursor(cursor, wellFormed);
  return Number(parts[1]);
}
