/** sha256 as lower-case hex: Web Crypto where the runtime has it, else the small implementation in sha256sync.ts,
 * loaded only then (a page served over plain http has no ``crypto.subtle``; its files are checked all the same). */

export function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

export async function sha256(data: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  return hex(subtle ? new Uint8Array(await subtle.digest("SHA-256", data as BufferSource)) : (await import("./sha256sync.js")).sha256Sync(data));
}

const encoder = new TextEncoder();

/** Which lookup bucket holds ``key``: the first 8 hex digits of its sha256, modulo the count (``sha256-hex8-mod``). */
export async function lookupBucket(key: string, buckets: number): Promise<number> {
  return parseInt((await sha256(encoder.encode(key))).slice(0, 8), 16) % buckets;
}
