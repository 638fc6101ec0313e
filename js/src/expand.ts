/** The default tier's learned term expansion, in exact parity with ``toolcat.reader.search.expansion`` and the
 * name match of ``hybrid``: ``relevance = (1 - weight) · lexical + weight · E``, where ``E(d) = Σ q_t · w(t, d) /
 * denominator`` sums the postings of the index meta's ``tools.expand`` (term shards laid out like a lexical space's).
 * A chunk of its own, loaded by the first search over a build that has ``tools.expand`` (docs/search.md). */
// Only types are imported: a chunk that reaches no module of the entry keeps the full entry in one chunk too.
import type { Artifact } from "./store.js";
import type { Hit, Searcher, queryWeights } from "./search.js";

/** The term a hit carries when the expansion outweighs its lexical part: ``~`` and the note its ``reason`` shows. */
export const EXPANDED_TERM = "~related words (learned expansion)";
export const NAME_BOOST = 0.1;
export const NAME_MIN = 0.7;
export const NAME_DEPTH = 10;

type Allowed = ((docId: number) => boolean) | null;
type Posting = { idf: number; ids: number[]; weights: number[] };
type Settings = [number, number, number, number];

/** ``(weight, floor, candidates, denominator)`` of a ``tools.expand`` entry (``expansion.settings``); a malformed
 * one is an INTEGRITY error, as any other malformed index meta (``Searcher._expanded``). */
export async function settings(meta: Artifact): Promise<Settings> {
  const weight = Number(meta.weight), floor = Number(meta.floor), candidates = Math.trunc(Number(meta.candidates)), denominator = Number(meta.denominator);
  if (![weight, floor, candidates, denominator].every(Number.isFinite) || !(weight >= 0 && weight <= 1 && candidates >= 0 && denominator > 0)) {
    throw (await import("./deferred.js")).badExpand(meta);
  }
  return [weight, floor, candidates, denominator];
}

/** The ``tools.expand`` entry as a space the searcher's shard lookup reads (``name`` "expand"). */
export function space(part: Artifact): Artifact {
  const meta = part.meta.expand;
  if (!part.firsts.has("expand")) part.firsts.set("expand", meta.firsts || meta.shards.map((s: Artifact) => s.first));
  return { ...meta, name: "expand" };
}

/** ``E(d)`` for every doc with a posting of a query term; ``terms`` are ``[term, q, posting]``, summed in order. */
export function scores(terms: [string, number, Posting][], denominator: number): Map<number, number> {
  const total = new Map<number, number>();
  for (const [, q, posting] of terms) {
    for (let i = 0; i < posting.ids.length; i++) {
      const doc = posting.ids[i] as number;
      total.set(doc, (total.get(doc) ?? 0) + q * ((posting.weights[i] as number) / denominator));
    }
  }
  return total;
}

/** The best ``limit`` of ``(1 - weight) · lexical + weight · E`` over the lexical top and the expansion's top (``expansion.fuse``). */
export function fuse(lexical: Hit[], expanded: Map<number, number>, limit: number, [weight, floor, candidates]: Settings, allowed: Allowed): Hit[] {
  const top = [...expanded].filter(([doc, e]) => e >= floor && (allowed === null || allowed(doc)));
  top.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const lex = new Map(lexical.map(([doc, score, terms]) => [doc, [score, terms] as [number, string[]]]));
  const docs = new Set([...lex.keys(), ...top.slice(0, candidates).map(([doc]) => doc)]);
  const fused: Hit[] = [];
  for (const doc of docs) {
    const [score, terms] = lex.get(doc) ?? [0, []];
    const e = expanded.get(doc) ?? 0;
    const meaning = e >= floor ? weight * e : 0;
    const words = (1 - weight) * score;
    fused.push([doc, Math.min(1, words + meaning), meaning > words ? [...terms, EXPANDED_TERM] : [...terms]]);
  }
  fused.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return fused.slice(0, limit);
}

/** How nearly the query's terms equal a tool id's (0-1): the best of the whole id and its last dotted part (``hybrid.name_match``). */
export function nameMatch(queryTerms: Set<string>, toolId: string, analyze: (text: string) => string[]): number {
  let best = 0;
  for (const name of new Set([toolId, toolId.slice(toolId.lastIndexOf(".") + 1)])) {
    const terms = new Set(analyze(name));
    if (terms.size && queryTerms.size) {
      let shared = 0;
      for (const t of terms) if (queryTerms.has(t)) shared += 1;
      best = Math.max(best, ((shared / terms.size) * shared) / queryTerms.size);
    }
  }
  return best;
}

/** ``hits`` with the first ``ids.length`` raised by their name match, re-sorted; the rest follow (``hybrid.name_boosted``). */
export function nameBoosted(hits: Hit[], ids: string[], queryTerms: Set<string>, analyze: (text: string) => string[]): Hit[] {
  const head: Hit[] = hits.slice(0, ids.length).map(([doc, score, terms], i) => {
    const match = nameMatch(queryTerms, ids[i] as string, analyze);
    return match >= NAME_MIN ? [doc, Math.min(1, score + NAME_BOOST * match), terms] : [doc, score, terms];
  });
  head.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return [...head, ...hits.slice(head.length)];
}

/** The expansion's term shards for the words of ``query`` (fetched in the same round as the lexical term shards). */
export async function refs(searcher: Searcher, part: Artifact, words: string[]): Promise<(Artifact | null)[]> {
  const expand = space(part);
  const out: (Artifact | null)[] = [];
  for (const word of words) out.push(await searcher.shardRef(part, expand, word, false));
  return out;
}

/** The query's terms that have expansion postings, ``[term, q, posting]`` in query order (``IndexReader._expand_terms``):
 * the lexical query weighting with each term's stored query weight for the idf; no delta applies (written whole). */
export async function terms(searcher: Searcher, part: Artifact, query: string, weigh: typeof queryWeights): Promise<[string, number, Posting][]> {
  const expand = space(part);
  const tokens = searcher.words(query);
  const found = new Map<string, Posting>();
  for (const term of new Set(tokens)) {
    const key = `tools\u0000expand\u0000${term}`;
    if (!searcher.postings.has(key)) {
      const entry = await searcher.entry(part, expand, term);
      searcher.postings.set(key, entry === null ? null : searcher.decode("expand", entry));
    }
    const posting = searcher.postings.get(key);
    if (posting) found.set(term, posting);
  }
  return [...weigh(tokens, new Map([...found].map(([t, p]) => [t, p.idf])))].map(([t, q]) => [t, q, found.get(t) as Posting]);
}

/** The top ``limit`` tools of the fused ranking (``Searcher._first_stage`` with ``tools.expand``). */
export async function ranked(searcher: Searcher, part: Artifact, query: string, allowed: Allowed, limit: number, weigh: typeof queryWeights): Promise<Hit[]> {
  const config = await settings(part.meta.expand);
  const lexical = await searcher.topK("tools", query, Math.max(limit, config[2]), allowed);
  const hits = fuse(lexical, scores(await terms(searcher, part, query, weigh), config[3]), Math.max(limit, NAME_DEPTH), config, allowed);
  const queryTerms = new Set(searcher.words(query));
  if (!queryTerms.size) return hits.slice(0, limit);
  const head = hits.slice(0, NAME_DEPTH);
  const ids = (await searcher.docs("tools", head)).map((doc) => String(doc.pointer.tool_id));
  return nameBoosted(hits, ids, queryTerms, (text) => searcher.words(text)).slice(0, limit);
}
