/** The http(s) source: a catalogue on a static host or CDN, fetched with ``fetch`` under the Python reader's caps.
 *
 * Every file but ``catalog.json`` is reached through a ref ``{path, sha256, bytes}`` and used only once its
 * size and sha256 match. No file is read past ``maxFileBytes`` (``catalog.json`` past 1 MiB), whatever a ref or
 * a header promises; each attempt has one deadline for headers and body together; redirects are followed only
 * within the base URL's origin, at most three hops (docs/reader.md, "Opening").
 */
import { ReaderError } from "./errors.js";
import { isObject, shown } from "./py.js";
import { sha256 } from "./sha256.js";

export const MAX_ENTRY_BYTES = 1024 * 1024;
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
export const MAX_REF_PATH = 1024;
export const MAX_REDIRECTS = 3;
export const BACKOFF_SECONDS = 0.1;
export const MAX_BACKOFF_SECONDS = 1.0;
const LEAVES_ORIGIN = "it leaves the catalogue's origin (scheme, host and port)";
/** The messages of a host's failures, loaded on the first one (a healthy host never needs them). */
const failures = () => import("./deferred.js");

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface SourceOptions {
  timeout?: number;
  retries?: number;
  maxParallel?: number;
  maxFileBytes?: number;
  fetch?: FetchLike;
}

export interface SourceStats {
  requests: number;
  round_trips: number;
  bytes_downloaded: number;
  bytes_decoded: number;
  cache_hits: number;
  not_modified: number;
}

export interface Ref {
  path: string;
  sha256: string;
  bytes: number;
}

/** A file fetched by path whose hash is in a file of the same round (docs/search.md, "Paged tables"). */
export interface PendingRef {
  path: string;
  max_bytes: number;
}

class Retry extends Error {}

export function backoff(attempt: number): number {
  return Math.min(BACKOFF_SECONDS * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS);
}

export function wireLimit(limit: number): number {
  return limit + Math.floor(limit / 1000) + 1024;
}

function cleanPath(path: unknown): path is string {
  if (typeof path !== "string" || !path || path.length > MAX_REF_PATH || path.includes("\\")) return false;
  for (const ch of path) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  const segments = path.split("/");
  if ((segments[0] as string).includes(":")) return false;
  return segments.every((s) => s !== "" && s !== "." && s !== "..");
}

export function isSha256(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
}

/** ``[path, sha256, bytes]`` of a well-formed ref whose path stays inside the catalogue; INTEGRITY otherwise. */
export function checkRef(ref: unknown): [string, string, number] {
  if (!isObject(ref)) {
    throw new ReaderError("INTEGRITY", `expected a ref {path, sha256, bytes}, got ${Array.isArray(ref) ? "list" : ref === null ? "NoneType" : typeof ref}`, {
      hints: ["The catalogue is malformed; rebuild it with `toolcat build`."],
    });
  }
  const { path, sha256: digest, bytes: size } = ref;
  if (!cleanPath(path)) {
    throw new ReaderError("INTEGRITY", `ref path ${shown(path, 200)} is not a clean relative path inside the catalogue`, {
      details: { ref: { path: shown(path, 200), sha256: digest, bytes: size } },
      hints: ["Ref paths are relative to the base URL: no '..', '.', empty segments, leading '/', URLs, backslashes or control characters."],
    });
  }
  if (!isSha256(digest)) throw new ReaderError("INTEGRITY", `ref to ${path} has no valid sha256`, { details: { ref } });
  if (typeof size !== "number" || !Number.isInteger(size) || size < 0) {
    throw new ReaderError("INTEGRITY", `ref to ${path} has no valid byte count`, { details: { ref } });
  }
  return [path, digest, size];
}

/** INTEGRITY unless ``data`` has the size and sha256 its parent promised. */
export async function verify(data: Uint8Array, path: string, digest: string, size: number, where: string): Promise<Uint8Array> {
  const got = await sha256(data);
  if (data.length !== size || got !== digest) throw (await failures()).hashMismatch(where, path, digest, size, got, data.length);
  return data;
}

function origin(url: string): string | null {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
    const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
    return `${parsed.protocol}//${parsed.hostname.toLowerCase()}:${port}`;
  } catch {
    return null;
  }
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** An http(s) base URL read with ``fetch``: bounded, retried, same-origin only; verified by the caller's refs. */
export class HttpSource {
  readonly baseUrl: string;
  readonly location: string;
  readonly stats: SourceStats = { requests: 0, round_trips: 0, bytes_downloaded: 0, bytes_decoded: 0, cache_hits: 0, not_modified: 0 };
  readonly timeout: number;
  readonly retries: number;
  readonly maxParallel: number;
  readonly maxFileBytes: number;
  private readonly fetchFn: FetchLike;

  constructor(baseUrl: string, options: SourceOptions = {}) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl : baseUrl + "/";
    this.location = this.baseUrl;
    this.timeout = options.timeout ?? 10;
    this.retries = Math.max(0, options.retries ?? 2);
    this.maxParallel = Math.max(1, options.maxParallel ?? 8);
    this.maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
    const fetchFn = options.fetch ?? globalThis.fetch;
    this.fetchFn = (input, init) => fetchFn(input, init);
  }

  get concurrent(): boolean {
    return this.maxParallel > 1;
  }

  url(path: string): string {
    return this.baseUrl + path.split("/").map(encodeURIComponent).join("/");
  }

  async readEntry(): Promise<Uint8Array> {
    const [status, body] = await this.get("catalog.json", MAX_ENTRY_BYTES, false, "the cap for catalog.json");
    if (status === 304) throw (await failures()).notModified(this.url("catalog.json"));
    return body;
  }

  /** The verified bytes of one ref (or, for a pending ref, its unverified bytes: the caller checks them). */
  async fetch(ref: Ref | PendingRef, batched = false): Promise<Uint8Array> {
    if (isObject(ref) && !("sha256" in ref) && "max_bytes" in ref) {
      const { path, max_bytes: limit } = ref as PendingRef;
      if (!cleanPath(path) || !Number.isInteger(limit) || limit < 0) throw (await failures()).malformedPendingRef(ref);
      return (await this.get(path, Math.min(limit, this.maxFileBytes), batched))[1];
    }
    const [path, digest, size] = checkRef(ref);
    const url = this.url(path);
    if (size > this.maxFileBytes) throw (await failures()).overCap(path, url, size, this.maxFileBytes);
    const [, body] = await this.get(path, size, batched);
    return verify(body, path, digest, size, url);
  }

  /** Several refs at once, at most ``maxParallel`` in flight: one round trip. Each slot holds bytes or the error. */
  async fetchMany(refs: (Ref | PendingRef)[]): Promise<(Uint8Array | ReaderError)[]> {
    const one = async (ref: Ref | PendingRef, batched: boolean) => {
      try {
        return await this.fetch(ref, batched);
      } catch (err) {
        if (err instanceof ReaderError) return err;
        throw err;
      }
    };
    if (refs.length < 2 || this.maxParallel === 1) {
      const out: (Uint8Array | ReaderError)[] = [];
      for (const ref of refs) out.push(await one(ref, false));
      return out;
    }
    const before = this.stats.requests;
    const out: (Uint8Array | ReaderError)[] = new Array(refs.length);
    let next = 0;
    const worker = async () => {
      while (next < refs.length) {
        const index = next++;
        out[index] = await one(refs[index] as Ref, true);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.maxParallel, refs.length) }, worker));
    if (this.stats.requests > before) this.stats.round_trips += 1;
    return out;
  }

  /** GET with a deadline per attempt and bounded retries: ``[status, decoded body]`` for 2xx and 304. */
  private async get(path: string, limit: number, batched: boolean, why = "the size its ref promised"): Promise<[number, Uint8Array]> {
    const url = this.url(path);
    let last = "";
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (attempt) await sleep(backoff(attempt));
      this.stats.requests += 1;
      this.stats.round_trips += batched && !attempt ? 0 : 1;
      try {
        return await this.attempt(url, limit, why);
      } catch (err) {
        if (!(err instanceof Retry)) throw err;
        last = err.message;
      }
    }
    throw (await failures()).unreachable(url, this.retries + 1, last, this.timeout);
  }

  private async attempt(url: string, limit: number, why: string): Promise<[number, Uint8Array]> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeout * 1000);
    try {
      let current = url;
      for (let hop = 0; ; hop++) {
        let response = await this.fetchFn(current, {
          headers: { "Accept-Encoding": "gzip" },
          redirect: "manual",
          signal: controller.signal,
          cache: "no-store",
        });
        if (response.type === "opaqueredirect") {
          // a browser hides where a manual redirect goes: let it follow, then check where it ended
          response = await this.fetchFn(current, { redirect: "follow", signal: controller.signal });
          if (origin(response.url) !== origin(this.baseUrl)) throw (await failures()).redirect(url, response.url, LEAVES_ORIGIN);
        }
        const status = response.status;
        if (status >= 300 && status < 400 && status !== 304) {
          const location = response.headers.get("location");
          await response.body?.cancel().catch(() => undefined); // a redirect's body is never read
          if (!location) throw (await failures()).redirectWithoutLocation(url, status);
          const target = new URL(location, current).href;
          if (origin(target) !== origin(this.baseUrl)) throw (await failures()).redirect(url, target, LEAVES_ORIGIN);
          if (hop + 1 > MAX_REDIRECTS) throw (await failures()).redirect(url, target, `it is hop ${hop + 1}, more than ${MAX_REDIRECTS}`);
          current = target;
          continue;
        }
        if (status === 304) {
          await response.body?.cancel().catch(() => undefined);
          return [304, new Uint8Array()];
        }
        if (status >= 500 || status === 429) {
          await response.body?.cancel().catch(() => undefined);
          throw new Retry(`HTTP ${status}`);
        }
        if (status < 200 || status >= 300) {
          await response.body?.cancel().catch(() => undefined);
          throw (await failures()).httpStatus(url, status);
        }
        return [status, await this.readBody(url, response, limit, why)];
      }
    } catch (err) {
      if (err instanceof ReaderError || err instanceof Retry) throw err;
      if (controller.signal.aborted) throw new Retry(`no complete answer within the ${this.timeout} s timeout (timed out)`);
      const error = err as Error;
      const cause = (error.cause as Error | undefined)?.message;
      throw new Retry(`${error.name}: ${error.message}${cause ? ` (${cause})` : ""}`.slice(0, 300));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A 2xx body read chunk by chunk, never past ``limit`` decoded bytes (nor past its wire limit). */
  private async readBody(url: string, response: Response, limit: number, why: string): Promise<Uint8Array> {
    const encoding = (response.headers.get("content-encoding") ?? "").trim().toLowerCase();
    if (!["", "identity", "gzip", "x-gzip"].includes(encoding)) {
      await response.body?.cancel().catch(() => undefined);
      throw (await failures()).encoding(url, encoding);
    }
    const text = (response.headers.get("content-length") ?? "").trim();
    const declared = /^\d+$/.test(text) ? Number(text.slice(0, 20)) : null;
    if (declared !== null && declared > wireLimit(limit)) {
      await response.body?.cancel().catch(() => undefined);
      throw (await failures()).tooLarge(url, limit, why);
    }
    const chunks: Uint8Array[] = [];
    let received = 0;
    const reader = response.body?.getReader();
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.length;
      if (received > limit) {
        await reader.cancel().catch(() => undefined);
        throw (await failures()).tooLarge(url, limit, why);
      }
      chunks.push(value);
    }
    const body = new Uint8Array(received);
    let at = 0;
    for (const chunk of chunks) {
      body.set(chunk, at);
      at += chunk.length;
    }
    this.stats.bytes_downloaded += encoding && encoding !== "identity" && declared !== null ? declared : received;
    this.stats.bytes_decoded += received;
    return body;
  }
}
