/** The ``Catalog`` of the main entry: open a published catalogue by URL and answer as ``toolcat.reader.Catalog``
 * does for the core loop (list, search_nodes, search_tool_by_category, find_tool, expand_tool/tool_describe).
 * ``toolcat-reader/full`` (full.ts) extends it with tool_help, tool_list, prompts and dialect definitions.
 *
 * Only ``Catalog.open`` throws (a ``ReaderError``: UNAVAILABLE, INTEGRITY or BAD_REQUEST); every operation after it
 * resolves to a plain JSON value: a result with ``ok: true`` or an error envelope. The reader runs no tool: calling
 * one is the host's job (``runs`` tells the reader which tools the host executes, for ``executable``).
 */
import { ReaderError, errorEnvelope, lean } from "./errors.js";
import * as ops from "./ops.js";
import type { Dialect } from "./protocol.js";
import { isObject, shown, type Json } from "./py.js";
import { Searcher, type ModelOptions } from "./search.js";
import { HttpSource, MAX_FILE_BYTES, type FetchLike } from "./source.js";
import { Store, type Artifact } from "./store.js";

export interface OpenOptions {
  /** ``sha256:<hex>`` of the manifest file (the ``sha256`` of the ``manifest`` ref in catalog.json). */
  pin?: string | null;
  /** A registry_version listed in catalog.json's ``versions``. */
  version?: string | null;
  /** The ``fetch`` to use (default: the runtime's). */
  fetch?: FetchLike;
  /** Seconds for each attempt as a whole (default 10). */
  timeout?: number;
  /** Retries of a transient failure (default 2). */
  retries?: number;
  /** Requests in flight when an operation needs several files (default 8; 1 fetches one after the other). */
  maxParallel?: number;
  /** No file is read past this many bytes (default 64 MiB). */
  maxFileBytes?: number;
  /** Which tools the host runs (default: none); it sets ``executable`` and the call ``next_action``. */
  runs?: ops.Runs;
  /** The semantic tier's model (``toolcat build --publish-model``): without it a build with vectors is answered by words. */
  model?: ModelOptions | null;
}

/** The messages of failures, loaded on the first one. */
const failures = () => import("./deferred.js");

async function checkPin(pin: unknown): Promise<string | null> {
  if (pin === null || pin === undefined) return null;
  const text = typeof pin === "string" ? pin.trim().toLowerCase() : "";
  const digest = text.startsWith("sha256:") ? text.slice(7) : "";
  if (!/^[0-9a-f]{64}$/.test(digest)) throw (await failures()).badPin(pin);
  return digest;
}

/** Whether an answer has a next_action or hints, which its dialect renders in its own tool names (protocol.ts). */
function guides(envelope: Json): boolean {
  const holder = isObject(envelope.error) ? envelope.error : envelope;
  return (holder.next_action ?? null) !== null || [holder.hints, envelope.hints].some((hints) => Array.isArray(hints) && hints.length > 0);
}

export class Catalog {
  protected constructor(readonly store: Store, protected readonly runs: ops.Runs) {}

  /** Open the catalogue at an http(s) base URL (the folder holding catalog.json). */
  static async open<C extends typeof Catalog>(this: C, url: string | URL, options: OpenOptions = {}): Promise<C["prototype"]> {
    const text = String(url);
    if (!/^https?:\/\//i.test(text)) throw (await failures()).notHttp(text);
    if (options.version !== undefined && options.version !== null && typeof options.version !== "string") {
      throw new ReaderError("BAD_REQUEST", `version must be a registry_version string, got ${shown(options.version)}`);
    }
    const maxParallel = options.maxParallel ?? 8;
    if (!Number.isInteger(maxParallel) || maxParallel < 1) throw (await failures()).badParallel(maxParallel);
    const digest = await checkPin(options.pin);
    const base = text.replace(/catalog\.json$/, "");
    const source = new HttpSource(base, {
      timeout: options.timeout ?? 10,
      retries: options.retries ?? 2,
      maxParallel,
      maxFileBytes: options.maxFileBytes ?? MAX_FILE_BYTES,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const store = new Store(source, options.version ?? null, digest);
    store.searcherFactory = (s) => new Searcher(s, options.model ? { fetch: options.fetch, ...options.model } : null);
    await store.load(await store.readEntry());
    return new this(store, options.runs ?? (() => false)) as C["prototype"];
  }

  get manifest(): Artifact {
    return this.store.manifest;
  }

  get registryVersion(): string {
    return this.store.registry_version;
  }

  /** Re-read catalog.json; true when a new registry_version was loaded (never with ``version``/``pin``). */
  refresh(): Promise<boolean> {
    return this.store.refresh();
  }

  /** Requests, round trips, bytes so far, the files in memory, and which search tier answers. */
  stats(): Json {
    const searcher = this.store.searcherInstance as Searcher | null;
    return { ...this.store.stats(), ...(searcher ? { search_tier: searcher.searchTier } : {}) };
  }

  /** The canonical tool id for a canonical id, any provider alias or a skill name; null if unknown. */
  resolve(name: string): Promise<string | null> {
    return this.store.resolve(name);
  }

  /** The lexical searcher (rankTools, findTool ...); throws UNAVAILABLE without an index. */
  searcher(): Searcher {
    return this.store.searcherRequired();
  }

  /** ``fn``'s answer, a ReaderError as its envelope, rendered in ``dialect`` (next_action and hints). */
  protected async run(fn: () => Promise<Json>, dialect: Dialect | null): Promise<Json> {
    let result: Json;
    try {
      result = await fn();
    } catch (err) {
      if (err instanceof ReaderError) result = err.envelope();
      else {
        const error = err as Error;
        result = errorEnvelope("INTERNAL", `failed: ${error?.name}: ${error?.message}`, { details: { exception: error?.name }, hints: ["This is a reader or catalogue bug; the host log has the traceback."] });
      }
    }
    if (dialect === null) return result;
    try {
      return lean(guides(result) ? await (await import("./deferred.js")).render(result, dialect, this.store) : result);
    } catch (err) {
      if (err instanceof ReaderError) return err.envelope();
      return errorEnvelope("INTERNAL", `rendering the answer failed: ${(err as Error).message}`);
    }
  }

  // == spec dialect ========================================================================
  list(options: { path?: unknown; tags?: unknown; query?: unknown; limit?: unknown; cursor?: unknown; capability?: unknown } = {}): Promise<Json> {
    const { path = null, tags = null, query = null, limit = 10, cursor = null, capability = null } = options;
    return this.run(() => ops.listNode(this.store, path, tags, query, limit, cursor, capability), "spec");
  }

  searchNodes(query: unknown, limit: unknown = 5): Promise<Json> {
    return this.run(() => ops.searchNodes(this.store, query, limit), "spec");
  }

  searchToolByCategory(query: unknown, categoryPath: unknown, limit: unknown = 5, cursor: unknown = null): Promise<Json> {
    return this.run(() => ops.searchToolByCategory(this.store, query, categoryPath, limit, cursor), "spec");
  }

  expandTool(toolId: unknown): Promise<Json> {
    return this.run(() => ops.describe(this.store, this.runs, toolId), "spec");
  }

  // == namespaced dialect ==================================================================
  toolDescribe(name: unknown): Promise<Json> {
    return this.run(() => ops.describe(this.store, this.runs, name), "namespaced");
  }

  findTool(purpose: unknown, limit: unknown = 5): Promise<Json> {
    return this.run(() => ops.findTool(this.store, purpose, limit), "namespaced");
  }
}
