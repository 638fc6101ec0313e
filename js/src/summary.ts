/** Each search hit's one-line summary (issue 35; ``dialects/shared.py``: ``one_line``, ``with_summaries``,
 * ``capped_summary``), a chunk of the minified build loaded by the first search with hits. */
import type { Json } from "./py.js"; // no value import: a chunk sharing no module with the main entry's stays one file

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** A search answer's one-line summary per hit is cut to this many characters (``SUMMARY_CHARS``). */
const SUMMARY_CHARS = 120;
// Python's str.isspace() characters (str.strip() and str.split() with no argument) and str.splitlines()' breaks.
const WS = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const SPACES = new RegExp(`[${WS}]+`, "g");
const LEAD = new RegExp(`^[${WS}]+`);
const BREAK = /[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/;

/** ``one_line``: the text's first line, whitespace collapsed, at most ``limit`` code points (cut at a word with
 * "…", trailing " ,;:" dropped); null when it is not text or blank. */
export function oneLine(text: unknown, limit = SUMMARY_CHARS): string | null {
  if (typeof text !== "string") return null;
  // text.strip().splitlines()[0], then " ".join(line.split()): each line break is whitespace too
  const line = (text.replace(LEAD, "").split(BREAK)[0] as string).replace(SPACES, " ").replace(/ $/, "");
  if (!line) return null;
  const points = Array.from(line);
  if (points.length <= limit) return line;
  const head = points.slice(0, limit - 1).join("");
  const cut = head.includes(" ") ? head.slice(0, head.lastIndexOf(" ")) : head;
  return cut.replace(/[ ,;:]+$/, "") + "…";
}

/** ``with_summaries``: hits naming a tool by ``key``, each with its one-line summary (a hit without one as it is). */
export function withSummaries(rows: Json[], key: string): Json[] {
  return rows.map((row) => {
    const summary = isObject(row) && typeof row[key] === "string" ? oneLine(row.summary) : null;
    return summary ? { ...row, summary } : row;
  });
}

/** A search answer with each hit's one line: find_tool's matches (``namespaced.find_tool``: the ranking's reason,
 * its matched terms, on the top match only, as the summary says what a hit does) or search_tool_by_category's
 * results (``capped_summary``: each pointer's summary cut to one line). */
export function summarized(answer: Json): Json {
  if (Array.isArray(answer.matches)) {
    const rows = withSummaries(answer.matches, "name");
    answer.matches = rows.map((m, i) => (i && isObject(m) ? Object.fromEntries(Object.entries(m).filter(([k]) => k !== "reason")) : m));
  } else if (Array.isArray(answer.results)) {
    answer.results = answer.results.map((r) => (isObject(r) && typeof r.summary === "string" ? { ...r, summary: oneLine(r.summary) ?? r.summary } : r));
  }
  return answer;
}
