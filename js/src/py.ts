/** Python's behaviour where answers must agree byte for byte: rounding, string order, repr, json.dumps (difflib is in difflib.ts). */

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Python's ``round(x, digits)``: the exact binary value rounded to nearest, ties to even. */
export function pyRound(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const text = x.toFixed(digits); // nearest; an exact tie goes away from zero
  const rest = (Math.abs(x).toFixed(100).split(".")[1] ?? "").slice(digits);
  if (!/^50*$/.test(rest) || Number(text[text.length - 1]) % 2 === 0) return Number(text);
  return Number((Number(text) - Math.sign(x) * 10 ** -digits).toFixed(digits));
}

/** Python's string order (by code point), where JavaScript's default compares UTF-16 code units. */
export function cmp(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** ``bisect.bisect_right(sorted, value)``. */
export function bisectRight<T>(sorted: T[], value: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compare(value, sorted[mid] as T) < 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Python's list order for node paths (lists of strings). */
export function cmpPath(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = cmp(a[i] as string, b[i] as string);
    if (c) return c;
  }
  return a.length - b.length;
}

/** ``repr(str)``: the quote Python chooses, and escapes for what ``str.isprintable`` calls unprintable (Unicode's
 * Other and Separator categories but the space). */
function reprStr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    const width = code < 256 ? 2 : code < 65536 ? 4 : 8;
    out +=
      ch === quote ? "\\" + ch
      : "\\\n\r\t".includes(ch) ? JSON.stringify(ch).slice(1, -1)
      : /(?! )[\p{C}\p{Z}]/u.test(ch) ? "\\" + "xuU"[width >> 2] + code.toString(16).padStart(width, "0")
      : ch;
  }
  return quote + out + quote;
}

function trimmed(full: string, limit: number, again: (cut: string) => string, source: string): string {
  if (full.length <= limit) return full;
  const i = Math.max(0, Math.floor((limit - 3) / 2));
  const j = Math.max(0, limit - 3 - i);
  const chars = Array.from(source);
  const s = again(chars.slice(0, i).join("") + chars.slice(chars.length - j).join(""));
  return s.slice(0, i) + "..." + s.slice(s.length - j);
}

function reprValue(value: unknown, limit: number, level: number): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") {
    const cut = Array.from(value).slice(0, limit).join("");
    return trimmed(reprStr(cut), limit, reprStr, cut);
  }
  if (typeof value === "number") {
    const text = Number.isInteger(value) && Math.abs(value) < 1e16 ? String(value) : pyFloat(value);
    return trimmed(text, limit, (s) => s, text);
  }
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    if (level <= 0) return "[...]";
    const items = value.slice(0, 8).map((v) => reprValue(v, limit, level - 1));
    if (value.length > 8) items.push("...");
    return "[" + items.join(", ") + "]";
  }
  if (isObject(value)) {
    const keys = Object.keys(value).sort(cmp);
    if (!keys.length) return "{}";
    if (level <= 0) return "{...}";
    const items = keys.slice(0, 8).map((k) => reprValue(k, limit, level - 1) + ": " + reprValue(value[k], limit, level - 1));
    if (keys.length > 8) items.push("...");
    return "{" + items.join(", ") + "}";
  }
  return `<${typeof value}>`;
}

function pyFloat(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  let text = String(value);
  if (/e/.test(text)) {
    text = text.replace(/e([+-])(\d)$/, "e$10$2");
    return text;
  }
  return text.includes(".") ? text : text + ".0";
}

/** ``toolcat.reader.checks.shown``: a short repr (reprlib) of a caller's value. */
export function shown(value: unknown, limit = 80): string {
  return reprValue(value, limit, 4).slice(0, limit);
}

/** ``json.dumps(value, ensure_ascii=False, sort_keys=True)`` with Python's default separators. */
export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return "[" + value.map(pyJson).join(", ") + "]";
  if (isObject(value)) {
    return "{" + Object.keys(value).sort(cmp).map((k) => JSON.stringify(k) + ": " + pyJson(value[k])).join(", ") + "}";
  }
  return "null";
}

/** ``dict.fromkeys(items)``: the items in order, each once. */
export function unique<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}
