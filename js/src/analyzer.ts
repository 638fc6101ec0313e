/** The search analyzer (``toolcat.reader.analyzer``, version ``toolcat-analyzer-3``): text → word terms and 4-grams.
 * Python's ``[^\W_]`` is a letter or a number (``\p{L}\p{N}``), its ``\d`` a decimal digit (``\p{Nd}``). */

export const ANALYZER_VERSION = "toolcat-analyzer-3";
const WORD = /[\p{L}\p{N}]+/gu;
const CAMEL = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|(?:(?![A-Za-z\p{Nd}])[\p{L}\p{N}])+/gu;
const SHORT_ALNUM = /^(?=[\p{L}\p{N}]*(?:\p{L}|(?!\p{Nd})\p{N}))(?=[\p{L}\p{N}]*\p{Nd})[\p{L}\p{N}]+$/u;
const SHORT_TOKEN_CHARS = 4;
const ALPHA = /^\p{L}+$/u;
export const STOP_WORDS = new Set(
  ("a an and are as at be by can could do does for from has have how i if in into is it its me my of on or our please so " +
    "that the their them then there these this to us was we what when where which who will with would you your").split(" "),
);
/** Stemmed word → its term(s): the index meta's ``analyzer.thesaurus.table`` (``ABBREVIATIONS`` today). */
export type Thesaurus = Record<string, string[]>;
export const DEFAULT_THESAURUS: Thesaurus = { pr: ["pull", "request"], prs: ["pull", "request"], repo: ["repository"], repos: ["repository"] };

/** The suffix stemmer: plurals, -ing, -ed and a final -e (``changes`` → ``chang``), over code points. */
export function stem(word: string): string {
  const chars = Array.from(word);
  if (chars.length <= 3 || !ALPHA.test(word)) return word;
  const ends = (w: string[], s: string) => w.slice(w.length - s.length).join("") === s && w.length >= s.length;
  if (ends(chars, "sses")) return chars.slice(0, -2).join("");
  if (ends(chars, "ies") && chars.length > 4) return chars.slice(0, -3).join("") + "y";
  let base = chars;
  if (ends(chars, "s") && !ends(chars, "ss") && !ends(chars, "us") && !ends(chars, "is")) base = chars.slice(0, -1);
  for (const suffix of ["ing", "ed"]) {
    if (ends(base, suffix) && base.length - suffix.length >= 3) {
      let root = base.slice(0, base.length - suffix.length);
      const last = root[root.length - 1] as string;
      if (last === root[root.length - 2] && !"lsz".includes(last)) root = root.slice(0, -1);
      return root.join("");
    }
  }
  if (ends(base, "e") && base.length > 4) base = base.slice(0, -1);
  return base.join("");
}

const memo = new Map<string, string[]>();

function tokenTerms(token: string, thesaurus: Thesaurus): string[] {
  const out: string[] = [];
  const parts = token.match(CAMEL) ?? [];
  if (parts.length > 1 && Array.from(token).length <= SHORT_TOKEN_CHARS && SHORT_ALNUM.test(token)) out.push(token.toLowerCase());
  for (const part of parts) {
    const lowered = part.toLowerCase();
    if (STOP_WORDS.has(lowered)) continue;
    const stemmed = stem(lowered);
    out.push(...(Object.hasOwn(thesaurus, stemmed) ? (thesaurus[stemmed] as string[]) : [stemmed]));
  }
  return out;
}

/** Word terms: split on non-alphanumerics and identifier case, lowercase, drop stop words, stem, thesaurus. */
export function analyzeWords(text: string, thesaurus: Thesaurus = DEFAULT_THESAURUS): string[] {
  const out: string[] = [];
  for (const token of text.match(WORD) ?? []) {
    if (thesaurus !== DEFAULT_THESAURUS) {
      out.push(...tokenTerms(token, thesaurus));
      continue;
    }
    let terms = memo.get(token);
    if (!terms) {
      terms = tokenTerms(token, thesaurus);
      if (memo.size > 50_000) memo.clear();
      memo.set(token, terms);
    }
    out.push(...terms);
  }
  return out;
}

/** The 4-grams of one word term padded with a space each side (scikit-learn's ``char_wb``). */
export function wordNgrams(word: string): string[] {
  const padded = Array.from(` ${word} `);
  const out: string[] = [];
  for (let i = 0; i + 4 <= padded.length; i++) out.push(padded.slice(i, i + 4).join(""));
  return out;
}

export function analyzeChars(text: string, thesaurus: Thesaurus = DEFAULT_THESAURUS): string[] {
  return analyzeWords(text, thesaurus).flatMap(wordNgrams);
}
