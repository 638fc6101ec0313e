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
import type { Artifact, Store } from "./store.js";
import { nameMatch } from "./expand.js";
import { CANDIDATES, NAME_MIN, SEMANTIC_TERM, candidates, learnedRank, learnedRanked, modelFor, semanticWeight, type LearnedFusion, type LinearModel, type Params } from "./fusionModel.js";
import { WordPiece } from "./wordpiece.js";

type Allowed = ((docId: number) => boolean) | null;
/** A fusion of the candidates for some cosines (``SemanticTier.head_guess``'s ``rank``): the top ``limit``. */
type Rank = (cosines: Float32Array, limit: number, pool: Float32Array | null) => Hit[];
/** What the head guess uses of the searcher's doc fetching (TypeScript-private there; ``Searcher._doc_ref``, ``_doc``). */
interface DocFetching {
  store: Store;
  pendingPages: Artifact[];
  docRef(part: unknown, docId: number, fetchPage: boolean): Promise<Artifact>;
  doc(part: unknown, docId: number): Promise<Artifact>;
}
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
  /** The learned fusion (fusionModel.ts; Python's ``TOOLCAT_LEARNED_FUSION``): ``"all"`` ranks by every model of
   * fusion_weights.json that fits the build (``minilm-onnx``, ``minilm-tools``, ``lexical``), ``"off"`` by the hand
   * fusion; unset, by the models the weights mark ``"default": true`` (none yet). */
  learnedFusion?: LearnedFusion;
}

/** Per embedder kind: (weight weak, weight strong, gate, min cosine) (``hybrid.FUSION``). */
export const FUSION: Record<string, Params> = {
  onnx: [0.6, 0.6, 0.15, 0.1],
  "sentence-transformers": [0.6, 0.6, 0.15, 0.2],
  model2vec: [0.5, 0.3, 0.2, 0.2],
};
export { CANDIDATES, SEMANTIC_TERM };
export const HIERARCHY = 0.2;
const NAME_BOOST = 0.1;
const NAME_DEPTH = 10;
const MAX_ANCESTORS = 32;
/** The most single rows a reader of a partitioned build keeps (``semantic.MAX_ROWS``). */
const MAX_ROWS = 4096;
/** Above this many tools the head guess is the sure head alone (``semantic.SURE_HEAD_ABOVE``). */
const SURE_HEAD_ABOVE = 50_000;
const MODEL_FORMAT = "toolcat-model-1";
/** The partitioned vectors format this reader reads (``semantic.PARTITIONED_FORMAT``: clusters, centroids one
 * character a code, a row table of three levels, rows as residual codes against a centroid's int4 codes, two a
 * character; -9: the row files' node rows in their group of the table), and the older one it reads too (-8: each row
 * file holds its node rows; ``READ_PARTITIONED_FORMATS``). */
const PARTITIONED_FORMAT = "toolcat-vectors-11";
const READ_PARTITIONED_FORMATS = ["toolcat-vectors-8", "toolcat-vectors-9", "toolcat-vectors-10", PARTITIONED_FORMAT];
/** The formats whose row files carry their Merkle path to their page's root, listed by their group: no row pages
 * (``PROVEN_ROW_FORMATS``, -10). */
const PROVEN_ROW_FORMATS = ["toolcat-vectors-10", PARTITIONED_FORMAT];
/** The formats whose row groups and cluster shards carry their paths to roots the meta lists: no row directory, no
 * cluster pages (``PROVEN_TABLE_FORMATS``, -11). */
const PROVEN_TABLE_FORMATS = [PARTITIONED_FORMAT];
/** The characters of a centroid's code, in order: character ``n`` is the code ``n - 32`` (``RESIDUAL_ALPHABET``). */
const RESIDUAL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** The characters of a residual code, in order: character ``(a + 4) * 9 + b + 4`` holds the differences ``a`` then
 * ``b`` (``PAIR_ALPHABET``). */
const PAIR_ALPHABET = "#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrst";
/** What a cluster's spread adds to its centroid's cosine when clusters are ranked for a probe (``semantic.SPREAD``). */
const SPREAD = 1.0;
const ENCODINGS = ["int8", "int4"];
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

/** The best ``limit`` of the hand-tuned fusion (``hybrid.fuse``). */
export function fuse(lexical: Hit[], cosines: Float32Array, limit: number, allowed: Allowed, params: Params, pool: Float32Array | null = null): Hit[] {
  const minCosine = params[3];
  const a = semanticWeight(lexical, params);
  const lex = new Map(lexical.map(([doc, score, terms]) => [doc, [score, terms] as [number, string[]]]));
  const [, docs, values] = candidates(lexical, cosines, allowed, minCosine, pool);
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

/** ``hits`` with the first ``ids.length`` raised by the hand-tuned name boost (``hybrid.name_boosted``). */
function nameApplied(hits: Hit[], ids: string[], queryTerms: Set<string>, analyze: (text: string) => string[]): Hit[] {
  const head: Hit[] = hits.slice(0, ids.length).map(([doc, score, terms], i) => {
    const match = nameMatch(queryTerms, ids[i] as string, analyze);
    return match >= NAME_MIN ? [doc, Math.min(1, score + NAME_BOOST * match), terms] : [doc, score, terms];
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

/** The most bytes of model.json read; the graph and vocabulary are read up to the size model.json gives them. */
const MODEL_JSON_BYTES = 1 << 20;
/** A file model.json lists: a plain name in its own folder (``graph.<sha256[:16]>.onnx``, ``vocab.<...>.txt``). */
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** A model file's failure that another attempt would not mend (a 4xx answer, a body over its size). */
class Refused extends Error {}

/** A response's body, read up to ``limit`` bytes: more is an error (a host cannot make the reader hold more);
 * ``moved`` is called at each chunk (the attempt's deadline starts again). */
async function capped(response: Response, limit: number, where: string, moved: () => void): Promise<Uint8Array> {
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = reader ? [] : [new Uint8Array(await response.arrayBuffer())];
  let total = chunks[0]?.length ?? 0;
  for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
    moved();
    total += next.value.length;
    if (total > limit) break;
    chunks.push(next.value);
  }
  if (total > limit) {
    await reader?.cancel().catch(() => undefined);
    throw new Refused(`${where} holds more than the ${limit} bytes it may`);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) out.set(chunk, (at += chunk.length) - chunk.length);
  return out;
}

/** The catalogue's fetch policy (``Catalog.open``'s ``timeout``, ``retries`` and ``maxFileBytes``: its source's). */
interface Policy {
  timeout: number;
  retries: number;
  maxFileBytes: number;
}

/** A model file's bytes under the catalogue's policy (source.ts ``HttpSource.get``): each attempt gets ``timeout``
 * seconds for the answer's headers and again for each chunk of its body (a 58 MB graph on a slow line is not cut off
 * while it moves, a host that stops sending is), a network error, a timeout, HTTP 5xx or 429 is tried again
 * ``retries`` times after the same backoff (0.1 s doubling, at most 1 s), another status is an error at once; never
 * read past ``limit`` bytes. */
async function readModelFile(fetchFn: (input: string, init?: RequestInit) => Promise<Response>, href: string, limit: number, policy: Policy): Promise<Uint8Array> {
  let last = "";
  for (let attempt = 0; attempt <= policy.retries; attempt++) {
    if (attempt) await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** (attempt - 1), 1000)));
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), policy.timeout * 1000);
    };
    arm();
    try {
      const response = await fetchFn(href, { signal: controller.signal });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        if (response.status < 500 && response.status !== 429) throw new Refused(`${href} answered HTTP ${response.status}`);
        last = `HTTP ${response.status}`;
        continue;
      }
      return await capped(response, limit, href, arm);
    } catch (err) {
      if (err instanceof Refused) throw err;
      last = controller.signal.aborted ? `no answer within the ${policy.timeout} s timeout (timed out)` : `${(err as Error)?.name}: ${(err as Error)?.message}`.slice(0, 200);
    } finally {
      clearTimeout(timer);
    }
  }
  throw new Error(`${href} could not be read in ${policy.retries + 1} attempts (last: ${last})`);
}

/** Whether ``page`` (``index_pages``) is page ``number`` of a table of ``total`` files in ``folder``, ``perPage`` a page
 * (``semantic.is_page``). */
function isPage(page: Artifact, folder: string, prefix: string, number: number, perPage: number, total: number): boolean {
  return page.folder === folder && page.prefix === prefix && int(page.first) === number * perPage && page.files.length === Math.min(perPage, total - number * perPage);
}

/** The folder of the row table's bucket holding tool ``doc``'s row file and its page (``semantic.row_folder``). */
function rowFolder(table: Artifact, doc: number): string {
  return `${table.folder}.${table.buckets[Math.floor(doc / int(table.per_bucket))]}`;
}

/** Python's ``int()`` of a meta's number (a whole number, or a float cut toward zero); TypeError otherwise. */
function int(value: unknown): number {
  const n = typeof value === "number" ? value : typeof value === "string" && /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw new TypeError(`${JSON.stringify(value)?.slice(0, 40)} is not a number`);
  return Math.trunc(n);
}

/** A partitioned build's centroids, their unit rows and spreads, ``nprobe``, cluster sizes, ``probe_rows`` and row table. */
interface Partition {
  /** Each centroid's int4 codes (``n - 8``) and the prediction's denominator (``residual_settings``). */
  codes: Int8Array[];
  denominator: number;
  unit: Float32Array[];
  spread: number[];
  nprobe: number;
  counts: number[];
  probeRows: number | null;
  table: Artifact;
  /** The cluster table (``tools.clusters``): the cluster shards' folders (one a page), their pages' refs, ``per_page``. */
  clusterTable: Artifact;
}

/** One cluster's (or one row file's) doc ids, rows, ancestor node rows and the rows of those nodes. */
interface Block {
  ids: number[];
  rows: Float32Array[];
  ancestors: number[][];
  nodeIds: number[];
  nodeRows: Float32Array[];
}

/** The partition of a ``toolcat-vectors-8`` tools part (``SemanticTier._check_partition``, ``probe_settings``);
 * throws when it is not what a build writes. */
function checkPartition(meta: Artifact, dim: number): Partition {
  const part = meta.tools;
  const info = part.partition;
  const k = int(info.clusters), nDocs = int(part.n_docs), nprobe = int(info.nprobe);
  if (!(k >= 1 && k <= nDocs) || !(nprobe >= 1 && nprobe <= k)) throw new RangeError(`partition of ${k} clusters (nprobe ${nprobe}) over ${nDocs} tools`);
  const cents = info.centroids;
  if (cents.dtype !== "int4") throw new RangeError(`centroids of dtype ${JSON.stringify(cents.dtype)}, not int4`);
  const codes = centroidCodes(cents.codes, k, dim);
  const scales: unknown[] = cents.scale;
  if (!Array.isArray(scales) || scales.length !== k) throw new RangeError(`${scales?.length} centroid scales for ${k} centroids`);
  // as dequantize computes an int4 row: float32(code) · float32(scale / 7)
  const centroids = codes.map((row, c) => {
    const step = f32(f32(Number(scales[c])) / 7);
    return Float32Array.from(row, (n) => f32(n * step));
  });
  // the cluster table (``check_cluster_table``): one shard a cluster, counts adding up, a page ref per per_page shards
  const clusterTable = part.clusters;
  const counts: number[] = clusterTable.counts.map(int);
  if (int(clusterTable.files) !== k || counts.length !== k || Math.min(...counts) < 0 || counts.reduce((a, b) => a + b, 0) !== nDocs) {
    throw new RangeError("the cluster shards do not match the partition (one shard a cluster, in order)");
  }
  const clusterPerPage = int(clusterTable.per_page);
  // -11: no cluster pages, each page's root in the meta (``roots``)
  const tables = PROVEN_TABLE_FORMATS.includes(meta.format), listed = tables ? clusterTable.roots : clusterTable.pages;
  if (clusterPerPage < 1 || int(clusterTable.max_bytes) < 0 || !Array.isArray(listed) || listed.length !== Math.ceil(k / clusterPerPage)) {
    throw new RangeError(`a cluster table of ${listed?.length} pages of ${clusterPerPage} for ${k} clusters`);
  }
  if (!Array.isArray(clusterTable.folders) || clusterTable.folders.length !== listed.length) throw new RangeError(`a cluster table of ${listed.length} pages in ${clusterTable.folders?.length} folders`);
  if (![...clusterTable.folders, clusterTable.prefix, ...(tables ? listed : listed.flatMap((ref: Artifact) => [ref?.path, ref?.sha256]))].every((x) => typeof x === "string")) throw new TypeError("a cluster table without its folders or page refs");
  const table = part.rows;
  const files = int(table.files), perPage = int(table.per_page), perGroup = int(table.per_group);
  const proven = PROVEN_ROW_FORMATS.includes(meta.format); // no row pages: each row file carries its path (-10)
  if (files !== nDocs || perPage < 1 || perGroup < 1 || Math.min(int(table.max_bytes), proven ? 0 : int(table.page_max_bytes), int(table.group_max_bytes)) < 0) {
    throw new RangeError(`a row table of ${files} files in pages of ${perPage}, for ${nDocs} tools`);
  }
  if (![table.folder, table.prefix, table.group_folder, ...(tables ? table.group_roots : [table.pages.sha256])].every((x) => typeof x === "string")) throw new TypeError("a row table without its folders");
  if (tables && (int(table.groups_per_root) < 1 || table.group_roots.length !== Math.ceil(Math.ceil(files / (perPage * perGroup)) / int(table.groups_per_root)))) {
    throw new RangeError(`a row table of ${table.group_roots.length} group roots, ${table.groups_per_root} groups a root`);
  }
  // -8: the row files in buckets of per_bucket consecutive docs (whole groups), a folder each (``rowFolder``)
  const perBucket = int(table.per_bucket);
  if (!Array.isArray(table.buckets) || perBucket < 1 || perBucket % (perPage * perGroup) || table.buckets.length !== Math.ceil(files / perBucket) || !table.buckets.every((b: unknown) => typeof b === "string" && /^[0-9a-f]{16}$/.test(b))) {
    throw new RangeError(`a row table of ${files} files in buckets of ${perBucket}, pages of ${perPage}`);
  }
  const denominator = info.residual?.denominator;
  if (!Number.isInteger(denominator) || denominator < 1 || denominator > 1024) throw new RangeError(`residual denominator ${JSON.stringify(denominator)} is not a whole number in 1..1024`);
  const probeRows = "probe_rows" in info ? int(info.probe_rows) : null;
  if (probeRows !== null && probeRows < 1) throw new RangeError(`probe_rows ${probeRows} is not a positive number of tools`);
  // a centroid is the mean of its members' unit rows: the shorter it is, the wider they spread (``_nearness``)
  const lengths = centroids.map((c) => f32(Math.sqrt(c.reduce((sum, x) => sum + x * x, 0))));
  const unit = centroids.map((c, i) => c.map((x) => f32(x / ((lengths[i] as number) > 0 ? (lengths[i] as number) : 1))));
  const spread = lengths.map((l) => f32(Math.sqrt(Math.min(Math.max(f32(1 - f32(l * l)), 0), 1))));
  return { codes, denominator, unit, spread, nprobe, counts, probeRows, table: { ...table, proven, tables }, clusterTable: { ...clusterTable, tables } };
}

/** ``k`` centroids' int4 codes from one character a code, dimension by dimension (``semantic.centroid_codes``):
 * character ``j · k + i`` is centroid ``i``'s code ``j``, character ``n + 32`` of ``RESIDUAL_ALPHABET``. */
function centroidCodes(text: unknown, k: number, dim: number): Int8Array[] {
  if (typeof text !== "string") throw new TypeError("centroid codes are not a string");
  if (text.length !== k * dim) throw new RangeError(`${text.length} centroid codes for ${k} centroids of ${dim}`);
  const codes = Array.from({ length: k }, () => new Int8Array(dim));
  for (let j = 0; j < dim; j++) {
    for (let i = 0; i < k; i++) {
      const n = RESIDUAL_ALPHABET.indexOf(text[j * k + i] as string) - 32;
      if (n < -7 || n > 7) throw new RangeError("a centroid code outside -7..7 (Z..n)");
      (codes[i] as Int8Array)[j] = n;
    }
  }
  return codes;
}

/** float32 rows from residual codes (``semantic.residual_rows``): row ``i``'s int4 code of value ``j`` is
 * ``floor((c · k[i] + D // 2) / D) + d``, ``c`` its reference centroid's code; a row is ``ceil(dim / 2)`` characters,
 * character ``(a + 4) · 9 + b + 4`` of ``PAIR_ALPHABET`` holding two differences ``a`` then ``b``, and ``wide`` lists
 * ``[i · dim + j, d]`` for a difference outside -4..4; the value ``float32(n) · float32(scale / 7)``, as an int4 row's. */
function residualRows(coded: Artifact, references: number[], partition: Partition, dim: number): Float32Array[] {
  const { codes: centroids } = partition;
  return decodeResidual(coded, references.length, partition.denominator, dim, (i) => {
    const centroid = centroids[references[i] as number];
    if (!centroid) throw new RangeError(`a residual refers to a cluster outside 0..${centroids.length - 1}`);
    return centroid;
  });
}

/** float32 rows of a cluster shard (``semantic.tree_rows``, ``toolcat-vectors-8``): as ``residualRows``, row ``i``'s
 * reference being its cluster's centroid when ``parents[i]`` is -1, else row ``parents[i]`` of the shard, decoded
 * first; throws on a parent outside the shard or a cycle. */
function treeRows(coded: Artifact, cluster: number, partition: Partition, dim: number): Float32Array[] {
  const centroid = partition.codes[cluster];
  if (!centroid) throw new RangeError(`a residual refers to a cluster outside 0..${partition.codes.length - 1}`);
  if (!Array.isArray(coded.parents)) throw new TypeError("a cluster shard without its residuals' parents");
  const parents: number[] = coded.parents.map(int);
  const n = parents.length;
  if (parents.some((p, i) => p < -1 || p >= n || p === i)) throw new RangeError(`a residual's parent outside the ${n} rows of its shard`);
  // each row's depth in the tree (walking up to a row of known depth; more steps than rows: a cycle), rows decoded by depth
  const depth = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const path: number[] = [];
    let at = i;
    while (at >= 0 && depth[at] === -1) {
      if (path.length > n) throw new RangeError("the residuals' parents form a cycle, not a tree");
      path.push(at);
      at = parents[at] as number;
    }
    let d = at < 0 ? -1 : (depth[at] as number);
    for (let j = path.length - 1; j >= 0; j--) depth[path[j] as number] = ++d;
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (depth[a] as number) - (depth[b] as number) || a - b);
  const codes: Int8Array[] = Array(n);
  return decodeResidual(coded, n, partition.denominator, dim, (i) => (parents[i] as number) < 0 ? centroid : (codes[parents[i] as number] as Int8Array), order, codes);
}

/** ``n`` float32 rows from residual codes against ``reference(i)``'s int4 codes, decoded in ``order`` (each row's
 * codes kept in ``out`` when given, for the rows that refer to it). */
function decodeResidual(coded: Artifact, n: number, denominator: number, dim: number, reference: (i: number) => ArrayLike<number>, order: number[] | null = null, out: Int8Array[] | null = null): Float32Array[] {
  const text = coded.codes, factors: unknown[] = coded.k, scales: unknown[] = coded.scale;
  const width = Math.ceil(dim / 2);
  if (typeof text !== "string") throw new TypeError("residual codes are not a string");
  if (text.length !== n * width || factors.length !== n || scales.length !== n) {
    throw new RangeError(`${text.length} residual codes, ${factors.length} factors, ${scales.length} scales for ${n} rows of ${dim}`);
  }
  const wide = new Map<number, number>();
  for (const entry of (coded.wide ?? []) as unknown[]) {
    const [place, d] = Array.isArray(entry) ? entry.map(int) : [NaN, NaN];
    if (!(place! >= 0 && place! < n * dim)) throw new RangeError(`a wide residual's place outside the ${n} rows of ${dim}`);
    if (!(Math.abs(d!) <= 31)) throw new RangeError("a wide residual out of range");
    wide.set(place!, d!);
  }
  const rows: Float32Array[] = Array(n);
  for (const i of order ?? Array.from({ length: n }, (_, i) => i)) {
    const ref = reference(i);
    const k = int(factors[i]);
    if (Math.abs(k) > 64 * denominator) throw new RangeError("a residual factor out of range");
    const step = f32(f32(Number(scales[i])) / 7);
    const row = new Float32Array(dim);
    const codes = new Int8Array(dim);
    for (let j = 0; j < dim; j++) {
      const place = PAIR_ALPHABET.indexOf(text[i * width + (j >> 1)] as string);
      if (place < 0) throw new RangeError("a residual code outside the pair alphabet");
      const d = wide.get(i * dim + j) ?? (j & 1 ? (place % 9) - 4 : Math.floor(place / 9) - 4);
      const c = Math.floor(((ref[j] as number) * k + Math.floor(denominator / 2)) / denominator) + d;
      if (c < -7 || c > 7) throw new RangeError("a residual code gives an int4 code outside -7..7");
      codes[j] = c;
      row[j] = f32(c * step);
    }
    if (out !== null) out[i] = codes;
    rows[i] = row;
  }
  return rows;
}

/** The ref of the ``number``-th file an ``index_pages`` file lists (``refs.page_ref``). */
function pageRef(page: Artifact, number: number): Artifact {
  const entry = page.files[number];
  if (!Array.isArray(entry)) throw new RangeError(`page ${page.folder} has no file ${number}`);
  return { path: `${page.folder}/${page.prefix}${int(page.first) + number}.json`, sha256: entry[0], bytes: entry[1] };
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
  private learned: LearnedFusion | undefined;
  private encoder: Encoder | null = null;
  private meta: Artifact = null;
  private dtype = "int8";
  private matrices = new Map<string, Float32Array[]>();
  private ancestors: number[][] | null = null;
  private queries = new Map<string, Float32Array>();
  private partition: Partition | null = null;
  private clusters = new Map<number, Block>();
  private singles = new Map<number, Block>();
  /** The row files read that hold their tool's document (``toolcat-vectors-7``): doc id -> the file's ref. */
  private docFiles = new Map<number, Artifact>();
  private probed: [string, number[]] = ["", []];
  private scored: [string, Set<number>] = ["", new Set()];
  private directory: Artifact = null;
  private groups = new Map<number, Artifact>();
  /** The node rows a group of the row table holds (``toolcat-vectors-9``, ``SemanticTier._nodes_of_group``). */
  private groupNodes = new Map<number, [number[], Float32Array[]]>();
  private pages = new Map<number, Artifact>();
  /** The cluster table's pages read so far, and the clusters whose shards ``refs`` named by path (once each). */
  private clusterPages = new Map<number, Artifact>();
  private clusterNamed = new Set<number>();
  /** The files of -11's proven tables read or being read (``proven``), by path. */
  private provenFiles = new Map<string, Promise<[Artifact, Artifact]>>();

  private constructor() {}

  /** ``stats().search_tier``: ``hybrid (<model>; <runtime>)``, or why the reader answers by words. */
  tier(): string {
    return this.reason === null ? `hybrid (${this.model}; ${this.runtime})` : `lexical: the build has vectors, but ${this.reason}`;
  }

  /** The tier for ``searcher``'s build, with the model ``options`` name; ``reason`` says why it cannot answer. */
  static async open(searcher: Searcher, options: ModelOptions, base: string, hash: (data: Uint8Array) => Promise<string>): Promise<SemanticTier> {
    const tier = new SemanticTier();
    tier.learned = options.learnedFusion;
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
      // with the index meta, in one round (``Searcher._prefetch_query``), through the searcher's store (verified,
      // kept by sha256); the index's own failure is reported by its search
      await (searcher as unknown as { store: Store }).store.prefetch([searcher.manifest.index, searcher.manifest.vectors]).catch(() => null);
      meta = await searcher.fetch(searcher.manifest.vectors);
    } catch (err) {
      return `the build's vectors meta could not be read (${(err as Artifact)?.code ?? "ERROR"}: ${(err as Error)?.message})`;
    }
    if (meta?.tools?.partition !== undefined && !READ_PARTITIONED_FORMATS.includes(meta.format)) {
      return `the build's tool vectors are partitioned in format '${meta.format}', which this reader does not read (it reads ${PARTITIONED_FORMAT}); rebuild the catalogue`;
    }
    const dtype = String(meta?.encoding?.dtype ?? "int8");
    if (!ENCODINGS.includes(dtype)) return `the build's vectors are ${dtype}, which this reader does not know (upgrade the reader)`;
    const model = meta.model ?? {};
    if (typeof options.url !== "string" && !(options.url instanceof URL)) return `the model option names no url (model: {url: "<model.json's URL>"}, js/README.md)`;
    const fetchFn = options.fetch ?? globalThis.fetch;
    const modelUrl = new URL(String(options.url), base);
    // each file read up to its size (model.json: 1 MiB), whatever the host sends, then checked against its sha256;
    // with the catalogue's timeout, retries and file cap (``Catalog.open``'s options)
    const policy: Policy = (searcher as unknown as { store: Store }).store.source;
    const read = async (url: URL, digest: string | null, size: number | null): Promise<Uint8Array> => {
      const limit = size ?? MODEL_JSON_BYTES;
      if (limit > policy.maxFileBytes) throw new Error(`${url.href} is ${limit} bytes, more than the ${policy.maxFileBytes} a file may be (Catalog.open's maxFileBytes)`);
      const data = await readModelFile(fetchFn, url.href, limit, policy);
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
    for (const file of [info.graph, info.vocab]) {
      if (typeof file?.path !== "string" || !FILE_NAME.test(file.path) || !/^[0-9a-f]{64}$/.test(file.sha256) || !Number.isInteger(file.bytes) || file.bytes < 0) {
        return `${modelUrl.href} lists a file that is not a name in its folder with a sha256 and a size (${JSON.stringify(file)?.slice(0, 120)})`;
      }
    }
    try {
      for (const part of meta.tools.partition === undefined ? ["tools", "nodes"] : ["nodes"]) {
        for (const shard of meta[part].shards) if (int(shard.first) < 0 || int(shard.count) < 0 || typeof shard.ref?.path !== "string") throw new TypeError(`a ${part} shard without its ref`);
      }
      this.partition = meta.tools.partition === undefined ? null : checkPartition(meta, dim);
    } catch (err) {
      return `the build's vectors meta is malformed (${(err as Error).name}: ${String((err as Error).message).slice(0, 80)})`;
    }
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
    const learned = modelFor(this.model, model.weights_sha256 ?? null, this.learned);
    setWeakRule(searcher, learned); // ``Searcher.weak_bar``
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

  /** The vector shards a search of ``part`` for ``query`` still needs (``SemanticTier.refs``): the node shards, and
   * every tool shard, or in a partitioned build those of the clusters the query probes. */
  async refs(part: string, query: string): Promise<Artifact[]> {
    const out: Artifact[] = [];
    if (!this.matrices.has("nodes") && (part !== "tools" || this.partition === null)) out.push(...this.meta.nodes.shards.map((s: Artifact) => s.ref));
    if (part !== "tools") return out;
    if (this.partition === null) return this.matrices.has("tools") ? out : [...out, ...this.meta.tools.shards.map((s: Artifact) => s.ref)];
    return [...out, ...this.clusterRefs((await this.probe(query)).filter((c) => !this.clusters.has(c)))];
  }

  /** The files to fetch for ``clusters``' shards (``SemanticTier._cluster_refs``): the cluster table's pages not read
   * yet and the shards, by path while their page is not read (checked against it when read), each named once. */
  private clusterRefs(clusters: number[]): Artifact[] {
    const { clusterTable: table } = this.partition as Partition;
    const perPage = int(table.per_page);
    const pages = [...new Set(clusters.map((c) => Math.floor(c / perPage)))].filter((n) => !this.clusterPages.has(n) && !table.tables).sort((a, b) => a - b);
    const out: Artifact[] = pages.map((n) => table.pages[n]);
    for (const cluster of clusters) {
      const page = this.clusterPages.get(Math.floor(cluster / perPage));
      if (page) out.push(pageRef(page, cluster - int(page.first)));
      else if (!this.clusterNamed.has(cluster)) {
        this.clusterNamed.add(cluster);
        out.push({ path: `${table.folders[Math.floor(cluster / perPage)]}/${table.prefix}${cluster}.json`, max_bytes: table.max_bytes });
      }
    }
    return out;
  }

  /** Page ``number`` of the cluster table (``SemanticTier._cluster_page``), checked. */
  private async clusterPage(searcher: Searcher, number: number): Promise<Artifact> {
    const { clusterTable: table } = this.partition as Partition;
    let page = this.clusterPages.get(number);
    if (!page) {
      const ref = table.pages[number];
      page = await searcher.fetch(ref);
      const perPage = int(table.per_page), files = int(table.files);
      if (!isPage(page, table.folders[number], table.prefix, number, perPage, files)) {
        throw new RangeError(`cluster page ${ref.path} is not page ${number} of the cluster table`);
      }
      this.clusterPages.set(number, page);
    }
    return page;
  }

  /** The clusters of a partitioned build a query reads, in cluster order: the nearest (centroid cosine plus
   * spread) until they hold ``probe_rows`` tools, or ``nprobe`` of them (``SemanticTier.probe``). */
  private async probe(query: string): Promise<number[]> {
    if (this.probed[0] !== query || !this.probed[1].length) {
      const { unit, spread, nprobe, counts, probeRows } = this.partition as Partition;
      const vector = await this.queryVector(query);
      const sims = unit.map((row, i) => f32(dot(row, vector) + SPREAD * (spread[i] as number)));
      const order = sims.map((_, i) => i).sort((a, b) => (sims[b] as number) - (sims[a] as number) || a - b);
      let count = Math.min(sims.length, nprobe);
      if (probeRows !== null) {
        let held = 0;
        count = order.length;
        for (let i = 0; i < order.length; i++) {
          held += counts[order[i] as number] as number;
          if (held >= probeRows) {
            count = i + 1;
            break;
          }
        }
      }
      this.probed = [query, order.slice(0, count).sort((a, b) => a - b)];
    }
    return this.probed[1];
  }

  /** (node ids, float32 rows) of a ``nodes`` entry (ids, each one's centroid, their coded rows). */
  private nodeRows(nodes: Artifact): [number[], Float32Array[]] {
    const nodeIds: number[] = nodes.ids.map(int);
    const nodeClusters: number[] = nodes.clusters.map(int);
    if (nodeClusters.length !== nodeIds.length) throw new RangeError(`${nodeClusters.length} node centroids for ${nodeIds.length} node rows`);
    return [nodeIds, residualRows(nodes, nodeClusters, this.partition as Partition, Number(this.meta.model.dim))];
  }

  /** A row block of a vectors file: ids, rows, ancestors and node rows, checked against the build's sizes; ``nodes``:
   * the node rows its ancestors are taken from when the file holds none (a -9 row file's group's). */
  private block(data: Artifact, count: number, cluster: number, where: string, tree = false, nodes?: [number[], Float32Array[]]): Block {
    const dim = Number(this.meta.model.dim), nNodes = int(this.meta.nodes.n_docs), nDocs = int(this.meta.tools.n_docs);
    const partition = this.partition as Partition;
    const ids: number[] = (data.ids ?? [int(data.first)]).map(int);
    const rows = tree ? treeRows(data, cluster, partition, dim) : residualRows(data, Array(count).fill(cluster), partition, dim);
    const ancestors: number[][] = (data.ancestors ?? []).map((row: unknown[]) => row.slice(0, MAX_ANCESTORS).map(int));
    let [nodeIds, nodeRows] = nodes ?? this.nodeRows(data.nodes);
    const known = new Set(nodeIds);
    if (nodeRows.length !== nodeIds.length || nodeIds.some((n) => n < 0 || n >= nNodes) || !ancestors.every((row) => row.every((n) => known.has(n)))) {
      throw new RangeError(`vector file ${where} lacks its tools' ancestor node rows`);
    }
    if (nodes) {
      // a group's nodes: keep the row's own ancestors' (as a -8 row file holds them)
      const own = new Set(ancestors.flat());
      const keep = nodeIds.map((n, i) => [n, i] as const).filter(([n]) => own.has(n));
      [nodeIds, nodeRows] = [keep.map(([n]) => n), keep.map(([, i]) => nodeRows[i] as Float32Array)];
    }
    if (rows.length !== count || ids.length !== count || (ancestors.length && ancestors.length !== count) || ids.some((d) => d < 0 || d >= nDocs) || new Set(ids).size !== count) {
      throw new RangeError(`vector file ${where} does not hold the rows its ref names`);
    }
    return { ids, rows, ancestors, nodeIds, nodeRows };
  }

  /** One cluster of a partitioned build (``SemanticTier._cluster``). */
  private async cluster(searcher: Searcher, cluster: number): Promise<Block> {
    let block = this.clusters.get(cluster);
    if (!block) {
      const { clusterTable: table, counts } = this.partition as Partition;
      const perPage = int(table.per_page), path = `${table.folders[Math.floor(cluster / perPage)]}/${table.prefix}${cluster}.json`;
      let ref: Artifact, data: Artifact;
      if (table.tables) {
        // -11: its path to its page's root, which the meta lists (``vector_format.proven_cluster``)
        [ref, data] = await this.proven(searcher, path, table.max_bytes, table.roots, cluster, perPage);
      } else {
        const page = await this.clusterPage(searcher, Math.floor(cluster / perPage));
        ref = pageRef(page, cluster - int(page.first));
        data = await searcher.fetch(ref);
      }
      if (int(data.cluster) !== cluster) throw new RangeError(`vector shard ${ref.path} is not cluster ${cluster} of the partition`);
      block = this.block(data, counts[cluster] as number, cluster, ref.path, true);
      this.clusters.set(cluster, block);
    }
    return block;
  }

  /** Group ``number`` of the row table's pages, through its directory (``SemanticTier._group``), checked. */
  private async group(searcher: Searcher, number: number): Promise<Artifact> {
    const { table } = this.partition as Partition;
    const perGroup = int(table.per_group), pages = Math.ceil(int(table.files) / int(table.per_page));
    if (this.directory === null && !table.tables) {
      const directory = await searcher.fetch(table.pages);
      if (int(directory.first) !== 0 || directory.folder !== table.group_folder || directory.prefix !== "g" || directory.files.length !== Math.ceil(pages / perGroup)) {
        throw new RangeError(`the row table's directory ${table.pages.path} does not list its groups`);
      }
      this.directory = directory;
    }
    let group = this.groups.get(number);
    if (!group) {
      // -11: no directory; the group carries its path to a root the meta lists (``vector_format.proven_group``)
      let ref: Artifact;
      if (table.tables) [ref, group] = await this.proven(searcher, `${table.group_folder}/g${number}.json`, table.group_max_bytes, table.group_roots, number, int(table.groups_per_root));
      else group = await searcher.fetch((ref = pageRef(this.directory, number)));
      if (!isPage(group, rowFolder(table, number * perGroup * int(table.per_page)), "p", number, perGroup, pages)) {
        throw new RangeError(`row group ${ref.path} is not group ${number} of the row table's pages`);
      }
      this.groups.set(number, group);
    }
    return group;
  }

  /** File ``number`` of a proven table (``vector_format.proven_ref``: -11's groups and cluster shards): read by path and
   * used once its Merkle path leads from its place to its page's root (``roots``), kept under ``<root>/<place>``. */
  private proven(searcher: Searcher, path: string, bound: unknown, roots: unknown[], number: number, perPage: number): Promise<[Artifact, Artifact]> {
    // once a file: the clusters of a probe (and the groups of a round's rows) are read concurrently
    let read = this.provenFiles.get(path);
    if (!read) {
      const root = String(roots[Math.floor(number / perPage)]), place = number % perPage, ref = { path, sha256: `${root}/${place}` };
      read = import("./wordfilter.js").then(async (m) => [ref, await m.provenFile(searcher, ref, int(bound), root, place, perPage, "meta")]);
      this.provenFiles.set(path, read);
    }
    return read;
  }

  /** Page ``number`` of the row table, through its group (``SemanticTier._page``), checked. */
  private async page(searcher: Searcher, number: number): Promise<Artifact> {
    const { table } = this.partition as Partition;
    const perPage = int(table.per_page), files = int(table.files);
    let page = this.pages.get(number);
    if (!page) {
      const group = await this.group(searcher, Math.floor(number / int(table.per_group)));
      const ref = pageRef(group, number - int(group.first));
      page = await searcher.fetch(ref);
      if (!isPage(page, rowFolder(table, number * perPage), table.prefix, number, perPage, files)) {
        throw new RangeError(`row page ${ref.path} is not page ${number} of the row table`);
      }
      this.pages.set(number, page);
    }
    return page;
  }

  /** Tool ``doc``'s row from its file in the row table (``SemanticTier._row``); a file that holds the tool's document
   * (``toolcat-vectors-7``) is noted in ``docFiles`` (``SemanticTier.read_rows``). */
  private async single(searcher: Searcher, doc: number): Promise<Block> {
    const { table } = this.partition as Partition;
    let ref: Artifact, data: Artifact;
    if (table.proven) {
      // -10: its path to its page's root, which its group lists (``SemanticTier._row_file``, ``Store.fetch_json``)
      const perPage = int(table.per_page), number = Math.floor(doc / perPage);
      const group = await this.group(searcher, Math.floor(number / int(table.per_group)));
      const [root, bound] = group.files[number - int(group.first)];
      ref = { path: `${rowFolder(table, doc)}/${table.prefix}${doc}.json`, sha256: `${root}/${doc - number * perPage}` };
      // in the word filter's chunk, loaded by the search before any row (not the main entry: test_js_size.py)
      data = await (await import("./wordfilter.js")).provenFile(searcher, ref, int(bound), String(root), doc - number * perPage, perPage, "group");
    } else {
      const page = await this.page(searcher, Math.floor(doc / int(table.per_page)));
      ref = pageRef(page, doc - int(page.first));
      data = await searcher.fetch(ref);
    }
    if (int(data.first) !== doc || int(data.count) !== 1) throw new RangeError(`row file ${ref.path} is not tool ${doc}'s row`);
    if (data.docs !== undefined) {
      if (!Array.isArray(data.ids) || data.ids.length !== 1 || int(data.ids[0]) !== doc || !Array.isArray(data.docs) || data.docs.length !== 1) throw new RangeError(`row file ${ref.path} does not hold tool ${doc}'s document`);
      if (typeof data.docs[0]?.pointer !== "object" || data.docs[0].pointer === null) throw new TypeError(`row file ${ref.path} holds a document without its pointer`);
      this.docFiles.set(doc, ref);
    }
    return this.block({ ...data, ids: [doc], ancestors: (data.ancestors ?? [[]]).slice(0, 1) }, 1, int(data.cluster), ref.path, false, data.nodes === undefined ? await this.nodesOfGroup(searcher, doc) : undefined);
  }

  /** The node rows the row table's group of ``doc`` holds (``SemanticTier._nodes_of_group``, ``toolcat-vectors-9``),
   * decoded once a group. */
  private async nodesOfGroup(searcher: Searcher, doc: number): Promise<[number[], Float32Array[]]> {
    const { table } = this.partition as Partition;
    const number = Math.floor(Math.floor(doc / int(table.per_page)) / int(table.per_group));
    let nodes = this.groupNodes.get(number);
    if (!nodes) {
      const group = await this.group(searcher, number);
      if (typeof group.nodes !== "object" || group.nodes === null) throw new RangeError(`row group ${number} holds no node rows, and the row file of tool ${doc} none either`);
      nodes = this.nodeRows(group.nodes);
      this.groupNodes.set(number, nodes);
    }
    return nodes;
  }

  /** The docs likely to make the fused top ``depth`` before the lexical candidates' rows are read
   * (``SemanticTier.head_guess``): the fused top with those candidates' cosines unknown (a fused score only grows
   * with the cosine, so it holds every doc of the true top whose cosine is known, and none of the true top scores
   * under its last), then each candidate of unknown cosine that would reach that score at the best probed cosine.
   * Above ``SURE_HEAD_ABOVE`` tools the sure head alone. ``rank`` is the fusion that will rank the head (the learned
   * model's where one ranks the tier, as ``Searcher._learned_rank``), else ``fuse``. */
  private async headGuess(searcher: Searcher, query: string, lexical: Hit[], depth: number, allowed: Allowed, params: Params, rank: Rank | null): Promise<number[]> {
    const ranked: Rank = rank ?? ((cosines, limit, pool) => fuse(lexical, cosines, limit, allowed, params, pool));
    const known = await this.partitionedScores(searcher, query);
    const pool = await this.pool(searcher, query, known);
    const fused = ranked(known, depth, pool);
    const sure = fused.map(([doc]) => doc);
    const unknown = lexical.map(([doc]) => doc).filter((doc) => known[doc] === -2);
    if (!unknown.length || int(this.meta.tools.n_docs) > SURE_HEAD_ABOVE) return sure;
    const floor = fused.length >= depth ? (fused[fused.length - 1] as Hit)[1] : -1;
    const ceiling = Float32Array.from(known);
    const top = known.reduce((m, x) => Math.max(m, x), -Infinity);
    for (const doc of unknown) ceiling[doc] = top;
    const raised = ranked(ceiling, lexical.length + CANDIDATES, pool);
    return [...new Set([...sure, ...raised.filter(([doc, score]) => score >= floor && known[doc] === -2).map(([doc]) => doc)])];
  }

  /** The rows of the lexical candidates outside the probed clusters (``row_refs`` and ``read_rows``), fetched in one
   * round with the doc shards of the head guess (``Searcher._first_stage``), which are read then. */
  private async readRows(searcher: Searcher, query: string, lexical: Hit[], depth: number, allowed: Allowed, params: Params, rank: Rank | null): Promise<void> {
    const docs = lexical.map(([doc]) => doc);
    const nDocs = int(this.meta.tools.n_docs);
    const probed = new Set((await Promise.all((await this.probe(query)).map((c) => this.cluster(searcher, c)))).flatMap((b) => b.ids));
    const needed = new Set(docs.filter((d) => d >= 0 && d < nDocs && !probed.has(d)));
    this.scored = [query, needed];
    const wanted = [...needed].filter((d) => !this.singles.has(d)).sort((a, b) => a - b);
    if (this.singles.size + wanted.length > MAX_ROWS) this.singles = new Map([...this.singles].filter(([d]) => needed.has(d)));
    const { table } = this.partition as Partition;
    const perPage = int(table.per_page), perGroup = int(table.per_group);
    // one round, as ``SemanticTier.row_refs``: the directory, groups, pages and row files not read yet, by path where
    // their ref is not known yet (each checked against the level above when it is read)
    const pages = [...new Set(wanted.map((d) => Math.floor(d / perPage)))].filter((n) => !this.pages.has(n)).sort((a, b) => a - b);
    const refs: Artifact[] = this.directory !== null || !wanted.length || table.tables ? [] : [table.pages];
    for (const number of [...new Set(pages.map((n) => Math.floor(n / perGroup)))].filter((n) => !this.groups.has(n))) {
      refs.push(this.directory === null ? { path: `${table.group_folder}/g${number}.json`, max_bytes: table.group_max_bytes } : pageRef(this.directory, number));
    }
    for (const number of table.proven ? [] : pages) {
      const group = this.groups.get(Math.floor(number / perGroup));
      refs.push(group ? pageRef(group, number - int(group.first)) : { path: `${rowFolder(table, number * perPage)}/p${number}.json`, max_bytes: table.page_max_bytes });
    }
    for (const doc of wanted) {
      const page = table.proven ? undefined : this.pages.get(Math.floor(doc / perPage));
      refs.push(page ? pageRef(page, doc - int(page.first)) : { path: `${rowFolder(table, doc)}/${table.prefix}${doc}.json`, max_bytes: table.max_bytes });
    }
    const guess = await this.headGuess(searcher, query, lexical, depth, allowed, params, rank);
    const inner = searcher as unknown as DocFetching;
    const part = await searcher.part("tools");
    inner.pendingPages = [];
    const docRefs: Artifact[] = [];
    // the row files of the candidates outside the probed clusters hold their documents (toolcat-vectors-7): no doc shard
    for (const doc of guess) if (!needed.has(doc)) docRefs.push(await inner.docRef(part, doc, false));
    const all = new Map([...refs, ...inner.pendingPages, ...docRefs].map((r) => [String(r.sha256 ?? r.path), r]));
    await inner.store.prefetch([...all.values()]).catch(() => null);
    for (const number of table.proven ? [] : pages) await this.page(searcher, number);
    const blocks = await Promise.all(wanted.map((d) => this.single(searcher, d)));
    wanted.forEach((d, i) => this.singles.set(d, blocks[i] as Block));
    // a delta segment's own file for the doc wins (the same document)
    for (const doc of needed) if (this.docFiles.has(doc) && !part.deltaDocFile.has(doc)) part.deltaDocFile.set(doc, this.docFiles.get(doc));
    for (const doc of guess) await inner.doc(part, doc); // read now: a file fetched by path is checked here
  }

  /** Every tool's cosine in a partitioned build: exact (with the hierarchy term) where a row was read, else -2. */
  private async partitionedScores(searcher: Searcher, query: string): Promise<Float32Array> {
    const vector = await this.queryVector(query);
    const out = new Float32Array(int(this.meta.tools.n_docs)).fill(-2);
    const probed = await Promise.all((await this.probe(query)).map((c) => this.cluster(searcher, c)));
    const singles = this.scored[0] === query ? [...this.scored[1]].filter((d) => this.singles.has(d)).sort((a, b) => a - b).map((d) => this.singles.get(d) as Block) : [];
    const blocks = [...probed, ...singles];
    const ids = blocks.flatMap((b) => b.ids);
    if (!ids.length) return out;
    let exact: Float32Array = Float32Array.from(blocks.flatMap((b) => b.rows), (row) => dot(row, vector));
    if (HIERARCHY && probed.reduce((n, b) => n + b.ancestors.length, 0) + singles.length === ids.length) {
      const nodes = new Float32Array(int(this.meta.nodes.n_docs)).fill(-2);
      for (const b of blocks) b.nodeIds.forEach((node, i) => (nodes[node] = dot(b.nodeRows[i] as Float32Array, vector)));
      exact = withAncestors(exact, nodes, blocks.flatMap((b) => (b.ancestors.length ? b.ancestors : b.ids.map(() => []))), HIERARCHY);
    }
    ids.forEach((id, i) => (out[id] = exact[i] as number));
    return out;
  }

  /** The cosines the semantic top is drawn from in a partitioned build: the probed clusters' tools alone. */
  private async pool(searcher: Searcher, query: string, cosines: Float32Array): Promise<Float32Array> {
    const out = new Float32Array(cosines.length).fill(-2);
    for (const c of await this.probe(query)) for (const id of (await this.cluster(searcher, c)).ids) out[id] = cosines[id] as number;
    return out;
  }

  /** The fused top ``limit`` (``Searcher._first_stage`` with the tier); on broken vectors the lexical top, and the
   * tier turns itself off with the reason. */
  async ranked(searcher: Searcher, partName: string, query: string, allowed: Allowed, limit: number): Promise<Hit[]> {
    const lexical = await searcher.topK(partName, query, Math.max(limit, CANDIDATES), allowed);
    const params = FUSION[String(this.meta.model.kind)] ?? (FUSION["sentence-transformers"] as Params);
    const model = partName === "tools" ? modelFor(this.model as string, this.meta.model.weights_sha256 ?? null, this.learned) : null;
    try {
      const partitioned = partName === "tools" && this.partition !== null;
      // the learned fusion of this query's candidates, for any cosines (``Searcher._learned_rank``): it guesses the
      // head of a partitioned build and ranks it
      const learned = model === null ? null : await learnedRank(searcher, query, lexical, model, allowed, params);
      if (partitioned) await this.readRows(searcher, query, lexical, Math.max(limit, NAME_DEPTH), allowed, params, learned && learned[1]);
      const cosines = partitioned ? await this.partitionedScores(searcher, query) : await this.scores(searcher, partName, query);
      const pool = partitioned ? await this.pool(searcher, query, cosines) : null;
      const part = await searcher.part(partName);
      if (cosines.length < part.nDocs) throw new RangeError(`${cosines.length} ${partName} vectors for ${part.nDocs} documents`);
      if (partName !== "tools") return fuse(lexical, cosines, limit, allowed, params);
      if (model !== null && learned !== null) return await learnedRanked(searcher, learned, cosines, limit, model, pool, NAME_DEPTH);
      const fused = fuse(lexical, cosines, Math.max(limit, NAME_DEPTH), allowed, params, pool);
      const terms = new Set(searcher.words(query));
      if (!terms.size || NAME_BOOST <= 0) return fused.slice(0, limit);
      const head = fused.slice(0, NAME_DEPTH);
      const ids = (await searcher.docs("tools", head)).map((doc) => String(doc.pointer.tool_id));
      return nameApplied(fused, ids, terms, (text) => searcher.words(text)).slice(0, limit);
    } catch (err) {
      if ((err as Artifact)?.code === undefined && !(err instanceof TypeError || err instanceof RangeError)) throw err;
      this.reason = `the build's vectors are malformed (${(err as Error).name}: ${String((err as Error).message).slice(0, 80)}); answering by words`;
      return lexical.slice(0, limit);
    }
  }
}

/** find_tool's weak rule on the scale of ``model`` (``Searcher.weak_bar``): its bar rising by ``weak_per_word`` over the
 * query's content words (``weakRule``; ``weakBar`` the highest it gets), else the hand fusion's 0.35. */
function setWeakRule(searcher: Searcher, model: LinearModel | null): void {
  const rule: [number, number, number] | undefined = model?.weak == null ? undefined : [model.weak, model.weakPerWord, model.weakShare];
  searcher.weakRule = rule;
  searcher.weakBar = rule ? rule[0] + Math.max(rule[1], 0) : 0.35; // the highest the bar gets (words >= 1)
}

/** The top ``limit`` tools of a build without vectors or expansion by the learned lexical model (``Searcher._without_vectors``
 * with ``fusion_model.model_for("lexical")``): the lexical top 50 rescored, then the model's name stage. */
export async function lexicalRanked(searcher: Searcher, query: string, allowed: Allowed, limit: number): Promise<Hit[]> {
  // the host's switch (TypeScript-private in search.ts): "off" reaches here; "all" cannot turn the lexical model on
  // while the weights keep it opt-in (the main entry drops this call then: its size budget)
  const model = modelFor("lexical", null, (searcher as unknown as { modelOptions: ModelOptions | null }).modelOptions?.learnedFusion);
  setWeakRule(searcher, model); // find_tool's weak bar on this model's scale (``Searcher.weak_bar``)
  const lexical = await searcher.topK("tools", query, Math.max(limit, model === null ? limit : CANDIDATES), allowed);
  if (model === null) return lexical.slice(0, limit);
  return learnedRanked(searcher, await learnedRank(searcher, query, lexical, model, null, FUSION.onnx as Params), null, limit, model, null, NAME_DEPTH);
}
