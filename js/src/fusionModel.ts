/** The learned fusion (``toolcat.reader.search.fusion_model``): a linear model over the evidence the reader already
 * has, ``relevance = sigmoid(bias + w · x)``, then its own name stage and weak bar; docs/search.md, "Learned fusion".
 *
 * Imported only by the semantic chunk (semantic.ts: a build with vectors, or the learned lexical model), never by the
 * main entry. The weights are src/fusionWeights.ts, generated from compiler/reader/search/fusion_weights.json by
 * scripts/fusion-weights.mjs (run by `npm run build`); tests/js/test_js_semantic.py checks they are the file's bytes.
 * A model is used, as in Python, when the weights name it for the tier (the vectors meta's embedder, or ``lexical``)
 * with the build's weights sha256, and either its entry says ``"default": true`` or the host asked for every model
 * (``learnedFusion: "all"``, Python's ``TOOLCAT_LEARNED_FUSION=all``); ``learnedFusion: "off"`` turns them all off. */
import type { Hit, Searcher } from "./search.js";
import type { Artifact } from "./store.js";
import { nameMatch } from "./expand.js";
import { WEIGHTS } from "./fusionWeights.js";

type Allowed = ((docId: number) => boolean) | null;
/** (weight weak, weight strong, gate, min cosine) of the hand fusion (``hybrid.FUSION``). */
export type Params = [number, number, number, number];
/** The host's switch (``ModelOptions.learnedFusion``), Python's ``TOOLCAT_LEARNED_FUSION``: ``"all"`` uses every
 * model of the weights, ``"off"`` none; unset, the models whose entry says ``"default": true``. */
export type LearnedFusion = "all" | "off";

const FUSION_FORMAT = "toolcat-fusion-1";
/** The candidates of each list (``hybrid.CANDIDATES``). */
export const CANDIDATES = 50;
/** The term a hit whose meaning outweighs its words carries (``hybrid.SEMANTIC_TERM``). */
export const SEMANTIC_TERM = "~similar meaning (semantic tier)";
/** A name match counts as whole from here (``hybrid.NAME_MIN``). */
export const NAME_MIN = 0.7;
const LEXICAL_FEATURES = ["lex", "lex_in", "lex_rank", "lex_share", "lex_best", "coverage", "matched", "query_terms", "known", "lex_x_len"];
const SEMANTIC_FEATURES = [...LEXICAL_FEATURES, "cos", "cos_gap", "sem_rank", "cos_x_weak", "lex_x_cos", "cos_x_unknown", "cos_x_len"];
/** ``coverage`` weighted by each query word's idf (``fusion_model.IDF_COVERAGE``), read by a model naming it in its place. */
const IDF_COVERAGE = "coverage_idf";
/** Every feature list a model may have (``fusion_model.FEATURE_SETS``). */
const FEATURE_SETS = [false, true].flatMap((idf) => [LEXICAL_FEATURES, SEMANTIC_FEATURES].map((names) => (idf ? names.map((n) => (n === "coverage" ? IDF_COVERAGE : n)) : names)));

/** One tier's trained linear model (``fusion_model.Model``). */
export class LinearModel {
  constructor(readonly names: string[], readonly weights: number[], readonly bias: number, readonly sha256: string | null, readonly isDefault: boolean, readonly name: [number, number], readonly weak: number | null = null, readonly weakPerWord = 0, readonly weakShare = 0.54) {
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (!Array.isArray(names) || !FEATURE_SETS.some((set) => same(names, set)) || weights.length !== names.length) throw new TypeError("fusion model features");
    if (name.length !== 2 || ![...weights, bias, ...name, weak ?? 0, weakPerWord].every(Number.isFinite)) throw new TypeError("a fusion model with a weight that is not finite");
    if (!(weakShare > 0 && weakShare <= 1)) throw new TypeError("a fusion model's weak_share is a share of the query's idf in (0, 1]");
  }
  get semantic(): boolean {
    return this.names.length === SEMANTIC_FEATURES.length;
  }
  /** Whether it reads ``coverage_idf`` (the query's idf, ``Searcher.term_idf``). */
  get idfCoverage(): boolean {
    return this.names.includes(IDF_COVERAGE);
  }
  score(x: number[]): number {
    let z = this.bias;
    this.weights.forEach((w, i) => (z += w * (x[i] as number)));
    return z > -700 ? 1 / (1 + Math.exp(-z)) : 0;
  }
}

/** One entry of the weights as a model (``fusion_model.parse``'s; raises TypeError on a malformed one). */
function parseEntry(e: Artifact): LinearModel {
  if (e === null || typeof e !== "object" || !Array.isArray(e.weights)) throw new TypeError("a fusion model entry");
  const name = e.name ?? [0, 0];
  if (!Array.isArray(name)) throw new TypeError("a fusion model's name weights");
  const weak = e.weak_relevance ?? null;
  // weak_per_word: the bar rises by it over the query's content words (``Model.weak_per_word``; absent: one bar);
  // weak_share: the idf share of unknown words the bar was fitted at (``Model.weak_share``; absent: 0.54)
  return new LinearModel(e.features, e.weights.map(Number), Number(e.bias), e.weights_sha256 ?? null, (e.default ?? true) === true, name.map(Number) as [number, number], weak === null ? null : Number(weak), Number(e.weak_per_word ?? 0), Number(e.weak_share ?? 0.54));
}

let models: Map<string, LinearModel> | undefined;

/** The models of the weights: none when the document is not ``toolcat-fusion-1``, and a malformed entry left out
 * alone (``fusion_model._models``). */
export function parseModels(data: Artifact): Map<string, LinearModel> {
  const out = new Map<string, LinearModel>();
  if (data === null || typeof data !== "object" || data.format !== FUSION_FORMAT || data.models === null || typeof data.models !== "object") return out;
  for (const [tier, entry] of Object.entries(data.models)) {
    try {
      out.set(tier, parseEntry(entry as Artifact));
    } catch {
      // a tier without a model keeps the hand fusion
    }
  }
  return out;
}

/** The trained model for ``tier`` (``lexical`` or an embedder spec) with these weights, as ``fusion_model.model_for``
 * chooses it under the host's switch. */
export function modelFor(tier: string, sha256: string | null, learned: LearnedFusion | null | undefined): LinearModel | null {
  if (learned === "off") return null;
  const model = (models ??= parseModels(WEIGHTS as Artifact)).get(tier);
  if (!model || (model.sha256 !== null && sha256 !== null && model.sha256 !== sha256)) return null;
  if (!model.isDefault && learned !== "all") return null;
  return model.semantic === (tier !== "lexical") ? model : null;
}

/** The cosine's weight ``a``: the weak weight when the best lexical score is under the gate (``hybrid.semantic_weight``). */
export function semanticWeight(lexical: Hit[], [weak, strong, gate]: Params): number {
  return (lexical.length ? (lexical[0] as Hit)[1] : 0) < gate ? weak : strong;
}

/** The :data:`CANDIDATES` docs of highest cosine (at least ``minCosine``, ``allowed``), ties by doc id. */
function semanticTop(cosines: Float32Array, allowed: Allowed, minCosine: number): number[] {
  const docs: number[] = [];
  for (let doc = 0; doc < cosines.length; doc++) if ((cosines[doc] as number) >= minCosine && (allowed === null || allowed(doc))) docs.push(doc);
  docs.sort((a, b) => (cosines[b] as number) - (cosines[a] as number) || a - b);
  return docs.slice(0, CANDIDATES);
}

/** (the semantic top, the candidates: the lexical top then the semantic top's others, each candidate's cosine); the
 * semantic top is drawn from ``pool`` when given (a partitioned build's probed clusters), else from ``cosines``
 * (``hybrid.candidates``). */
export function candidates(lexical: Hit[], cosines: Float32Array, allowed: Allowed, minCosine: number, pool: Float32Array | null): [number[], number[], number[]] {
  const semantic = semanticTop(pool ?? cosines, allowed, minCosine);
  const docs = [...new Set([...lexical.map(([doc]) => doc), ...semantic])];
  return [semantic, docs, docs.map((doc) => cosines[doc] as number)];
}

/** The learned fusion (``fusion_model.fuse``): ``sigmoid(b + w · x)`` over ``hybrid.fuse``'s candidates (without
 * cosines, the lexical top alone); ``idf`` the query's idf, read by a model of ``coverage_idf``. */
export function learnedFuse(queryTerms: Set<string>, lexical: Hit[], cosines: Float32Array | null, limit: number, model: LinearModel, allowed: Allowed, params: Params, known: number, pool: Float32Array | null, idf: Map<string, number> | null): Hit[] {
  if (model.idfCoverage && idf === null) throw new TypeError(`a model of ${IDF_COVERAGE} needs the query's idf`);
  const [, , gate, minCosine] = params;
  const a = semanticWeight(lexical, params);
  const [semantic, docs, values] = cosines === null ? [[], lexical.map(([doc]) => doc), null] : candidates(lexical, cosines, allowed, minCosine, pool);
  const nTerms = Math.max(1, queryTerms.size);
  // the query words' idf summed in Python's order (a set's iteration order differs, but these sums are of a handful
  // of terms whose order moves the last bit at most: within the parity's 1e-6)
  let idfTotal = 0;
  if (model.idfCoverage) for (const term of queryTerms) idfTotal += (idf as Map<string, number>).get(term) ?? 0;
  const best = lexical.length ? (lexical[0] as Hit)[1] : 0;
  const lexRank = new Map(lexical.map(([doc, score, terms], rank) => [doc, [rank, score, terms] as [number, number, string[]]]));
  const semRank = new Map(semantic.map((doc, rank) => [doc, rank]));
  const topCos = values?.length ? Math.max(...values) : 0;
  const weak = best < gate ? 1 : 0;
  const lenTerms = Math.log1p(queryTerms.size);
  const fused: Hit[] = docs.map((doc, i) => {
    const [rank, score, terms] = lexRank.get(doc) ?? [-1, 0, []];
    const hit = new Set(terms.filter((t) => queryTerms.has(t)));
    let coverage = hit.size / nTerms;
    if (model.idfCoverage) {
      let sum = 0;
      for (const term of hit) sum += (idf as Map<string, number>).get(term) ?? 0;
      coverage = idfTotal > 0 ? sum / idfTotal : 0;
    }
    const cos = values === null ? 0 : (values[i] as number);
    const sRank = semRank.get(doc) ?? -1;
    const row = [score, rank >= 0 ? 1 : 0, rank >= 0 ? 1 / (1 + rank) : 0, best > 0 ? score / best : 0, best, coverage, Math.log1p(hit.size), lenTerms, known, score * lenTerms];
    if (values !== null) row.push(cos, cos - topCos, sRank >= 0 ? 1 / (1 + sRank) : 0, cos * weak, score * cos, cos * (1 - known), cos * lenTerms);
    const meaning = cos >= minCosine ? a * cos : 0;
    return [doc, model.score(row), values !== null && meaning > (1 - a) * score ? [...terms, SEMANTIC_TERM] : [...terms]];
  });
  fused.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  return fused.slice(0, limit);
}

function logit(p: number): number {
  const q = Math.min(Math.max(p, 1e-15), 1 - 1e-15);
  return Math.log(q / (1 - q));
}

/** ``hits`` with the first ``ids.length`` rescored by the model's name weights, re-sorted (``fusion_model.name_rescored``). */
export function nameRescored(hits: Hit[], ids: string[], queryTerms: Set<string>, analyze: (text: string) => string[], model: LinearModel): Hit[] {
  const head: Hit[] = hits.slice(0, ids.length).map(([doc, score, terms], i) => {
    const match = nameMatch(queryTerms, ids[i] as string, analyze);
    const lift = model.name[0] * match + (match >= NAME_MIN ? model.name[1] : 0);
    return [doc, lift ? 1 / (1 + Math.exp(-(logit(score) + lift))) : score, terms];
  });
  head.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return [...head, ...hits.slice(head.length)];
}

/** The share of the query's word terms some tool's text has (``Searcher.known_share``), from postings already read. */
export async function knownShare(searcher: Searcher, terms: Set<string>): Promise<number> {
  if (!terms.size) return 1;
  const part = await searcher.part("tools");
  const words = part.spaces.find((s: Artifact) => s.name === "words");
  let known = 0;
  for (const term of terms) if ((await searcher.posting("tools", part, words, term)) !== null) known += 1;
  return known / terms.size;
}

/** Each of the query's word terms → its idf among the tools; a word no tool has, an unseen word's idf
 * ``ln(1 + n) + 1`` (``Searcher.term_idf``), from postings already read. */
export async function termIdf(searcher: Searcher, terms: Set<string>): Promise<Map<string, number>> {
  const part = await searcher.part("tools");
  const words = part.spaces.find((s: Artifact) => s.name === "words");
  const unseen = Math.log(1 + part.nDocs) + 1;
  const out = new Map<string, number>();
  for (const term of terms) out.set(term, (await searcher.posting("tools", part, words, term))?.idf ?? unseen);
  return out;
}

/** ``rank(cosines, limit, pool)``: the learned fusion of a query's candidates for some cosines (null: the lexical model). */
export type LearnedRank = (cosines: Float32Array | null, limit: number, pool: Float32Array | null) => Hit[];

/** The query's terms and its learned ranking (``Searcher._learned_rank``): the evidence that does not depend on the
 * cosines (known-word share, idf) is read once, for a partitioned build's head guess and for the ranking itself. */
export async function learnedRank(searcher: Searcher, query: string, lexical: Hit[], model: LinearModel, allowed: Allowed, params: Params): Promise<[Set<string>, LearnedRank]> {
  const terms = new Set(searcher.words(query));
  const idf = model.idfCoverage ? await termIdf(searcher, terms) : null;
  const known = await knownShare(searcher, terms);
  return [terms, (cosines, limit, pool) => learnedFuse(terms, lexical, cosines, limit, model, allowed, params, known, pool, idf)];
}

/** The learned fusion of a tools search and its name stage (``Searcher._first_stage`` / ``_without_vectors`` with a
 * model, then ``_name_boosted``): the top ``limit`` of ``learnedRank``'s ranking. */
export async function learnedRanked(searcher: Searcher, [terms, rank]: [Set<string>, LearnedRank], cosines: Float32Array | null, limit: number, model: LinearModel, pool: Float32Array | null, nameDepth: number): Promise<Hit[]> {
  const fused = rank(cosines, Math.max(limit, nameDepth), pool);
  if (!terms.size || !model.name.some(Boolean)) return fused.slice(0, limit);
  const ids = (await searcher.docs("tools", fused.slice(0, nameDepth))).map((doc) => String(doc.pointer.tool_id));
  return nameRescored(fused, ids, terms, (text) => searcher.words(text), model).slice(0, limit);
}
