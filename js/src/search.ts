/** Lexical search over a built catalogue, in exact parity with ``toolcat.reader.search`` and ``ranking``.
 *
 * The index (docs/search.md) is two TF-IDF *spaces*, words and character 4-grams; a document's score is
 * ``Σ space.weight · cosine(query, doc)``. A query reads the term shards of its words (a word entry bundles
 * its 4-grams) and then the doc shards of its best hits, found by the same exact top-k walk as Python's, in
 * the same rounds: the meta, the term shards, the doc shards.
 */
import { ANALYZER_VERSION, STOP_WORDS, analyzeChars, analyzeWords, wordNgrams, type Thesaurus } from "./analyzer.js";
import { ReaderError } from "./errors.js";
import { LEXICAL_LEARNED } from "./fusionDefault.js";
import { bisectRight, cmp, cmpPath, isObject, pyRound, unique, type Json } from "./py.js";
import { lookupBucket, sha256 } from "./sha256.js";
import { MAX_QUERY_CHARS, checkLimit, checkQuery, decodeCursor, nodePath, type Artifact, type Store } from "./store.js";
import type { PartFilter } from "./wordfilter.js";

export const MIN_CHAR_ONLY_SCORE = 0.1;
export const BOUND_SLACK = 1e-9;
export const MIN_RELEVANCE = 0.06;
export const MIN_RELATIVE = 0.25;
/** What a category hint adds to the tools under its node, among ``HINT_DEPTH`` more hits than the page needs. */
const HINT_BOOST = 0.05;
const HINT_DEPTH = 20;
const NAME_SHORT_PARTS = 3;
const NAME_MAX_PARTS = 12;
const NAME_MAX_CHARS = 200;
const NAME_PARTS = /[\p{L}\p{N}]+/gu;
/** Whether a query may carry a label (``searcher._HINT``, ``_LABEL``; the rest is in failures.ts ``hintedTools``). */
const LABELLED = /(?<![\p{L}\p{N}_])(server|category|namespace|service|app|tool|action|task|query)\s*[:=]/iu;
/** The messages of failures and failed lookups, loaded on the first one. */
const failures = () => import("./deferred.js");
/** The index format's check and word filter (wordfilter.ts), loaded by the first search. */
const wordFilter = () => import("./wordfilter.js");
/** The default tier's learned expansion (expand.ts), loaded by the first search of a build that has one. */
const expansion = () => import("./expand.js");
/** The semantic tier (semantic.ts; it imports onnxruntime), loaded by the first search of a build with vectors when the host gave a model. */
const semantic = () => import("./semantic.js");
/** ``OpenOptions.model``: where the semantic tier's model is (semantic.ts ``ModelOptions``). */
export type ModelOptions = import("./semantic.js").ModelOptions;

type Ref = Artifact;
type Allowed = ((docId: number) => boolean) | null;
/** ``[doc id, score, matched word terms]``. */
export type Hit = [number, number, string[]];
/** ``[pointer, score, matched word terms]``. */
export type PointedHit = [Artifact, number, string[]];

class Posting {
  readonly maxWeight: number;
  private byDocMap: Map<number, number> | null = null;
  constructor(readonly idf: number, readonly ids: number[], readonly weights: number[]) {
    this.maxWeight = weights.length ? Math.max(...weights) : 0;
  }
  byDoc(): Map<number, number> {
    if (!this.byDocMap) this.byDocMap = new Map(this.ids.map((id, i) => [id, this.weights[i] as number]));
    return this.byDocMap;
  }
}

class Part {
  readonly nDocs: number;
  readonly spaces: Artifact[];
  /** The words the words space holds (``_Part.words_filter``): a word it lacks needs no term shard. */
  held!: PartFilter;
  readonly firsts: Map<string, string[]>;
  readonly docShardSize: number;
  readonly docShards: Artifact[];
  readonly docPages: Artifact | null;
  readonly delta: Artifact | null;
  readonly masked = new Set<number>();
  readonly deleted = new Set<number>();
  readonly deltaSpaces = new Map<string, Artifact>();
  readonly deltaFirsts = new Map<string, string[]>();
  readonly deltaDocFile = new Map<number, Ref>();

  constructor(readonly meta: Artifact) {
    this.nDocs = meta.n_docs;
    this.spaces = meta.spaces;
    if (!Array.isArray(this.spaces)) throw new TypeError("spaces");
    this.firsts = new Map(this.spaces.map((s) => [s.name, s.firsts || s.shards.map((shard: Artifact) => shard.first)]));
    this.docShardSize = meta.doc_shard_size;
    this.docShards = meta.doc_shards ?? [];
    this.docPages = isObject(meta.doc_pages) ? meta.doc_pages : null;
    if (this.docPages === null && !("doc_shards" in meta)) throw new TypeError("a part needs doc_shards or doc_pages");
    this.delta = isObject(meta.delta) ? meta.delta : null;
    if (this.delta !== null) {
      this.nDocs = Number(this.delta.n_docs);
      for (const i of this.delta.masked) this.masked.add(Number(i));
      for (const i of this.delta.deleted) this.deleted.add(Number(i));
      for (const s of this.delta.spaces) {
        this.deltaSpaces.set(s.name, s);
        this.deltaFirsts.set(s.name, s.shards.map((sh: Artifact) => sh.first));
      }
      for (const f of this.delta.docs) for (const i of f.ids) this.deltaDocFile.set(Number(i), f.ref);
    }
  }

  deltaShardRef(space: string, term: string): Ref | null {
    const s = this.deltaSpaces.get(space);
    if (!s) return null;
    const index = bisectRight(this.deltaFirsts.get(space) as string[], term, cmp) - 1;
    if (index < 0 || cmp(term, s.shards[index].last) > 0) return null;
    return s.shards[index].ref;
  }
}

export function queryWeights(tokens: string[], idf: Map<string, number>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of tokens) if (idf.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
  const raw = new Map<string, number>();
  for (const [term, count] of counts) raw.set(term, (1 + Math.log(count)) * (idf.get(term) as number));
  let sum = 0;
  for (const v of raw.values()) sum += v * v;
  const norm = Math.sqrt(sum);
  const out = new Map<string, number>();
  if (norm > 0) for (const [term, v] of raw) out.set(term, v / norm);
  return out;
}

function pageRefs(page: Artifact): Ref[] {
  return page.files.map(([digest, size]: [string, number], i: number) => ({ path: `${page.folder}/${page.prefix}${Number(page.first) + i}.json`, sha256: digest, bytes: size }));
}

/** A name without case or separators: ``GitHub.create_issue`` → ``github create issue``. */
export function nameKey(text: string): string {
  return (text.toLowerCase().match(NAME_PARTS) ?? []).join(" ");
}

export function nameLike(query: string, stopWords: Set<string>): boolean {
  const parts = nameKey(query).split(" ").filter(Boolean);
  if (!parts.length || Array.from(query).length > NAME_MAX_CHARS) return false;
  if (!/\s/u.test(query)) return true;
  return parts.length <= NAME_SHORT_PARTS || (parts.length <= NAME_MAX_PARTS && !parts.some((p) => stopWords.has(p)));
}

/** ``answer`` with the note that the query was cut (``searcher._noted``), when it was. */
async function noted(answer: Json, asked: unknown): Promise<Json> {
  const note = typeof asked === "string" && asked.length > MAX_QUERY_CHARS ? (await failures()).queryNote(asked) : null;
  if (note) answer.hints = [note, ...((answer.hints as string[]) ?? [])];
  return answer;
}

/** Which matched terms appear in which shown field, and a note when a tier put the hit in (``searcher._reason``): a
 * tier marks such a hit with its note after a ``~`` (expand.ts ``EXPANDED_TERM``, semantic.ts ``SEMANTIC_TERM``). */
function reason(pointer: Artifact, all: string[]): string {
  const terms = all.filter((t) => t[0] !== "~");
  const note = all.filter((t) => t[0] === "~").map((t) => t.slice(1));
  if (!terms.length) return note[0] ?? "similar spelling (character n-grams)";
  const fields: [string, Set<string>][] = [
    ["id", new Set(analyzeWords(pointer.tool_id))],
    ["summary", new Set(analyzeWords(pointer.summary))],
    ["tags", new Set(analyzeWords(pointer.tags.join(" ")))],
  ];
  const parts = terms.map((term) => {
    const where = fields.filter(([, words]) => words.has(term)).map(([name]) => name);
    return `${term} (${(where.length ? where : ["text"]).join(", ")})`;
  });
  return ["matched " + parts.join("; "), ...note].join("; ");
}

/** Ranked search over a built catalogue; index files are fetched lazily through the store (verified, cached). */
export class Searcher {
  readonly manifest: Artifact;
  private cache = new Map<string, Artifact>();
  postings = new Map<string, Posting | null>();
  private interned = new Map<string, Posting>();
  private meta: Artifact | null = null;
  private parts = new Map<string, Part>();
  private pendingPages: Ref[] = [];
  private thesaurus: Thesaurus | undefined;
  private readonly concurrent: boolean;
  /** find_tool's weak bar on the scale of what ranks tools (``Searcher.weak_bar``): 0.35, or a learned fusion's own (semantic.ts sets it). */
  weakBar = 0.35;
  /** A learned model's exact rule, (bar, rise, share): the bar is ``bar + rise / words`` for a query of ``words`` content words,
   * and ``share`` the idf share its unknown words must carry
   * (``Searcher.weak_bar``); semantic.ts sets it, and ``weakBar`` to the highest the bar gets, which find_tool checks
   * first. Declared only: no code in the main entry. */
  declare weakRule?: [number, number, number];
  private tierLoad: Promise<import("./semantic.js").SemanticTier | null> | null | undefined;
  private tierNow: import("./semantic.js").SemanticTier | null | undefined;

  constructor(private readonly store: Store, private readonly modelOptions: ModelOptions | null = null) {
    this.manifest = store.manifest;
    this.concurrent = store.source.concurrent;
  }

  /** The tier that answers (``Catalog.stats``): the semantic tier or the learned expansion once read, else why the reader answers lexically. */
  get searchTier(): string {
    const expand = this.parts.get("tools")?.meta.expand;
    return this.tierNow ? this.tierNow.tier() : expand ? `expanded (${expand.model?.name ?? "terms"})` : "vectors" in this.manifest
      ? "lexical: the build has vectors, but the reader was given no embedding model (js/README.md)"
      : "lexical: the build has no vectors";
  }

  /** The semantic tier when the build has vectors and the host gave a model (semantic.ts; its ``reason`` says why it cannot answer). */
  private async semanticTier(): Promise<import("./semantic.js").SemanticTier | null | undefined> {
    this.tierLoad ??= this.modelOptions && isObject(this.manifest.vectors) ? semantic().then((m) => m.SemanticTier.open(this, this.modelOptions as ModelOptions, this.store.source.baseUrl, sha256)) : null;
    return (this.tierNow = await this.tierLoad);
  }

  // -- fetching -------------------------------------------------------------------------------
  /** The JSON file a ref points to, through the store (verified), kept for this searcher. */
  async fetch(ref: Ref): Promise<Artifact> {
    const digest = ref.sha256;
    if (!this.cache.has(digest)) {
      this.cache.set(digest, await this.store.fetchJson(ref));
    }
    return this.cache.get(digest);
  }

  async part(name: string): Promise<Part> {
    const known = this.parts.get(name);
    if (known) return known;
    if (this.meta === null) {
      const ref = this.manifest.index;
      if (!isObject(ref)) throw (await failures()).noIndex();
      const meta = await this.fetch(ref);
      if ((await wordFilter()).stale(meta, ANALYZER_VERSION)) throw (await failures()).staleIndex(meta);
      this.meta = meta;
      this.thesaurus = meta.analyzer?.thesaurus?.table ?? undefined;
    }
    let part: Part;
    try {
      part = new Part(this.meta[name]);
      part.held = (await wordFilter()).partFilter(part.spaces);
    } catch (err) {
      throw (await failures()).badPart(name, (err as Error).message);
    }
    this.parts.set(name, part);
    return part;
  }

  words(text: string): string[] {
    return analyzeWords(text, this.thesaurus);
  }

  async shardRef(part: Part, space: Artifact, term: string, fetchPage = true): Promise<Ref | null> {
    const index = bisectRight(part.firsts.get(space.name) as string[], term, cmp) - 1;
    if (index < 0) return null;
    const pages = space.term_pages;
    if (!pages) {
      if (cmp(term, space.shards[index].last) > 0) return null;
      return space.shards[index].ref;
    }
    const [ref, page] = await this.pagedRef(pages, index, fetchPage);
    if (page !== null && cmp(term, page.last[index - Number(page.first)]) > 0) return null;
    return ref;
  }

  private async pagedRef(pages: Artifact, number: number, fetchPage: boolean): Promise<[Ref, Artifact | null]> {
    const pageRef = pages.pages[Math.floor(number / Number(pages.per_page))];
    if (!fetchPage && !this.cache.has(pageRef.sha256)) {
      this.pendingPages.push(pageRef);
      return [{ path: `${pages.folder}/${pages.prefix}${number}.json`, max_bytes: Number(pages.max_bytes) }, null];
    }
    const page = await this.fetch(pageRef);
    return [pageRefs(page)[number - Number(page.first)], page];
  }

  async entry(part: Part, space: Artifact, term: string): Promise<Artifact | null> {
    if (!part.held.has(space.name, term)) return null;
    const ref = await this.shardRef(part, space, term);
    if (ref === null) return null;
    const terms = (await this.fetch(ref)).terms;
    return Object.hasOwn(terms, term) ? terms[term] : null;
  }

  private async prefetch(refs: (Ref | null)[]): Promise<void> {
    if (!this.concurrent) return;
    const missing = refs.filter((r) => isObject(r) && !this.cache.has(r.sha256 as string));
    if (missing.length > 1) await this.store.prefetch(missing);
  }

  async prefetchQuery(partName: string, query: string, extra: (Ref | null)[] = []): Promise<void> {
    if (!this.concurrent) return;
    const tier = await this.semanticTier(); // its vectors meta with the index meta, its shards with the term shards
    if (tier?.reason === null) extra = [...extra, ...(await tier.refs(partName, query))];
    const part = await this.part(partName);
    const words = unique(this.words(query));
    const { wordRefs } = await wordFilter();
    this.pendingPages = [];
    // A word the filter says the index lacks needs no term shard, and its n-grams' shards come in this round.
    const refs = [...extra, ...(await wordRefs(this, part, words, wordNgrams))];
    if (part.meta.expand) refs.push(...(await (await expansion()).refs(this, part, words)));
    if (part.delta !== null) {
      for (const word of words) refs.push(part.deltaShardRef("words", word), ...wordNgrams(word).map((gram) => part.deltaShardRef("chars", gram)));
    }
    await this.prefetch([...this.pendingPages, ...refs]);
    this.pendingPages = [];
    const more = await wordRefs(this, part, words, wordNgrams, true);
    await this.prefetch([...this.pendingPages, ...more]);
  }

  async docs(partName: string, hits: Hit[]): Promise<Artifact[]> {
    const part = await this.part(partName);
    this.pendingPages = [];
    const refs: Ref[] = [];
    for (const [docId] of hits) refs.push(await this.docRef(part, docId, false));
    await this.prefetch([...this.pendingPages, ...refs]);
    const out: Artifact[] = [];
    for (const [docId] of hits) out.push(await this.doc(part, docId));
    return out;
  }

  async pointed(hits: Hit[], digits?: number): Promise<PointedHit[]> {
    const docs = await this.docs("tools", hits);
    return hits.map(([, score, terms], i) => [docs[i].pointer, digits === undefined ? score : pyRound(score, digits), terms]);
  }

  decode(spaceName: string, entry: Artifact): Posting {
    const ids: number[] = [];
    let last = 0;
    for (const gap of entry.docs) ids.push((last += gap));
    const posting = new Posting(Number(entry.idf), ids, entry.w);
    const key = `${spaceName}|${posting.idf}|${entry.docs.join(",")}|${entry.w.join(",")}`;
    const known = this.interned.get(key);
    if (known) return known;
    this.interned.set(key, posting);
    return posting;
  }

  async posting(partName: string, part: Part, space: Artifact, term: string): Promise<Posting | null> {
    const key = `${partName}\u0000${space.name}\u0000${term}`;
    if (!this.postings.has(key)) {
      const entry = await this.entry(part, space, term);
      const posting = entry === null ? null : this.decode(space.name, entry);
      this.postings.set(key, await this.withDelta(part, space.name, term, posting));
    }
    return this.postings.get(key) as Posting | null;
  }

  private async withDelta(part: Part, spaceName: string, term: string, posting: Posting | null): Promise<Posting | null> {
    if (part.delta === null) return posting;
    const ref = part.deltaShardRef(spaceName, term);
    let entry: Artifact = null;
    if (ref !== null) {
      const terms = (await this.fetch(ref)).terms;
      entry = Object.hasOwn(terms, term) ? terms[term] : null;
    }
    const pairs: [number, number][] = posting === null ? [] : posting.ids.map((id, i) => [id, posting.weights[i] as number]);
    let kept = part.masked.size ? pairs.filter(([i]) => !part.masked.has(i)) : pairs;
    if (entry === null && kept.length === pairs.length) return posting;
    const idf = posting !== null ? posting.idf : entry !== null ? Number(entry.idf) : 0;
    if (entry !== null) {
      const added = this.decode(spaceName, entry);
      kept = [...kept, ...added.ids.map((id, i) => [id, added.weights[i] as number] as [number, number])].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    }
    if (!kept.length) return null;
    const merged = new Posting(idf, kept.map(([i]) => i), kept.map(([, w]) => w));
    const key = `merged|${spaceName}|${merged.idf}|${merged.ids.join(",")}|${merged.weights.join(",")}`;
    const known = this.interned.get(key);
    if (known) return known;
    this.interned.set(key, merged);
    return merged;
  }

  private async bundledNgrams(partName: string, part: Part, query: string): Promise<void> {
    const words = part.spaces.find((s) => s.name === "words");
    for (const word of unique(this.words(query))) {
      const entry = await this.entry(part, words, word);
      if (entry === null) continue;
      const bundle = entry.chars ?? {};
      for (const gram of wordNgrams(word)) {
        const key = `${partName}\u0000chars\u0000${gram}`;
        if (this.postings.has(key)) continue;
        let sub = Object.hasOwn(bundle, gram) ? bundle[gram] : null;
        if (sub !== null && "same" in sub) sub = bundle[sub.same];
        const posting = sub === null || sub === undefined ? null : this.decode("chars", sub);
        this.postings.set(key, await this.withDelta(part, "chars", gram, posting));
      }
    }
  }

  async spaceTerms(partName: string, part: Part, space: Artifact, query: string): Promise<[string, number, Posting][]> {
    if (space.name === "chars") await this.bundledNgrams(partName, part, query);
    const found = new Map<string, Posting>();
    const tokens = space.name === "chars" ? analyzeChars(query, this.thesaurus) : this.words(query);
    for (const term of unique(tokens)) {
      const posting = await this.posting(partName, part, space, term);
      if (posting !== null) found.set(term, posting);
    }
    const weights = queryWeights(tokens, new Map([...found].map(([t, p]) => [t, p.idf])));
    return [...weights].map(([term, q]) => [term, q, found.get(term) as Posting]);
  }

  private async docRef(part: Part, docId: number, fetchPage = true): Promise<Ref> {
    const ref = part.deltaDocFile.get(docId);
    if (ref !== undefined) return ref;
    const shardNo = Math.floor(docId / part.docShardSize);
    if (part.docPages === null) return part.docShards[shardNo].ref;
    // in the word filter's chunk: toolcat-index-4's doc shards carry their paths to roots the meta lists (proven.ts)
    return (await wordFilter()).provenDoc(this, part.docPages, shardNo, fetchPage);
  }

  private async doc(part: Part, docId: number): Promise<Artifact> {
    const shard = await this.fetch(await this.docRef(part, docId));
    const position = part.deltaDocFile.has(docId) ? shard.ids.indexOf(docId) : docId - shard.first;
    return shard.docs[position];
  }

  // -- scoring --------------------------------------------------------------------------------
  /** Every matching document's score and matched word terms (exhaustive; the top-k below equals it). */
  async scores(partName: string, query: string): Promise<[Map<number, number>, Map<number, string[]>]> {
    const part = await this.part(partName);
    await this.prefetchQuery(partName, query);
    const total = new Map<number, number>();
    const matched = new Map<number, string[]>();
    for (const space of part.spaces) {
      const scale = Number(space.weight);
      for (const [term, q, posting] of await this.spaceTerms(partName, part, space, query)) {
        const factor = scale * q;
        posting.ids.forEach((id, i) => total.set(id, (total.get(id) ?? 0) + factor * (posting.weights[i] as number)));
        if (space.name === "words") for (const id of posting.ids) matched.set(id, [...(matched.get(id) ?? []), term]);
      }
    }
    return [total, matched];
  }

  async ranked(partName: string, query: string, allowed: Allowed = null, limit: number | null = null): Promise<Hit[]> {
    if (limit !== null) {
      const tier = await this.semanticTier();
      if (tier?.reason === null) return tier.ranked(this, partName, query, allowed, limit);
      const part = await this.part(partName);
      if (part.meta.expand) return (await expansion()).ranked(this, part, query, allowed, limit, queryWeights);
      // the learned lexical fusion, when fusion_weights.json makes it the default (``Searcher._without_vectors``)
      return LEXICAL_LEARNED && partName === "tools" ? (await semantic()).lexicalRanked(this, query, allowed, limit) : this.topK(partName, query, limit, allowed);
    }
    const [total, matched] = await this.scores(partName, query);
    const hits: Hit[] = [];
    for (const [id, score] of total) {
      if ((matched.has(id) || score >= MIN_CHAR_ONLY_SCORE) && (allowed === null || allowed(id))) hits.push([id, score, matched.get(id) ?? []]);
    }
    return hits.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  }

  async topK(partName: string, query: string, k: number, allowed: Allowed): Promise<Hit[]> {
    const part = await this.part(partName);
    await this.prefetchQuery(partName, query);
    const factors = new Map<Posting, [number, string]>();
    const wordTerms: [string, Posting][] = [];
    for (const space of part.spaces) {
      const scale = Number(space.weight);
      for (const [term, q, posting] of await this.spaceTerms(partName, part, space, query)) {
        const [factor, first] = factors.get(posting) ?? [0, term];
        factors.set(posting, [factor + scale * q, first]);
        if (space.name === "words") wordTerms.push([term, posting]);
      }
    }
    const terms: [number, number, string, Posting][] = [...factors].map(([posting, [factor, term]]) => [factor * posting.maxWeight, factor, term, posting]);
    terms.sort((a, b) => b[0] - a[0] || cmp(a[2], b[2]));
    let remaining = 0;
    for (const t of terms) remaining += t[0];
    let done = 0;
    let total = new Map<number, number>();
    const wordDocs = new Set<number>();
    const words = new Set(wordTerms.map(([, p]) => p));
    let position = 0;
    let kth = -1;
    while (position < terms.length) {
      const [bound, factor, , posting] = terms[position] as [number, number, string, Posting];
      position += 1;
      remaining -= bound;
      done += bound;
      const isWord = words.has(posting);
      for (let i = 0; i < posting.ids.length; i++) {
        const id = posting.ids[i] as number;
        if (allowed !== null && !allowed(id)) continue;
        total.set(id, (total.get(id) ?? 0) + factor * (posting.weights[i] as number));
        if (isWord) wordDocs.add(id);
      }
      if (done > remaining) {
        kth = kthHitScore(total, wordDocs, k);
        if (kth > remaining + BOUND_SLACK) break;
      }
    }
    if (position < terms.length) {
      total = new Map([...total].filter(([, s]) => s + remaining + BOUND_SLACK >= kth));
      for (const [, factor, , posting] of terms.slice(position)) {
        const byDoc = posting.byDoc();
        const isWord = words.has(posting);
        for (const [id, score] of total) {
          const weight = byDoc.get(id);
          if (weight !== undefined) {
            total.set(id, score + factor * weight);
            if (isWord) wordDocs.add(id);
          }
        }
      }
    }
    const hits = [...total].filter(([d, s]) => wordDocs.has(d) || s >= MIN_CHAR_ONLY_SCORE);
    hits.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return hits.slice(0, k).map(([d, s]) => [d, s, wordTerms.filter(([, p]) => p.byDoc().has(d)).map(([t]) => t)]);
  }

  // -- scoping --------------------------------------------------------------------------------
  private async nodeShardRef(path: string[]): Promise<Ref | null> {
    const part = await this.part("nodes");
    const index = bisectRight(part.docShards.map((s) => s.first_path as string[]), path, cmpPath) - 1;
    return index < 0 ? null : part.docShards[index].ref;
  }

  async nodeEntry(path: string[]): Promise<Artifact | null> {
    const part = await this.part("nodes");
    const key = JSON.stringify(path);
    for (const ref of new Set(part.deltaDocFile.values())) {
      for (const doc of (await this.fetch(ref)).docs) if (JSON.stringify(doc.path) === key) return doc;
    }
    const ref = await this.nodeShardRef(path);
    if (ref === null) return null;
    const shard = await this.fetch(ref);
    for (let position = 0; position < shard.docs.length; position++) {
      const doc = shard.docs[position];
      if (JSON.stringify(doc.path) === key) return part.deleted.has(shard.first + position) ? null : doc;
    }
    return null;
  }

  async scoped(query: string, path: string[], directOnly = false, extra: Ref[] = []): Promise<(docId: number) => boolean> {
    const deltaDocs = [...(await this.part("nodes")).deltaDocFile.values()];
    await this.prefetchQuery("tools", query, [await this.nodeShardRef(path), ...deltaDocs, ...extra]);
    const entry = await this.nodeEntry(path);
    if (entry === null) throw await (await failures()).unknownCategory(this, path, query);
    return scope(entry, directOnly);
  }


  // -- operations -----------------------------------------------------------------------------
  /** ``[pointer, confidence, matched terms]`` best first, optionally inside a node (and below it). */
  async rankTools(query: string, options: { within?: string[]; directOnly?: boolean; limit?: number } = {}): Promise<PointedHit[]> {
    let allowed: Allowed = null;
    if (options.within !== undefined && (options.within.length || options.directOnly)) allowed = await this.scoped(query, options.within, options.directOnly);
    return this.pointed(await this.ranked("tools", query, allowed, options.limit ?? null), 6);
  }

  async rankToolsPage(query: string, within: string[], offset: number, limit: number): Promise<[PointedHit[], number]> {
    const allowed = within.length ? await this.scoped(query, within) : null;
    const hits = await this.ranked("tools", query, allowed);
    return [await this.pointed(hits.slice(offset, offset + limit), 6), hits.length];
  }

  private async nameCandidates(query: string): Promise<[string, Ref][]> {
    const lookup = this.manifest.lookup;
    if (!isObject(lookup) || !nameLike(query, STOP_WORDS)) return [];
    const refs = lookup.refs ?? [];
    const count = lookup.buckets ?? 0;
    if (!Array.isArray(refs) || !Number.isInteger(count) || (count as number) < 1 || refs.length !== count) return [];
    const parts = nameKey(query).split(" ").filter(Boolean);
    const typed = /\s/u.test(query) ? [] : [query, query.toLowerCase()];
    const out: [string, Ref][] = [];
    for (const name of unique([...typed, parts.join("_"), parts.join("-")])) out.push([name, refs[await lookupBucket(name, count as number)]]);
    return out;
  }

  private async nameLookup(candidates: [string, Ref][]): Promise<string | null> {
    for (const [name, ref] of candidates) {
      const entries = (await this.fetch(ref)).entries ?? {};
      const found = Object.hasOwn(entries, name) ? entries[name] : null;
      if (isObject(found) && typeof found.tool_id === "string") return found.tool_id;
    }
    return null;
  }

  /** A page of what findTool and searchToolByCategory show, whether more follow, and the exact name's id. */
  async answerTools(query: string, limit: number, offset = 0, allowed: Allowed = null, scope: string[] | null = null, candidates: [string, Ref][] | null = null, boost: Allowed = null): Promise<[PointedHit[], boolean, string | null]> {
    if (candidates === null) {
      candidates = await this.nameCandidates(query);
      await this.prefetchQuery("tools", query, candidates.map(([, ref]) => ref));
    }
    const named = await this.nameLookup(candidates);
    let hits = await this.ranked("tools", query, allowed, offset + limit + 2 + (boost ? HINT_DEPTH : 0));
    if (boost) {
      hits = hits.map(([d, s, t]): Hit => [d, boost(d) ? Math.min(1, s + HINT_BOOST) : s, t]).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, offset + limit + 2);
    }
    const floor = hits.length ? Math.max(MIN_RELEVANCE, MIN_RELATIVE * (hits[0] as Hit)[1]) : 0;
    const kept = hits.filter((h) => h[1] >= floor);
    if (named === null) {
      const page = await this.pointed(kept.slice(offset, offset + limit));
      const more = kept.length > offset + limit;
      const key = nameKey(query);
      const spelled = page.findIndex(([p]) => key === nameKey(p.tool_id) || key === nameKey(p.alias));
      if (offset > 0 || spelled < 0) return [page, more, null];
      const [first] = page.splice(spelled, 1) as [PointedHit];
      return [[[first[0], 1, first[2]], ...page], more, first[0].tool_id];
    }
    const pointed = await this.pointed(kept.slice(0, offset + limit + 1));
    const exact = pointed.find((h) => h[0].tool_id === named) ?? null;
    const pointer = exact !== null ? exact[0] : await (await failures()).specPointer(this, named, scope);
    if (pointer === null) return [pointed.slice(offset, offset + limit), kept.length > offset + limit, null];
    const shown: PointedHit[] = [[pointer, 1, exact !== null ? exact[2] : []], ...pointed.filter((h) => h !== exact)];
    return [shown.slice(offset, offset + limit), shown.length > offset + limit, named];
  }

  async findTool(purpose: unknown, limit: unknown = 5): Promise<Json> {
    let query: string;
    let matches: Json[];
    let page: PointedHit[], named: string | null;
    try {
      query = await checkQuery(purpose, "purpose");
      const count = checkLimit(limit, 5);
      [page, , named] = LABELLED.test(query) ? await (await failures()).hintedTools(this, query, count) : await this.answerTools(query, count);
      matches = page.map(([pointer, score, terms]) => ({
        name: pointer.tool_id,
        relevance: pyRound(Math.min(1, score), 4),
        reason: pointer.tool_id === named ? "exact name" : reason(pointer, terms),
        ...(pointer.summary && { summary: pointer.summary }), // each hit's one line (issue 35)
      }));
    } catch (err) {
      if (err instanceof ReaderError) return err.envelope();
      throw err;
    }
    // weak (``_weak_answer``): the best hit scores under the weak bar (a learned one's highest here) and the words no tool has carry most of the query's idf (failures.ts)
    const weak = named === null && (matches[0] as Artifact)?.relevance < this.weakBar && (await (await failures()).weak(this, query, matches));
    return noted(weak || (matches.length ? { matches } : (await failures()).noTools(query)), purpose);
  }

  async nodeResults(query: string, limit: number): Promise<Json[]> {
    const hits = await this.ranked("nodes", query, (docId) => docId > 0, limit);
    const docs = await this.docs("nodes", hits);
    return docs.map((doc, i) => ({ path: doc.path, title: doc.title, summary: doc.summary, confidence: pyRound(Math.min(1, (hits[i] as Hit)[1]), 4) }));
  }

  async searchNodes(query: unknown, limit: unknown = 5): Promise<Json> {
    let text: string;
    let results: Json[];
    try {
      text = await checkQuery(query, "query");
      results = await this.nodeResults(text, checkLimit(limit, 5));
    } catch (err) {
      if (err instanceof ReaderError) return err.envelope();
      throw err;
    }
    return noted(await (await failures()).nodesAnswer(this, text, results), query);
  }

  async searchToolByCategory(query: unknown, categoryPath: unknown, limit: unknown = 5, cursor: unknown = null): Promise<Json> {
    try {
      const text = await checkQuery(query, "query");
      const count = checkLimit(limit, 5);
      const path = nodePath(categoryPath);
      const key = await (await failures()).cursorKey(text, path);
      const offset = await decodeCursor(cursor, key);
      const candidates = await this.nameCandidates(text);
      const refs = candidates.map(([, ref]) => ref);
      const allowed = path.length ? await this.scoped(text, path, false, refs) : null;
      if (!path.length) await this.prefetchQuery("tools", text, refs);
      const [page, more, named] = await this.answerTools(text, count, offset, allowed, path, candidates);
      // none, weak, or NO_MATCH_IN_CATEGORY when no word is known (failures.ts categoryAnswer)
      return await noted(await (await failures()).categoryAnswer(this, text, path, page, more && key, offset, named), query);
    } catch (err) {
      if (err instanceof ReaderError) return err.envelope();
      throw err;
    }
  }

}

/** The doc filter of a node's entry: its range (or its direct tools) and the tools listed there (``Searcher._scope``). */
export function scope(entry: Artifact, directOnly: boolean): (docId: number) => boolean {
  let [low, high] = entry.range as [number, number];
  let extraIds: Set<number>;
  if (directOnly) {
    high = low + entry.direct;
    extraIds = new Set(entry.extra_direct);
  } else extraIds = new Set(entry.extra);
  return (docId) => (low <= docId && docId < high) || extraIds.has(docId);
}

function kthHitScore(total: Map<number, number>, wordDocs: Set<number>, k: number): number {
  const scores: number[] = [];
  for (const [d, s] of total) if (wordDocs.has(d) || s >= MIN_CHAR_ONLY_SCORE) scores.push(s);
  if (scores.length < k) return -1;
  return scores.sort((a, b) => b - a)[k - 1] as number;
}
