/** Proven files (``toolcat-vectors-10``'s row files, ``vector_format.proven_body``): a Merkle path to a page's root, which
 * the row table's group lists, instead of a page of sha256. Loaded with the semantic tier (not the main entry). */

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
