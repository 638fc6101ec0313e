/** The search index's format and its word filter (``toolcat.format.index_format``), a chunk the first search loads.
 *
 * The filter is a Bloom filter of the words a part's words space holds: a query word it lacks is surely not in the
 * index, so its n-gram shards are fetched with the other words' term shards, a round earlier (docs/search.md, "How a
 * query is answered"). FNV-1a (32 bits) over the word's UTF-8 bytes then murmur3's finaliser, from two offset bases;
 * probe ``i`` is ``(h1 + i * (h2 | 1)) mod bits``: the same integers as Python's. */
import type { Artifact } from "./store.js";

export const INDEX_FORMAT = "toolcat-index-4";
/** The formats this reader reads (``INDEX_FORMATS``): a ``toolcat-index-3`` build lists its doc shards in pages of
 * sha256, a ``toolcat-index-2`` build has no n-gram filter either. */
export const INDEX_FORMATS = ["toolcat-index-2", "toolcat-index-3", INDEX_FORMAT];
// proven files (toolcat-index-4's doc shards, toolcat-vectors-10's row files): in this chunk, which every search loads
export { provenDoc, provenFile } from "./proven.js";

/** True when an index meta is of a format or analyzer version (``analyzer``: the reader's) this reader does not read
 * (``IndexReader._part``). */
export const stale = (meta: Artifact, analyzer: string): boolean => !INDEX_FORMATS.includes(meta.format) || meta.analyzer?.version !== analyzer;
const UTF8 = new TextEncoder();

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function fnv(data: Uint8Array, basis: number): number {
  let h = basis;
  for (const byte of data) h = Math.imul(h ^ byte, 0x01000193);
  return fmix(h);
}

export class WordFilter {
  private readonly bits: number;
  private readonly hashes: number;
  private readonly array: Uint8Array;

  /** Throws TypeError on a filter whose fields do not add up (``WordFilter`` in Python raises ValueError). */
  constructor(spec: { kind?: unknown; bits?: unknown; hashes?: unknown; data?: unknown } | undefined) {
    if (spec?.kind !== "bloom-fnv1a32") throw new TypeError(`unknown word filter kind ${String(spec?.kind)}`);
    this.array = Uint8Array.from(atob(String(spec.data)), (c) => c.charCodeAt(0));
    this.bits = Number(spec.bits);
    this.hashes = Number(spec.hashes);
    if (!(this.bits > 0 && this.bits === 8 * this.array.length && this.hashes >= 1 && this.hashes <= 32)) {
      throw new TypeError(`word filter of ${this.bits} bits, ${this.hashes} hashes and ${this.array.length} bytes`);
    }
  }

  /** False when ``word`` is surely not among the filter's words; true when it may be. */
  mayHold(word: string): boolean {
    const data = UTF8.encode(word);
    const h1 = fnv(data, 0x811c9dc5);
    const h2 = (fnv(data, 0x050c5d1f) | 1) >>> 0;
    for (let i = 0; i < this.hashes; i++) {
      const bit = (h1 + i * h2) % this.bits;
      if (!(this.array[bit >> 3] & (1 << (bit & 7)))) return false;
    }
    return true;
  }
}

/** A part's filters: its words space's (``_Part.words_filter``) and a paged chars space's, of its n-grams
 * (``_Part.grams_filter``, ``toolcat-index-3``): an n-gram it lacks reads no shard. */
export class PartFilter {
  private readonly words: WordFilter;
  private readonly grams: WordFilter | null;

  constructor(spaces: Artifact[]) {
    this.words = new WordFilter(spaces.find((s) => s.name === "words")?.filter);
    const chars = spaces.find((s) => s.name === "chars")?.filter;
    this.grams = chars === undefined ? null : new WordFilter(chars);
  }

  /** The words filter's answer for ``word``. */
  mayHold(word: string): boolean {
    return this.words.mayHold(word);
  }

  /** False when the index surely lacks ``term`` in space ``space`` (``words``, or ``chars`` with a filter). */
  has(space: string, term: string): boolean {
    if (space === "words") return this.words.mayHold(term);
    return space !== "chars" || this.grams === null || this.grams.mayHold(term);
  }
}

/** The filters of a part (``_Part``). */
export const partFilter = (spaces: Artifact[]): PartFilter => new PartFilter(spaces);

interface Reader {
  shardRef(part: { spaces: Artifact[] }, space: Artifact, term: string, fetchPage: boolean): Promise<Artifact | null>;
  entry(part: { spaces: Artifact[] }, space: Artifact, term: string): Promise<Artifact | null>;
}

/** The term shards a query's ``words`` need (``ranking.IndexReader._prefetch_query``): a word the filter may hold, its
 * words shard; one it surely lacks, its n-grams' chars shards (``ngrams``). With ``late``, once the words shards are
 * in: the n-grams' shards of the words the filter let through that the index lacks after all (its false positives). */
export async function wordRefs(
  reader: Reader, part: { spaces: Artifact[]; held: PartFilter }, words: string[], ngrams: (word: string) => string[], late = false,
): Promise<(Artifact | null)[]> {
  const [held, chars] = ["words", "chars"].map((name) => part.spaces.find((s) => s.name === name));
  const refs: (Artifact | null)[] = [];
  for (const word of words) {
    const absent = !part.held.mayHold(word);
    if (!late && !absent) refs.push(await reader.shardRef(part, held, word, false));
    else if (late ? !absent && (await reader.entry(part, held, word)) === null : absent) {
      for (const gram of ngrams(word)) if (part.held.has("chars", gram)) refs.push(await reader.shardRef(part, chars, gram, false));
    }
  }
  return refs;
}
