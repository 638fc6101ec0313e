/** The semantic tier in TypeScript: the build's vectors and the query embedded by the same model, fused with the
 * lexical ranking exactly as ``toolcat.reader.search.semantic``, ``hybrid`` and ``fusion_model`` do.
 *
 * A chunk of its own (with onnxruntime, imported by it on first use): loaded by the first search over a build
 * that has vectors, when the host gave the reader a model (``Catalog.open(url, { model: { url } })``). The model is
 * what ``toolcat build --publish-model DIR`` writes: ``model.json`` (``toolcat-model-1``: the embedder's spec and
 * weights sha256, the graph's and the vocabulary's path, sha256 and size), the ONNX graph the Python reader runs,
 * and the WordPiece vocabulary. ``model.json`` must name the build's embedder and weights sha256 (the vectors
 * meta's); the graph and vocabulary are checked against its sha256 before use, and ``model.sha256`` pins
 * ``model.json`` itself. Without a model, or when any check fails, the reader answers by words and
 * ``stats().search_tier`` says why (as the Python reader does). docs/search.md, "The semantic tier in TypeScript". */
// Only types come from the entry's modules (search.ts passes what it needs), as in expand.ts.
import type { Hit, Searcher } from "./search.js";
import type { Artifact } from "./store.js";
import { nameMatch } from "./expand.js";
import { WEIGHTS } from "./fusionWeights.js";
import { WordPiece } from "./wordpiece.js";

type Allowed = ((docId: number) => boolean) | null;
type Params = [number, number, number, number];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Ort = any;

/** What the host gives the reader for the semantic tier (``OpenOptions.model``). */
export interface ModelOptions {
  /** model.json's URL (``toolcat build --publish-model``), absolute or relative to the catalogue's base URL. */
  url: string | URL;
  /** ``sha256:<hex>`` (or the hex) of model.json: when given, model.json is checked against it. */
  sha256?: string;
  /** The onnxruntime module that runs the graph (``onnxruntime-node`` or ``onnxruntime-web``); by default
   * ``import("onnxruntime-node")`` in Node (``onnxruntime-web`` when that is absent), ``import("onnxruntime-web")`` elsewhere. */
  ort?: Ort;
  /** The ``fetch`` model files are read with (default: the catalogue's). */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
}

/** Per embedder kind: (weight weak, weight strong, gate, min cosine) (``hybrid.FUSION``). */
export const FUSION: Record<string, Params> = {
  onnx: [0.6, 0.6, 0.15, 0.1],
  "sentence-transformers": [0.6, 0.6, 0.15, 0.2],
  model2vec: [0.5, 0.3, 0.2, 0.2],
};
export const CANDIDATES = 50;
export const HIERARCHY = 0.2;
export const SEMANTIC_TERM = "~semantic";
const NAME_BOOST = 0.1;
const NAME_MIN = 0.7;
const NAME_DEPTH = 10;
const MAX_ANCESTORS = 32;
const MODEL_FORMAT = "toolcat-model-1";
const FUSION_FORMAT = "toolcat-fusion-1";
const ENCODINGS = ["int8", "int4"];
const LEXICAL_FEATURES = ["lex", "lex_in", "lex_rank", "lex_share", "lex_best", "coverage", "matched", "query_terms", "known", "lex_x_len"];
const SEMANTIC_FEATURES = [...LEXICAL_FEATURES, "cos", "cos_gap", "sem_rank", "cos_x_weak", "lex_x_cos", "cos_x_unknown", "cos_x_len"];
const f32 = Math.fround;

/** float32 rows from quantized bytes and one scale per row (``embedding.dequantize``), float32 arithmetic as numpy's. */
export function dequantize(data: Uint8Array, scales: number[], dim: number, dtype: string): Float32Array[] {
  const rows: Float32Array[] = [];
  const width = dtype === "int4" ? Math.ceil(dim / 2) : dim;
  if (data.length !== width * scales.length) throw new RangeError(`${data.length} bytes for ${scales.length} rows of ${dim}`);
  scales.forEach((scale, r) => {
    const row = new Float32Array(dim);
    if (dtype === "int4") {
      const step = f32(f32(scale) / 7);
      for (let i = 0; i < dim; i++) {
        const byte = data[r * width + (i >> 1)] as number;
        row[i] = f32(((i & 1 ? byte >> 4 : byte & 0x0f) - 8) * step);
      }
    } else {
      const step = f32(f32(scale) / 127);
      for (let i = 0; i < dim; i++) row[i] = f32((((data[r * width + i] as number) << 24) >> 24) * step);
    }
    rows.push(row);
  });
  return rows;
}

function base64(text: unknown): Uint8Array {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) throw new TypeError("rows are not base64");
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function dot(row: Float32Array, vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += (row[i] as number) * (vector[i] as number);
  return f32(sum);
}

/** One trained linear model of fusion_weights.json (``fusion_model.Model``). */
class LinearModel {
  constructor(readonly names: string[], readonly weights: number[], readonly bias: number, readonly sha256: string | null, readonly isDefault: boolean, readonly name: [number, number]) {
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (!(same(names, LEXICAL_FEATURES) || same(names, SEMANTIC_FEATURES)) || weights.length !== names.length) throw new TypeError("fusion model features");
    if (![...weights, bias, ...name].every(Number.isFinite)) throw new TypeError("a fusion model with a weight that is not finite");
  }
  get semantic(): boolean {
    return this.names.length === SEMANTIC_FEATURES.length;
  }
  score(x: number[]): number {
    let z = this.bias;
    this.weights.forEach((w, i) => (z += w * (x[i] as number)));
    return z > -700 ? 1 / (1 + Math.exp(-z)) : 0;
  }
}

/** The trained model for ``tier`` with these weights, when fusion_weights.json has one used by default (``fusion_model.model_for``). */
export function modelFor(tier: string, sha256: string | null): LinearModel | null {
  let models: Map<string, LinearModel>;
  try {
    const data = WEIGHTS as Artifact;
    if (data?.format !== FUSION_FORMAT) return null;
    models = new Map(
      Object.entries(data.models).map(([name, e]: [string, Artifact]) => [
        name,
        new LinearModel(e.features, e.weights.map(Number), Number(e.bias), e.weights_sha256 ?? null, e.default ?? true, (e.name ?? [0, 0]).map(Number)),
      ]),
    );
  } catch {
    return null;
  }
  const model = models.get(tier);
  if (!model || (model.sha256 !== null && sha256 !== null && model.sha256 !== sha256)) return null;
  if (model.isDefault !== true || model.semantic !== (tier !== "lexical")) return null;
  return model;
}

/** The cosine's weight ``a``: the weak weight when the best lexical score is under the gate. */
function semanticWeight(lexical: Hit[], [weak, strong, gate]: Params): number {
  return (lexical.length ? (lexical[0] as Hit)[1] : 0) < gate ? weak : strong;
}

/** The :data:`CANDIDATES` docs of highest cosine (at least ``minCosine``, ``allowed``), ties by doc id. */
function semanticTop(cosines: Float32Array, allowed: Allowed, minCosine: number): number[] {
  const docs: number[] = [];
  for (let doc = 0; doc < cosines.length; doc++) if ((cosines[doc] as number) >= minCosine && (allowed === null || allowed(doc))) docs.push(doc);
  docs.sort((a, b) => (cosines[b] as number) - (cosines[a] as number) || a - b);
  return docs.slice(0, CANDIDATES);
}

/** (the semantic top, the candidates: the lexical top then the semantic top's others, each candidate's cosine). */
function candidates(lexical: Hit[], cosines: Float32Array, allowed: Allowed, minCosine: number): [number[], number[], number[]] {
  const semantic = semanticTop(cosines, allowed, minCosine);
  const docs = [...new Set([...lexical.map(([doc]) => doc), ...semantic])];
  return [semantic, docs, docs.map((doc) => cosines[doc] as number)];
}

/** The best ``limit`` of the hand-tuned fusion (``hybrid.fuse``). */
export function fuse(lexical: Hit[], cosines: Float32Array, limit: number, allowed: Allowed, params: Params): Hit[] {
  const minCosine = params[3];
  const a = semanticWeight(lexical, params);
  const lex = new Map(lexical.map(([doc, score, terms]) => [doc, [score, terms] as [number, string[]]]));
  const [, docs, values] = candidates(lexical, cosines, allowed, minCosine);
  const fused: Hit[] = docs.map((doc, i) => {
    const [score, terms] = lex.get(doc) ?? [0, []];
    const cosine = values[i] as number;
    const meaning = cosine >= minCosine ? a * cosine : 0;
    const total = (1 - a) * score + meaning;
    return [doc, Math.min(1, total), meaning > (1 - a) * score ? [...terms, SEMANTIC_TERM] : [...terms]];
  });
  fused.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  return fused.slice(0, limit);
}

/** The learned fusion (``fusion_model.fuse``): ``sigmoid(b + w · x)`` over the same candidates. */
export function learnedFuse(queryTerms: Set<string>, lexical: Hit[], cosines: Float32Array, limit: number, model: LinearModel, allowed: Allowed, params: Params, known: number): Hit[] {
  const [, , gate, minCosine] = params;
  const a = semanticWeight(lexical, params);
  const [semantic, docs, values] = candidates(lexical, cosines, allowed, minCosine);
  const nTerms = Math.max(1, queryTerms.size);
  const best = lexical.length ? (lexical[0] as Hit)[1] : 0;
  const lexRank = new Map(lexical.map(([doc, score, terms], rank) => [doc, [rank, score, terms] as [number, number, string[]]]));
  const semRank = new Map(semantic.map((doc, rank) => [doc, rank]));
  const topCos = values.length ? Math.max(...values) : 0;
  const weak = best < gate ? 1 : 0;
  const lenTerms = Math.log1p(queryTerms.size);
  const fused: Hit[] = docs.map((doc, i) => {
    const [rank, score, terms] = lexRank.get(doc) ?? [-1, 0, []];
    const matched = new Set(terms.filter((t) => queryTerms.has(t))).size;
    const cos = values[i] as number;
    const sRank = semRank.get(doc) ?? -1;
    const row = [
      score, rank >= 0 ? 1 : 0, rank >= 0 ? 1 / (1 + rank) : 0, best > 0 ? score / best : 0, best, matched / nTerms, Math.log1p(matched), lenTerms, known, score * lenTerms,
      cos, cos - topCos, sRank >= 0 ? 1 / (1 + sRank) : 0, cos * weak, score * cos, cos * (1 - known), cos * lenTerms,
    ];
    const meaning = cos >= minCosine ? a * cos : 0;
    return [doc, model.score(row), meaning > (1 - a) * score ? [...terms, SEMANTIC_TERM] : [...terms]];
  });
  fused.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  return fused.slice(0, limit);
}

function logit(p: number): number {
  const q = Math.min(Math.max(p, 1e-15), 1 - 1e-15);
  return Math.log(q / (1 - q));
}

/** ``hits`` with the first ``ids.length`` raised by the name match (hand-tuned boost, or a learned model's weights). */
function nameApplied(hits: Hit[], ids: string[], queryTerms: Set<string>, analyze: (text: string) => string[], model: LinearModel | null): Hit[] {
  const head: Hit[] = hits.slice(0, ids.length).map(([doc, score, terms], i) => {
    const match = nameMatch(queryTerms, ids[i] as string, analyze);
    if (model === null) return match >= NAME_MIN ? [doc, Math.min(1, score + NAME_BOOST * match), terms] : [doc, score, terms];
    const lift = model.name[0] * match + (match >= NAME_MIN ? model.name[1] : 0);
    return [doc, lift ? 1 / (1 + Math.exp(-(logit(score) + lift))) : score, terms];
  });
  head.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return [...head, ...hits.slice(head.length)];
}

/** Each tool's cosine less ``weight`` times how far its best ancestor trails the best of all (``embedding.with_ancestors``). */
export function withAncestors(cosines: Float32Array, nodes: Float32Array, ancestors: number[][], weight: number): Float32Array {
  const best = ancestors.map((row) => row.reduce((m, node) => Math.max(m, node >= 0 && node < nodes.length ? (nodes[node] as number) : -2), -2));
  const has = best.filter((b) => b > -2);
  if (!has.length) return cosines;
  const top = Math.max(...has);
  return cosines.map((cos, i) => ((best[i] as number) > -2 ? f32(cos + f32(weight * f32((best[i] as number) - top))) : cos));
}

/** The published model: its tokenizer and an onnxruntime session over the graph. */
class Encoder {
  constructor(readonly tokenizer: WordPiece, private readonly ort: Ort, private readonly session: Ort, readonly dim: number, readonly runtime: string) {}

  /** The query's l2-normalised float32 row (``_OrtEncoder.encode`` of one text). */
  async embed(text: string): Promise<Float32Array> {
    const ids = this.tokenizer.encode(text);
    const shape = [1, ids.length];
    const feeds: Record<string, unknown> = {
      input_ids: new this.ort.Tensor("int64", BigInt64Array.from(ids, BigInt), shape),
      attention_mask: new this.ort.Tensor("int64", new BigInt64Array(ids.length).fill(1n), shape),
    };
    const wanted: string[] = this.session.inputNames;
    if (wanted.includes("token_type_ids")) feeds.token_type_ids = new this.ort.Tensor("int64", new BigInt64Array(ids.length), shape);
    const output = await this.session.run(Object.fromEntries(wanted.map((name) => [name, feeds[name]])));
    const data = output[this.session.outputNames[0]].data as Float32Array;
    if (data.length !== this.dim) throw new RangeError(`the model gave ${data.length} values, not ${this.dim}`);
    let sum = 0;
    for (const x of data) sum += x * x;
    const norm = f32(Math.max(f32(Math.sqrt(sum)), 1e-12));
    return data.map((x) => f32(x / norm));
  }
}

async function defaultOrt(): Promise<[Ort, string]> {
  const node = typeof process === "object" && typeof (process as Artifact)?.versions?.node === "string";
  const names = node ? ["onnxruntime-node", "onnxruntime-web"] : ["onnxruntime-web"];
  for (const name of names) {
    try {
      const mod = await import(/* @vite-ignore */ name);
      return [mod.default?.InferenceSession ? mod.default : mod, name];
    } catch {
      // the next runtime
    }
  }
  throw new Error(`no onnxruntime is installed here (npm install ${names.join(" or ")}, or pass model.ort)`);
}

/** The semantic tier of one searcher: a reason it cannot answer, or the model and the build's vectors. */
export class SemanticTier {
  reason: string | null = null;
  model: string | null = null;
  runtime = "";
  private encoder: Encoder | null = null;
  private meta: Artifact = null;
  private dtype = "int8";
  private matrices = new Map<string, Float32Array[]>();
  private ancestors: number[][] | null = null;
  private queries = new Map<string, Float32Array>();

  private constructor() {}

  /** The tier for ``searcher``'s build, with the model ``options`` name; ``reason`` says why it cannot answer. */
  static async open(searcher: Searcher, options: ModelOptions, base: string, hash: (data: Uint8Array) => Promise<string>): Promise<SemanticTier> {
    const tier = new SemanticTier();
    try {
      tier.reason = await tier.check(searcher, options, base, hash);
    } catch (err) {
      tier.reason = `the model could not be loaded (${(err as Error)?.name}: ${String((err as Error)?.message).slice(0, 200)})`;
    }
    return tier;
  }

  private async check(searcher: Searcher, options: ModelOptions, base: string, hash: (data: Uint8Array) => Promise<string>): Promise<string | null> {
    let meta: Artifact;
    try {
      meta = await searcher.fetch(searcher.manifest.vectors);
    } catch (err) {
      return `the build's vectors meta could not be read (${(err as Artifact)?.code ?? "ERROR"}: ${(err as Error)?.message})`;
    }
    if (meta?.tools?.partition !== undefined) {
      return "the build's tool vectors are partitioned (a catalogue of more than 2,000 tools), which the TypeScript reader does not read yet";
    }
    const dtype = String(meta?.encoding?.dtype ?? "int8");
    if (!ENCODINGS.includes(dtype)) return `the build's vectors are ${dtype}, which this reader does not know (upgrade the reader)`;
    const model = meta.model ?? {};
    const fetchFn = options.fetch ?? globalThis.fetch;
    const modelUrl = new URL(String(options.url), base);
    const read = async (url: URL, digest: string | null, size: number | null): Promise<Uint8Array> => {
      const response = await fetchFn(url.href);
      if (!response.ok) throw new Error(`${url.href} answered HTTP ${response.status}`);
      const data = new Uint8Array(await response.arrayBuffer());
      if (digest !== null) {
        const got = await hash(data);
        if (got !== digest || (size !== null && data.length !== size)) throw new Error(`${url.href} has sha256 ${got.slice(0, 12)} (${data.length} bytes), not ${digest.slice(0, 12)} (${size} bytes)`);
      }
      return data;
    };
    const pin = options.sha256 ? String(options.sha256).toLowerCase().replace(/^sha256:/, "") : null;
    const info = JSON.parse(new TextDecoder().decode(await read(modelUrl, pin, null)));
    if (info?.format !== MODEL_FORMAT) return `${modelUrl.href} is not a ${MODEL_FORMAT} model.json (toolcat build --publish-model writes one)`;
    if (info.spec !== model.spec || info.weights_sha256 !== model.weights_sha256) {
      return `the model at ${modelUrl.href} is ${info.spec} (weights sha256 ${String(info.weights_sha256).slice(0, 12)}), the build's vectors were made with ${model.spec} (${String(model.weights_sha256).slice(0, 12)})`;
    }
    const dim = Number(model.dim);
    if (Number(info.dim) !== dim) return `the build's vectors have ${model.dim} dimensions, the model ${info.dim}`;
    const [graph, vocab] = await Promise.all([
      read(new URL(info.graph.path, modelUrl), String(info.graph.sha256), Number(info.graph.bytes)),
      read(new URL(info.vocab.path, modelUrl), String(info.vocab.sha256), Number(info.vocab.bytes)),
    ]);
    const tokenizer = WordPiece.fromLines(new TextDecoder().decode(vocab), Number(info.max_length), info.lowercase !== false);
    const [ort, runtime] = options.ort ? [options.ort, "the host's onnxruntime"] : await defaultOrt();
    if (ort.env?.wasm) ort.env.wasm.numThreads = 1;
    const session = await ort.InferenceSession.create(graph, { graphOptimizationLevel: "all", intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: "sequential" });
    this.encoder = new Encoder(tokenizer, ort, session, dim, runtime);
    this.meta = meta;
    this.dtype = dtype;
    this.model = String(model.spec);
    this.runtime = runtime;
    return null;
  }

  /** The query's embedding (cached for the last few queries). */
  private async queryVector(query: string): Promise<Float32Array> {
    let vector = this.queries.get(query);
    if (!vector) {
      vector = await (this.encoder as Encoder).embed(query);
      if (this.queries.size >= 256) this.queries.delete(this.queries.keys().next().value as string);
      this.queries.set(query, vector);
    }
    return vector;
  }

  /** The part's rows (all shards, fetched together once), and the tools' ancestor node rows. */
  private async matrix(searcher: Searcher, part: string): Promise<Float32Array[]> {
    const known = this.matrices.get(part);
    if (known) return known;
    const dim = Number(this.meta.model.dim);
    const shards: Artifact[] = this.meta[part].shards;
    const files = await Promise.all(shards.map((shard) => searcher.fetch(shard.ref)));
    let ancestors: number[][] | null = part === "tools" ? [] : null;
    const rows: Float32Array[] = [];
    shards.forEach((shard, i) => {
      const data = files[i];
      if (ancestors !== null && Array.isArray(data.ancestors)) ancestors.push(...data.ancestors.map((row: number[]) => row.slice(0, MAX_ANCESTORS).map(Number)));
      else ancestors = null;
      const block = dequantize(base64(data.q), data.scale.map(Number), dim, this.dtype);
      if (block.length !== Number(shard.count) || Number(data.first) !== Number(shard.first) || Number(data.count) !== block.length) {
        throw new RangeError(`vector shard ${shard.ref.path} holds ${block.length} rows, not ${shard.count}`);
      }
      rows.push(...block);
    });
    if (rows.length !== Number(this.meta[part].n_docs)) throw new RangeError(`the ${part} vectors hold ${rows.length} rows, not ${this.meta[part].n_docs}`);
    this.matrices.set(part, rows);
    if (ancestors !== null && (ancestors as number[][]).length === rows.length) this.ancestors = ancestors;
    return rows;
  }

  /** The query's cosine with every doc of ``part`` (with the hierarchy term for tools: ``SemanticTier.scores``). */
  async scores(searcher: Searcher, part: string, query: string): Promise<Float32Array> {
    const vector = await this.queryVector(query);
    const [rows, nodeRows] = await Promise.all([this.matrix(searcher, part), this.matrix(searcher, "nodes")]);
    const cosines = Float32Array.from(rows, (row) => dot(row, vector));
    if (part !== "tools" || !HIERARCHY || this.ancestors === null) return cosines;
    return withAncestors(cosines, Float32Array.from(nodeRows, (row) => dot(row, vector)), this.ancestors, HIERARCHY);
  }

  /** The fused top ``limit`` (``Searcher._first_stage`` with the tier); on broken vectors the lexical top, and the
   * tier turns itself off with the reason. */
  async ranked(searcher: Searcher, partName: string, query: string, allowed: Allowed, limit: number): Promise<Hit[]> {
    const lexical = await searcher.topK(partName, query, Math.max(limit, CANDIDATES), allowed);
    const params = FUSION[String(this.meta.model.kind)] ?? (FUSION["sentence-transformers"] as Params);
    const model = partName === "tools" ? modelFor(this.model as string, this.meta.model.weights_sha256 ?? null) : null;
    try {
      const cosines = await this.scores(searcher, partName, query);
      const part = await searcher.part(partName);
      if (cosines.length < part.nDocs) throw new RangeError(`${cosines.length} ${partName} vectors for ${part.nDocs} documents`);
      if (partName !== "tools") return fuse(lexical, cosines, limit, allowed, params);
      const depth = Math.max(limit, NAME_DEPTH);
      const terms = new Set(searcher.words(query));
      const fused = model !== null ? learnedFuse(terms, lexical, cosines, depth, model, allowed, params, await knownShare(searcher, terms)) : fuse(lexical, cosines, depth, allowed, params);
      if (!terms.size || (model === null ? NAME_BOOST <= 0 : !model.name.some(Boolean))) return fused.slice(0, limit);
      const head = fused.slice(0, NAME_DEPTH);
      const ids = (await searcher.docs("tools", head)).map((doc) => String(doc.pointer.tool_id));
      return nameApplied(fused, ids, terms, (text) => searcher.words(text), model).slice(0, limit);
    } catch (err) {
      if ((err as Artifact)?.code === undefined && !(err instanceof TypeError || err instanceof RangeError)) throw err;
      this.reason = `the build's vectors are malformed (${(err as Error).name}: ${String((err as Error).message).slice(0, 80)}); answering by words`;
      return lexical.slice(0, limit);
    }
  }
}

/** The share of the query's word terms some tool's text has (``Searcher.known_share``), from postings already read. */
async function knownShare(searcher: Searcher, terms: Set<string>): Promise<number> {
  if (!terms.size) return 1;
  const part = await searcher.part("tools");
  const words = part.spaces.find((s: Artifact) => s.name === "words");
  let known = 0;
  for (const term of terms) if ((await searcher.posting("tools", part, words, term)) !== null) known += 1;
  return known / terms.size;
}
