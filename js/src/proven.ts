/** Proven files (``vector_format.proven_body``): a Merkle path to a page's root instead of a page of sha256, in
 * ``toolcat-vectors-10``'s row files (the root in the row table's group) and ``toolcat-index-4``'s doc shards (the
 * root in the index meta). Bundled in the word filter's chunk, which the first search loads before it reads any doc
 * or row (``search.ts``'s ``part``), not the main entry; the semantic tier takes it from there. */
import type { Artifact, Store } from "./store.js";
import type { Searcher } from "./search.js";

// not sha256.ts's: importing it from here would split it out of the main entry into a chunk of its own (a request
// and ~170 bytes more for every page; ``tests/js/test_js_size.py``)
function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256(data: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  return hex(subtle ? new Uint8Array(await subtle.digest("SHA-256", data as BufferSource)) : (await import("./sha256sync.js")).sha256Sync(data));
}

const encoder = new TextEncoder();

/** How a proven file carries its Merkle path (``vector_format.PROOF_KEY``): its last key, 64 hex characters a digest. */
const PROOF_KEY = encoder.encode(',"proof":"');

function unhex(text: string): Uint8Array {
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

function joined(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The bytes without its proof of a proven file (``vector_format.proven_body``, ``toolcat-vectors-10``'s row files),
 * once its path leads from ``place`` to ``root``: leaf sha256(0x00 ‖ bytes), node sha256(0x01 ‖ left ‖ right), a page
 * of ``perPage`` places padded to a power of two. Throws RangeError when it does not. */
export async function provenBody(data: Uint8Array, root: string, place: number, perPage: number): Promise<Uint8Array> {
  let at = -1;
  for (let i = data.length - PROOF_KEY.length; i > 0 && at < 0; i--) {
    if (PROOF_KEY.every((b, j) => data[i + j] === b)) at = i;
  }
  const depth = perPage > 1 ? (perPage - 1).toString(2).length : 0;
  const proof = at > 0 ? new TextDecoder().decode(data.subarray(at + PROOF_KEY.length, data.length - 2)) : "";
  if (at <= 0 || data[data.length - 2] !== 0x22 || data[data.length - 1] !== 0x7d || proof.length !== 64 * depth || !/^[0-9a-f]*$/.test(proof)) {
    throw new RangeError("a proven file without a well-formed proof");
  }
  const body = joined(data.subarray(0, at), Uint8Array.of(0x7d));
  let digest = unhex(await sha256(joined(Uint8Array.of(0), body)));
  for (let level = 0; level < depth; level++) {
    const sibling = unhex(proof.slice(64 * level, 64 * level + 64));
    digest = unhex(await sha256((place >> level) & 1 ? joined(Uint8Array.of(1), sibling, digest) : joined(Uint8Array.of(1), digest, sibling)));
  }
  if (!(place >= 0 && place < perPage) || hex(digest) !== root) throw new RangeError("a proven file whose path does not lead to its page's root");
  return body;
}

/** A proven file through a searcher (``Store._fetch_proven``): its bytes fetched by path this round (or now), used once
 * its Merkle path leads from ``place`` to ``root``; what is parsed is the file without its proof, kept as the store
 * and the searcher keep a file, under ``ref.sha256``. Throws RangeError naming the file and its ``holder`` when the
 * path does not lead there. */
export async function provenFile(searcher: Searcher, ref: Artifact, bound: number, root: string, place: number, perPage: number, holder: string): Promise<Artifact> {
  const inner = searcher as unknown as { cache: Map<string, Artifact>; store: { pending: Map<string, Uint8Array>; json: Map<string, Promise<unknown>>; source: Store["source"]; parse(ref: Artifact, data: Uint8Array): Artifact } };
  const known = inner.cache.get(ref.sha256);
  if (known) return known;
  const { store } = inner;
  const bytes = store.pending.get(ref.path) ?? (await store.source.fetch({ path: ref.path, max_bytes: bound }));
  store.pending.delete(ref.path);
  let body: Uint8Array;
  try {
    body = await provenBody(bytes, root, place, perPage);
  } catch (err) {
    // a doc shard's is an INTEGRITY error, as in Python; a row file's a RangeError the semantic tier reports
    if (holder === "parent") throw (await import("./deferred.js")).provenMismatch(ref.path, root, (err as Error).message);
    throw new RangeError(`${ref.path} does not match the page root its ${holder} holds (${(err as Error).message}); it was not used`);
  }
  const value = store.parse(ref, body);
  store.json.set(ref.sha256, Promise.resolve(value));
  inner.cache.set(ref.sha256, value);
  return value;
}

/** The ref of doc shard ``number`` of a paged doc table (``IndexReader._doc_ref``). In a proven one (``toolcat-index-4``'s
 * ``doc_pages`` with ``roots``, ``index_format.proven_doc``), without ``fetch``, for a shard not read yet: a pending
 * ref ``{path, max_bytes}`` (fetched by path in this round's prefetch); else, once the shard is read and its path led
 * to its page's root, a ref kept under its path, so ``Searcher.fetch`` finds it (a shard that does not lead there is
 * an INTEGRITY error, as in Python). In a ``toolcat-index-3`` table, the ref its page lists (``Searcher.pagedRef``). */
export async function provenDoc(searcher: Searcher, pages: Artifact, number: number, fetch: boolean): Promise<Artifact> {
  const inner = searcher as unknown as { cache: Map<string, Artifact>; pagedRef(pages: Artifact, number: number, fetchPage: boolean): Promise<[Artifact, Artifact | null]> };
  if (!pages.roots) return (await inner.pagedRef(pages, number, fetch))[0];
  const perPage = Number(pages.per_page), path = `${pages.folder}/${pages.prefix}${number}.json`, ref = { path, sha256: path };
  if (!fetch && !inner.cache.has(path)) return { path, max_bytes: Number(pages.max_bytes) };
  await provenFile(searcher, ref, Number(pages.max_bytes), String(pages.roots[Math.floor(number / perPage)]), number % perPage, perPage, "parent");
  return ref;
}
