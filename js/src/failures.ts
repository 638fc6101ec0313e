/** What the reader says when a host or a catalogue fails in a way a healthy one never does, or when a lookup finds
 * nothing: those errors with their hints and suggestions (difflib's close matches, close tools and categories).
 * The modules that raise them import this one on first use (``await import``), so that the main entry does not
 * carry its text; every message is the Python reader's, word for word (docs/format.md, the parity promise). */
import { ANALYZER_VERSION } from "./analyzer.js";
import { INDEX_FORMAT, INDEX_FORMATS } from "./wordfilter.js";
import { closeMatches } from "./difflib.js";
import { allPointers } from "./namespaces.js";
import { ReaderError, bad, type Action } from "./errors.js";
import { cmp, isObject, pyRound, shown, unique, type Json } from "./py.js";
import { pyQuote } from "./quote.js";
import { MIN_RELATIVE, MIN_RELEVANCE, nameKey, scope, type Hit, type PointedHit, type Searcher } from "./search.js";
import { lookupBucket, sha256 } from "./sha256.js";
import { MAX_REDIRECTS } from "./source.js";
import { MAX_QUERY_CHARS, SUGGEST_WALK_LIMIT, SUPPORTED_FORMAT_VERSION, encodeCursor, type Artifact, type Store } from "./store.js";

// == arguments (catalog.ts, store.ts) ===============================================================
export function notHttp(url: string): ReaderError {
  return new ReaderError("BAD_REQUEST", `open() takes an http(s) base URL, got ${shown(url)}`, { hints: ["Serve the build folder over http(s), or pass a fetch that reads it."] });
}

export function badParallel(value: unknown): ReaderError {
  return new ReaderError("BAD_REQUEST", `max_parallel must be a positive integer, got ${shown(value, 40)}`);
}

export function badPin(pin: unknown): ReaderError {
  return new ReaderError("BAD_REQUEST", `pin must be 'sha256:' and 64 hex digits, got ${shown(pin, 100)}`, {
    hints: ["pin is the sha256 of the manifest file: the 'sha256' of the 'manifest' ref in catalog.json, e.g. pin='sha256:' + entry['manifest']['sha256']."],
  });
}

/** A cursor this reader did not return, or (``wellFormed``) returned for another query or category. */
export function badCursor(cursor: unknown, wellFormed: boolean): ReaderError {
  if (!wellFormed) return bad(`cursor ${shown(cursor)} is not one this reader returned; omit it to start over`, { details: { cursor: shown(cursor, 40) } });
  return bad("this cursor belongs to another query or category", {
    details: { cursor: shown(cursor, 40) },
    hints: ["Pass back the next_cursor of the previous page with the same query and category."],
  });
}

/** ``checks.check_query`` for what store.ts ``checkQuery`` does not take itself: BAD_REQUEST for a blank or
 * non-string query or one over a million characters, else the query cut at a word boundary. */
export function checkLongQuery(value: unknown, name: string): string {
  if (typeof value !== "string" || !value.trim() || (value.length > 1e6 && [...value].length > 1e6)) {
    throw new ReaderError("BAD_REQUEST", `'${name}' must be a non-empty string, got ${shown(value, 60)}`, {
      details: { got: shown(value, 60) },
      hints: [`Say what you need in a few words: the action, the object and the domain, e.g. ${name}='upload a file to an S3 bucket'.`],
    });
  }
  const chars = [...value.trim()];
  if (chars.length <= MAX_QUERY_CHARS) return chars.join("");
  const cut = chars.slice(0, MAX_QUERY_CHARS);
  const space = cut.lastIndexOf(" ");
  return cut.slice(0, space >= MAX_QUERY_CHARS / 2 ? space : MAX_QUERY_CHARS).join("");
}

/** The note an answer carries when ``checkQuery`` cut ``value`` (``checks.query_note``), else null. */
export function queryNote(value: unknown): string | null {
  const size = typeof value === "string" ? [...value.trim()].length : 0;
  return size > MAX_QUERY_CHARS
    ? `The query was cut to its first ${MAX_QUERY_CHARS.toLocaleString("en-US")} characters (of ${size.toLocaleString("en-US")}); put the action, the object and the domain first, in a few words.`
    : null;
}

/** A query's first 200 characters as ``repr`` shows them (a no-match hint). */
const head200 = (text: string) => pyQuote([...text].slice(0, 200).join(""));
const browseRoot = () => ({ op: "list", args: { path: "" } });

/** find_tool's answer when no tool matches well (``Searcher.find_tool``). */
export function noTools(query: string): Json {
  return { matches: [], hints: [`No tool matches ${head200(query)} well; try other words, or browse the categories.`], next_action: browseRoot() };
}

/** search_nodes' answer when no category matches (``Searcher.search_nodes``). */
export function noNodes(query: string): Json {
  return { results: [], hints: [`No category matches ${head200(query)}; search tools by purpose instead, or browse the root.`], next_action: { op: "search", args: { query } } };
}

/** The query's distinct words as typed (its first 1,000 characters) that have a content term (``_content_tokens``). */
const contentTokens = (searcher: Searcher, query: string) => unique(Array.from(query).slice(0, 1000).join("").match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => searcher.words(t).length);

/** The query's words (as typed) no tool's text contains, and how many content words it has (``_unknown_words``). */
export async function unknownWords(searcher: Searcher, query: string): Promise<[string[], number]> {
  const part = await searcher.part("tools");
  const space = part.spaces.find((s: Artifact) => s.name === "words");
  const tokens = contentTokens(searcher, query);
  const missing: string[] = [];
  for (const token of tokens) {
    let known = false;
    for (const term of searcher.words(token)) if ((await searcher.posting("tools", part, space, term)) !== null) known = true;
    if (!known) missing.push(token);
  }
  return [missing, Math.max(1, tokens.length)];
}

/** The share of the query's idf its words no tool has carry, 0 to 1 (``Searcher.unknown_share``): each distinct term
 * of its content words at its idf among the tools, a term no tool has at the unseen idf ``ln(1 + n) + 1``; from
 * postings already read. */
export async function unknownShare(searcher: Searcher, query: string): Promise<number> {
  const part = await searcher.part("tools");
  const space = part.spaces.find((s: Artifact) => s.name === "words");
  const unseen = Math.log(1 + part.nDocs) + 1;
  let known = 0;
  let unknown = 0;
  for (const term of unique(contentTokens(searcher, query).flatMap((t) => searcher.words(t)))) {
    const posting = await searcher.posting("tools", part, space, term);
    if (posting === null) unknown += unseen;
    else known += posting.idf;
  }
  return unknown ? unknown / (known + unknown) : 0;
}

/** The missing words when an answer whose best hit scores ``best`` is weak, else null (``Searcher.weak_words``): every
 * search says so with one rule, the query's words no tool has carrying a share of its idf (0.58; under a learned
 * fusion's own bar the share its entry names, 0.54 by default, ``Searcher.weak_share``) and the best under the weak bar (0.35 for nodes; for tools the
 * searcher's, a learned fusion's own when one ranks them). */
export async function weakWords(searcher: Searcher, query: string, best: number, part = "tools"): Promise<string[] | null> {
  // a learned model's bar moves by rise / words (``Searcher.weak_bar``)
  const learned = part === "tools" ? searcher.weakRule : undefined;
  const [bar, rise, share] = learned ?? [part === "tools" ? searcher.weakBar : 0.35, 0, 0.58];
  if (!(best < bar + Math.max(rise, 0))) return null; // over the bar for any length
  const [missing, words] = await unknownWords(searcher, query);
  return missing.length && best < bar + rise / words && (await unknownShare(searcher, query)) >= share ? missing : null;
}

/** A search's answer when nothing matches the whole request (``_weak_answer``): the same hits under ``key``, marked
 * weak, a note, and a way to browse ``browse`` (the root by default). */
export function weakAnswer(query: string, hits: Json[], missing: string[], key = "matches", browse: string[] = []): Json {
  return {
    [key]: hits,
    weak: true,
    hints: [`No good match for ${head200(query)}: no tool mentions ${missing.slice(0, 5).map(pyQuote).join(", ")}, so these match only part of it. Try other words for it, or browse the categories.`],
    next_action: { op: "list", args: { path: browse.join("/") } },
  };
}

/** find_tool's weak answer, else null. */
export async function weak(searcher: Searcher, query: string, matches: Json[]): Promise<Json | null> {
  const missing = await weakWords(searcher, query, (matches[0] as Artifact).relevance);
  return missing ? weakAnswer(query, matches, missing) : null;
}

/** search_nodes' answer: none found (``noNodes``), weak (most of the idf in words no tool has, the best under 0.35), or the results. */
export async function nodesAnswer(searcher: Searcher, query: string, results: Json[]): Promise<Json> {
  if (!results.length) return noNodes(query);
  const missing = await weakWords(searcher, query, (results[0] as Artifact).confidence, "nodes");
  return missing ? weakAnswer(query, results, missing, "results") : { results };
}

/** search_tool_by_category's answer (``Searcher.search_tool_by_category``): NO_MATCH_IN_CATEGORY when nothing is
 * found or no word of the query is in any tool, weak when most are not (the best under the weak bar), else the page. */
export async function categoryAnswer(searcher: Searcher, query: string, path: string[], page: PointedHit[], key: string | false, offset: number, named: string | null): Promise<Json> {
  if (!page.length && !offset) throw await noMatch(searcher, query, path);
  const results = page.map(([pointer, score]) => leanHit(pointer, score));
  const answer: Json = { category_path: path, results, next_cursor: key === false ? null : encodeCursor(offset + page.length, key) };
  const missing = named || offset ? null : await weakWords(searcher, query, (page[0] as PointedHit)[1]);
  if (!missing) return answer;
  if (missing.length === (await unknownWords(searcher, query))[1]) throw await noMatch(searcher, query, path, false);
  return { ...answer, ...weakAnswer(query, results, missing, "results", path) };
}

/** list(query=)'s note and way forward on a weak page (``spec.list_node``), or null. */
export async function weakList(store: Store, query: string, where: string[], scores: Map<string, number>): Promise<[string, Action] | null> {
  const missing = await weakWords(store.searcherRequired(), query, Math.max(0, ...scores.values()));
  if (!missing) return null;
  const hint = `No good match for ${head200(query)}: no tool mentions ${missing.slice(0, 5).map(pyQuote).join(", ")}, so these match only part of it. Try other words for it, or browse this category.`;
  return [hint, { op: "list", args: { path: where.join("/") } }];
}

/** The pointer of a tool named exactly but not among the hits, when it is within ``scope`` (``searcher._spec_pointer``). */
export async function specPointer(searcher: Searcher, toolId: string, scope: string[] | null): Promise<Artifact | null> {
  const lookup = searcher.manifest.lookup;
  const entries = (await searcher.fetch(lookup.refs[await lookupBucket(toolId, lookup.buckets)])).entries ?? {};
  const found = Object.hasOwn(entries, toolId) ? entries[toolId] : null;
  if (!isObject(found)) return null;
  const spec = await searcher.fetch(found.spec);
  const homes: string[][] = [spec.path ?? [], ...(spec.categories ?? [])];
  if (scope && scope.length && !homes.some((home) => JSON.stringify(home.slice(0, scope.length)) === JSON.stringify(scope))) return null;
  return {
    tool_id: toolId,
    alias: (spec.aliases ?? {}).openai ?? toolId,
    type: spec.type ?? null,
    path: [...(spec.path ?? [])],
    summary: spec.summary ?? "",
    tags: [...(spec.tags ?? [])],
    kind: spec.kind ?? null,
    optional: spec.optional ?? false,
    deprecated: spec.deprecated ?? false,
    ...(spec.capabilities?.length ? { capabilities: [...spec.capabilities] } : {}),
    spec: found.spec,
  };
}

// == agent-written queries (search.ts: findTool, when a query holds a label) ===========================
/** ``(words, category hint)`` of a query such as ``server: github / tool: create issue`` (``searcher.split_hint``:
 * the same cuts, tested side by side in test_js.py). */
const HINT = /(?<![\p{L}\p{N}_])(server|category|namespace|service|app)\s*[:=]\s*([^/;|\n]*)/iu;
/** The longest category hint, in characters (``searcher.HINT_MAX_CHARS``: cut at a word; the rest is the query's words). */
const HINT_MAX_CHARS = 80;
const LABEL = /(?<![\p{L}\p{N}_])(tool|action|task|query)\s*[:=]/iu;

export function splitHint(query: string): [string, string | null] {
  let hint: string | null = null;
  const found = HINT.exec(query);
  if (found === null && !LABEL.test(query)) return [query, null];
  if (found !== null) {
    // the hint ends at the next label too (``server: github, tool: create issue`` on one line gives ``github``)
    const start = found.index + found[0].length - (found[2] as string).length;
    let end = found.index + found[0].length;
    const label = LABEL.exec(query.slice(start, end));
    if (label !== null) end = start + label.index;
    if (end - start > HINT_MAX_CHARS) {
      const space = query.lastIndexOf(" ", start + HINT_MAX_CHARS);
      end = space > start ? space : start + HINT_MAX_CHARS;
    }
    hint = query.slice(start, end).trim().replace(/,+$/, "").trim() || null;
    query = query.slice(0, found.index) + " " + query.slice(end);
  }
  const words = query.replace(new RegExp(LABEL.source, "giu"), " ").replace(/[/|;]/g, " ").split(/\s+/).filter(Boolean).join(" ");
  return [words || query.trim(), hint];
}

/** findTool's page (``searcher._hinted_tools``): the query's words ranked everywhere, the hint's words included;
 * the tools under the node a category hint names gain ``HINT_BOOST`` (a boost, never a filter). */
export async function hintedTools(searcher: Searcher, query: string, limit: number): Promise<[PointedHit[], boolean, string | null]> {
  const [words, hint] = splitHint(query);
  const path = hint && words ? await hintPath(searcher, hint) : null;
  const entry = path !== null ? await searcher.nodeEntry(path) : null;
  return searcher.answerTools(hint && words ? `${words} ${hint}` : words, limit, 0, null, null, null, entry !== null ? scope(entry, false) : null);
}

/** The node a category hint names (a root child by name, a found node by name or title), else the best node if good enough. */
async function hintPath(searcher: Searcher, hint: string): Promise<string[] | null> {
  const root = isObject(searcher.manifest.root) ? await searcher.fetch(searcher.manifest.root) : {};
  const key = (text: unknown) => nameKey(String(text)).replaceAll(" ", "_");
  const wanted = key(hint);
  for (const child of root.children ?? []) if (isObject(child) && key(child.name ?? "") === wanted) return [String(child.name)];
  const found = await searcher.nodeResults(hint, 5);
  const named = found.filter((r) => wanted === key((r.path as string[]).at(-1)) || wanted === key(r.title));
  if (named.length) return [...(named[0]?.path as string[])];
  return found.length && (found[0]?.confidence as number) >= 0.3 ? [...(found[0]?.path as string[])] : null;
}

// == the host (source.ts) ===========================================================================
const REDIRECT_HINT = `The reader follows redirects only within the base URL's scheme, host and port, at most ${MAX_REDIRECTS} hops; open the final URL directly.`;

export function hashMismatch(where: string, path: string, digest: string, size: number, got: string, length: number): ReaderError {
  return new ReaderError(
    "INTEGRITY",
    `${where} does not match the hash its parent holds (expected sha256 ${digest.slice(0, 16)}… and ${size} bytes, got ${got.slice(0, 16)}… and ${length} bytes); it was not used`,
    {
      details: { path, expected_sha256: digest, got_sha256: got, expected_bytes: size, got_bytes: length },
      hints: [
        "The file was modified or truncated after the build, or a cache/CDN serves a stale copy.",
        "Rebuild and redeploy the whole build folder; clear the reader cache if it persists.",
      ],
    },
  );
}

/** A proven file (``toolcat-index-4``'s doc shards) whose Merkle path does not lead to the root its parent holds
 * (``Store._fetch_proven``). */
export function provenMismatch(path: string, root: string, why: string): ReaderError {
  return new ReaderError("INTEGRITY", `${path} does not match the page root its parent holds (${why}); it was not used`, {
    details: { path, expected_root: root.slice(0, 64) },
    hints: ["The file was modified after the build, or a cache/CDN serves a stale copy; redeploy the build."],
  });
}

export function tooLarge(url: string, limit: number, why: string): ReaderError {
  return new ReaderError("INTEGRITY", `${url} is larger than expected (${limit} bytes: ${why}); it was not used`, {
    details: { url, limit_bytes: limit },
    hints: [
      "The host serves another file than the catalogue names, or a compressed body inflates past it (a gzip bomb); the reader stopped reading there.",
    ],
  });
}

export function notModified(url: string): ReaderError {
  return new ReaderError("UNAVAILABLE", `${url} answered 304 Not Modified to a request without If-None-Match`, {
    details: { url, status: 304 },
    hints: ["The host or a cache in between answers 304 to unconditional requests; fix its configuration."],
  });
}

export function malformedPendingRef(ref: unknown): ReaderError {
  return new ReaderError("INTEGRITY", `malformed pending ref ${shown(ref, 200)}`, { details: { ref: shown(ref, 200) } });
}

export function overCap(path: string, url: string, size: number, cap: number): ReaderError {
  return new ReaderError("INTEGRITY", `the ref to ${path} promises ${size} bytes, above the reader's cap of ${cap} bytes (max_file_bytes); ${url} was not fetched`, {
    details: { path, url, promised_bytes: size, cap_bytes: cap },
    hints: [
      "A toolcat build keeps its files small; a huge promise means a malformed or hostile catalogue.",
      "If the catalogue is yours and the file is legitimately this large, open it with a larger max_file_bytes.",
    ],
  });
}

export function unreachable(url: string, attempts: number, last: string, timeout: number): ReaderError {
  return new ReaderError("UNAVAILABLE", `could not fetch ${url} after ${attempts} attempt(s): ${last}`, {
    details: { url, attempts, last_error: last, timeout_s: timeout },
    hints: ["The server is down, slow or dropping connections; retry later or raise timeout/retries."],
  });
}

export function redirectWithoutLocation(url: string, status: number): ReaderError {
  return new ReaderError("UNAVAILABLE", `${url} answered a redirect (HTTP ${status}) the reader does not follow (without a Location)`, {
    details: { url, status, location: "" },
    hints: [REDIRECT_HINT],
  });
}

export function redirect(url: string, target: string, reason: string): ReaderError {
  return new ReaderError("UNAVAILABLE", `${url} redirects to ${target.slice(0, 300)}, which the reader does not follow: ${reason}`, {
    details: { url, location: target.slice(0, 300) },
    hints: [REDIRECT_HINT],
  });
}

export function httpStatus(url: string, status: number): ReaderError {
  return new ReaderError("UNAVAILABLE", `${url} answered HTTP ${status}` + (status === 404 ? " (not found)" : ""), {
    details: { url, status },
    hints: ["Check the base URL (it must be the folder holding catalog.json) and that the whole build folder was deployed."],
  });
}

export function encoding(url: string, encoding: string): ReaderError {
  return new ReaderError("UNAVAILABLE", `${url} answered with Content-Encoding ${shown(encoding.slice(0, 80))}, which the reader cannot decode`, {
    details: { url, content_encoding: encoding.slice(0, 200) },
    hints: ["The reader asks for gzip or identity; configure the host to serve one of them."],
  });
}

// == lookups (store.ts, search.ts) ===================================================================
/** Names spelled like ``word``, and names it is a prefix of (``toolcat.reader.checks.close_names``). */
export function closeNames(word: string, names: string[], n = 5): string[] {
  const found = closeMatches(word, names, n, 0.5);
  const prefixed = names.filter((name) => name.startsWith(word) || word.startsWith(name + ".")).sort(cmp).slice(0, n);
  return unique([...found, ...prefixed]).slice(0, n);
}

// == the entry and the manifest (store.ts) ===========================================================
export function notAnEntry(message: string): ReaderError {
  return new ReaderError("UNAVAILABLE", message, { hints: ["Point the reader at a toolcat build folder or its base URL."] });
}

export function formatVersion(location: string, found: unknown): ReaderError {
  return new ReaderError("UNAVAILABLE", `${location} has format_version ${shown(found)}; this reader reads ${SUPPORTED_FORMAT_VERSION}`, {
    details: { format_version: found ?? null, supported: SUPPORTED_FORMAT_VERSION },
    hints: ["Upgrade the toolcat reader or rebuild the catalogue with this version."],
  });
}

export function versionNotPublished(requested: string, location: string, available: string[]): ReaderError {
  return new ReaderError("UNAVAILABLE", `registry_version ${pyQuote(requested)} is not published at ${location}`, {
    details: { requested, available },
    hints: ["Pin one of the available versions, or open without version= to read the latest."],
  });
}

export function pinMismatch(location: string, pin: string, pinned: string | null, version: string, got: unknown): ReaderError {
  return new ReaderError(
    "INTEGRITY",
    `${location} does not publish the pinned manifest: expected sha256 ${pin}, got ${got ?? "None"}` + (pinned !== null ? ` (registry_version ${pinned})` : ""),
    {
      details: { expected_sha256: pin, got_sha256: got, registry_version: version },
      hints: [
        "The host serves another catalogue than the one pinned; nothing from it was used.",
        "Pin a new catalogue only after reviewing it: pin is the sha256 of its manifest file, the 'sha256' of the 'manifest' ref in catalog.json.",
      ],
    },
  );
}

export function notTheManifest(manifest: unknown, version: string): ReaderError {
  if (!isObject(manifest) || manifest.artifact !== "manifest") return new ReaderError("INTEGRITY", "the manifest is not a toolcat manifest");
  return new ReaderError("INTEGRITY", `the manifest does not belong to registry_version ${version}`, { details: { manifest_version: manifest.registry_version ?? null } });
}

export function treeTooBig(path: string[], depth: number, nodes: number): ReaderError {
  return new ReaderError("INTEGRITY", `the node tree under ${path.join("/") || "root"} is deeper than ${depth} levels or has more than ${nodes} nodes`, {
    hints: ["The host serves a node tree no toolcat build writes; pin the catalogue (pin='sha256:...') or report it to its publisher."],
  });
}

// == failed lookups (store.ts, search.ts) ============================================================
/** TOOL_NOT_FOUND, with the tools a search and the spelling suggest. */
export async function toolNotFound(store: Store, name: string): Promise<ReaderError> {
  const suggestions = await suggestTools(store, name);
  return new ReaderError("TOOL_NOT_FOUND", `no tool named ${shown(name, 120)} (checked canonical ids, provider aliases and skill names)`, {
    details: { suggestions },
    hints: [suggestions.length ? `Did you mean ${suggestions.join(", ")}?` : "Search for the tool by purpose, or browse the groups."],
    next_action: suggestions.length
      ? { op: "describe", args: { tool_id: suggestions[0] } }
      : { op: "search", args: { query: name.replaceAll(".", " ").replaceAll("_", " ") } },
    help_path: "root",
  });
}

async function suggestTools(store: Store, name: string): Promise<string[]> {
  let ids: string[] = [];
  const searcher = store.searcher();
  if (searcher !== null) {
    try {
      const hits = await searcher.rankTools(name.replaceAll(".", " ").replaceAll("_", " "), { limit: 5 });
      ids = hits.map((h) => String(h[0].tool_id));
    } catch {
      // suggestions are a courtesy: a failed search leaves them out
    }
  }
  const counts = store.manifest.counts ?? {};
  if (Number(counts.tools ?? 0) + Number(counts.skills ?? 0) <= SUGGEST_WALK_LIMIT) {
    ids = unique([...closeNames(name, [...(await allPointers(store)).keys()].sort(cmp)), ...ids]);
  }
  return ids.slice(0, 5);
}

/** UNKNOWN_PATH for a node walk that found no child ``asked`` under ``walked``. */
export function noChild(path: string[], walked: string[], asked: string, children: string[]): ReaderError {
  const where = walked.join("/") || "root";
  const names = children.sort(cmp);
  let close = closeNames(asked.toLowerCase(), names, 3);
  if (!close.length) close = closeNames(asked, names, 3);
  const suggestions = close.map((c) => [...walked, c].join("/"));
  return new ReaderError("UNKNOWN_PATH", `node ${pyQuote(path.join("/"))} does not exist: ${where} has no child ${pyQuote(asked)}`, {
    details: { path: [...path], parent: walked.join("/"), children: names, suggestions },
    hints: [`Children of ${where}: ${names.join(", ") || "none"}.`],
    next_action: unknownNodeNext(suggestions, walked, path.slice(walked.length)),
  });
}

/** A category search's UNKNOWN_PATH (``spec._category``): its way forward runs the same query nearby, in the closest
 * child, else in the deepest node of the path that exists. */
export function searchNearby(err: ReaderError, query: unknown): ReaderError {
  if (err.code === "UNKNOWN_PATH") err.next_action = { op: "search_in", args: { query, path: [...(err.details as Artifact).suggestions, err.details.parent][0] } };
  return err;
}

/** UNKNOWN_PATH's way forward: list the closest child; else search the missing names' words where the walk stopped. */
function unknownNodeNext(suggestions: string[], walked: string[], missing: string[]): Artifact {
  if (suggestions.length) return { op: "list", args: { path: suggestions[0] } };
  const words = missing.join(" ").replace(/[_.-]/g, " ").split(/\s+/).filter(Boolean).join(" ");
  const path = walked.join("/");
  if (!words) return { op: "list", args: { path } };
  return walked.length ? { op: "search_in", args: { query: words, path } } : { op: "search", args: { query: words } };
}

/** UNKNOWN_PATH for a search inside a category that does not exist, with the closest ones. */
export async function unknownCategory(searcher: Searcher, path: string[], query: string): Promise<ReaderError> {
  const root = isObject(searcher.manifest.root) ? await searcher.fetch(searcher.manifest.root) : { children: [] };
  const roots: string[] = (root.children ?? []).map((c: Artifact) => c.name);
  const close = path.length ? closeMatches(path[0] as string, roots, 3, 0.3) : [];
  const hints = [`No category ${pyQuote(path.join("/"))}.`];
  if (close.length) hints.push("Closest root categories: " + close.join(", "));
  else if (roots.length) hints.push("Root categories: " + roots.slice(0, 10).join(", "));
  const suggestions = (await searcher.nodeResults(path.join(" "), 3)).map((r) => r.path as string[]);
  if (suggestions.length) hints.push("Closest node paths: " + suggestions.map((p) => p.join("/")).join(", "));
  return new ReaderError("UNKNOWN_PATH", `unknown category path ${pyQuote(path.join("/"))}`, {
    details: { category_path: path, closest_roots: close, closest_paths: suggestions },
    hints,
    next_action: { op: "search_nodes", args: { query: query || path.join(" ") } },
  });
}
/** A ranked pointer as a model reads it (here, not in search.ts: only these answers need it): no provider alias, no empty or false field, its confidence. */
export function leanHit(pointer: Artifact, score: number): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(pointer)) {
    if (key === "alias" || isEmpty(value) || ((key === "optional" || key === "deprecated") && value === false)) continue;
    out[key] = value;
  }
  out.confidence = pyRound(Math.min(1, score), 4);
  return out;
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length) || (isObject(value) && !Object.keys(value).length);
}

/** The best tools for ``query`` above find_tool's floor (here, not in search.ts: only a failure needs it). */
async function topTools(searcher: Searcher, query: string, limit: number): Promise<PointedHit[]> {
  const hits = await searcher.ranked("tools", query, null, limit + 1);
  const floor = hits.length ? Math.max(MIN_RELEVANCE, MIN_RELATIVE * (hits[0] as Hit)[1]) : 0;
  return searcher.pointed(hits.filter((h) => h[1] >= floor).slice(0, limit));
}

/** NO_MATCH_IN_CATEGORY, with the categories where the query does match. */
export async function noMatch(searcher: Searcher, query: string, path: string[], anywhere = true): Promise<ReaderError> {
  const elsewhere = anywhere ? await topTools(searcher, query, 10) : [];
  const places: string[][] = [];
  for (const [pointer] of elsewhere) if (!places.some((p) => JSON.stringify(p) === JSON.stringify(pointer.path))) places.push(pointer.path);
  const where = path.join("/");
  const hints = [`No tool under ${pyQuote(where || "the root")} matches ${pyQuote(query)}.`];
  let action;
  if (places.length) {
    hints.push("The query matches tools in: " + places.slice(0, 3).map((p) => p.join("/") || "(root)").join(", "));
    action = { op: "search_in", args: { query, path: (places[0] as string[]).join("/") } };
  } else {
    hints.push("No tool in the catalogue matches well; try other words, or browse the categories.");
    action = { op: "list", args: { path: where } };
  }
  return new ReaderError("NO_MATCH_IN_CATEGORY", `no tool under ${pyQuote(where || "(root)")} matches the query`, {
    details: { category_path: path, query, matching_categories: places.slice(0, 3) },
    hints,
    next_action: action,
  });
}

// == the search index (search.ts) ====================================================================
export function noIndex(): ReaderError {
  return new ReaderError("UNAVAILABLE", "this build has no search index", {
    hints: ["Rebuild the catalogue with a toolcat that writes the index (manifest key 'index')."],
    next_action: { op: "list", args: {} },
  });
}

/** An index meta of another format or analyzer version (``ranking.IndexReader._part``): to be rebuilt. */
export function staleIndex(meta: Artifact): ReaderError {
  if (!INDEX_FORMATS.includes(meta.format)) {
    return new ReaderError("UNAVAILABLE", "the search index was written in another format than this reader reads: rebuild the catalogue", {
      details: { index: meta.format ?? null, reader: INDEX_FORMAT },
      hints: ["Rebuild the catalogue with this toolcat (`toolcat build SRC OUT`), then search again."],
    });
  }
  return new ReaderError("UNAVAILABLE", "the search index was built with another analyzer version", {
    details: { index: meta.analyzer?.version ?? null, reader: ANALYZER_VERSION },
    hints: ["Use a reader that matches the toolcat version that built the catalogue."],
  });
}

/** A ``tools.expand`` entry with settings out of range (``expansion.settings``, ``Searcher._expanded``). */
export function badExpand(meta: Artifact): ReaderError {
  const why = `ValueError('expand settings out of range: ${meta.weight}, ${meta.candidates}, ${meta.denominator}')`;
  return new ReaderError("INTEGRITY", `the search index meta's tools.expand entry is not what a build writes (${why})`, {
    hints: ["The host serves files a toolcat build did not write; rebuild and republish the catalogue."],
  });
}

export function badPart(name: string, why: string): ReaderError {
  return new ReaderError("INTEGRITY", `the search index meta's '${name}' part is not what a build writes (${why})`, {
    details: { part: name },
    hints: ["The host serves files a toolcat build did not write; rebuild and republish the catalogue."],
  });
}

/** ``checks.cursor_key``: a category search loads this chunk anyway (``categoryAnswer``), so the key costs the main
 * entry nothing. */
export async function cursorKey(...parts: unknown[]): Promise<string> {
  return (await sha256(new TextEncoder().encode(pyTupleRepr(parts)))).slice(0, 8);
}

/** ``repr(tuple)`` of strings and lists of strings: what Python hashes to bind a cursor to its query. */
function pyTupleRepr(parts: unknown[]): string {
  const one = (v: unknown): string => (Array.isArray(v) ? "[" + v.map(one).join(", ") + "]" : shown(v, 1 << 30));
  return "(" + parts.map(one).join(", ") + (parts.length === 1 ? ",)" : ")");
}
