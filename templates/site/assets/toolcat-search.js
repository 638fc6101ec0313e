/* toolcat search in the browser: built from js/src/site.ts and the toolcat reader package (`npm run site` in js/); do not edit. */
"use strict";
(() => {
  var __create = Object.create;
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __getProtoOf = Object.getPrototypeOf;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __require = /* @__PURE__ */ ((x) => typeof require !== "undefined" ? require : typeof Proxy !== "undefined" ? new Proxy(x, {
    get: (a, b) => (typeof require !== "undefined" ? require : a)[b]
  }) : x)(function(x) {
    if (typeof require !== "undefined") return require.apply(this, arguments);
    throw Error('Dynamic require of "' + x + '" is not supported');
  });
  var __esm = (fn, res) => function __init() {
    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;
  };
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
    // If the importer is in node compatibility mode or this is not an ESM
    // file that has been converted to a CommonJS file using a Babel-
    // compatible transform (i.e. "__esModule" has not been set), then set
    // "default" to the CommonJS "module.exports" for node compatibility.
    isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
    mod
  ));

  // src/analyzer.ts
  function stem(word) {
    const chars = Array.from(word);
    if (chars.length <= 3 || !ALPHA.test(word)) return word;
    const ends = (w, s) => w.slice(w.length - s.length).join("") === s && w.length >= s.length;
    if (ends(chars, "sses")) return chars.slice(0, -2).join("");
    if (ends(chars, "ies") && chars.length > 4) return chars.slice(0, -3).join("") + "y";
    let base = chars;
    if (ends(chars, "s") && !ends(chars, "ss") && !ends(chars, "us") && !ends(chars, "is")) base = chars.slice(0, -1);
    for (const suffix of ["ing", "ed"]) {
      if (ends(base, suffix) && base.length - suffix.length >= 3) {
        let root = base.slice(0, base.length - suffix.length);
        const last = root[root.length - 1];
        if (last === root[root.length - 2] && !"lsz".includes(last)) root = root.slice(0, -1);
        return root.join("");
      }
    }
    if (ends(base, "e") && base.length > 4) base = base.slice(0, -1);
    return base.join("");
  }
  function tokenTerms(token, thesaurus) {
    const out = [];
    const parts = token.match(CAMEL) ?? [];
    if (parts.length > 1 && Array.from(token).length <= SHORT_TOKEN_CHARS && SHORT_ALNUM.test(token)) out.push(token.toLowerCase());
    for (const part of parts) {
      const lowered = part.toLowerCase();
      if (STOP_WORDS.has(lowered)) continue;
      const stemmed = stem(lowered);
      out.push(...Object.hasOwn(thesaurus, stemmed) ? thesaurus[stemmed] : [stemmed]);
    }
    return out;
  }
  function analyzeWords(text, thesaurus = DEFAULT_THESAURUS) {
    const out = [];
    for (const token of text.match(WORD) ?? []) {
      if (thesaurus !== DEFAULT_THESAURUS) {
        out.push(...tokenTerms(token, thesaurus));
        continue;
      }
      let terms2 = memo.get(token);
      if (!terms2) {
        terms2 = tokenTerms(token, thesaurus);
        if (memo.size > 5e4) memo.clear();
        memo.set(token, terms2);
      }
      out.push(...terms2);
    }
    return out;
  }
  function wordNgrams(word) {
    const padded = Array.from(` ${word} `);
    const out = [];
    for (let i = 0; i + 4 <= padded.length; i++) out.push(padded.slice(i, i + 4).join(""));
    return out;
  }
  function analyzeChars(text, thesaurus = DEFAULT_THESAURUS) {
    return analyzeWords(text, thesaurus).flatMap(wordNgrams);
  }
  var ANALYZER_VERSION, WORD, CAMEL, SHORT_ALNUM, SHORT_TOKEN_CHARS, ALPHA, STOP_WORDS, DEFAULT_THESAURUS, memo;
  var init_analyzer = __esm({
    "src/analyzer.ts"() {
      "use strict";
      ANALYZER_VERSION = "toolcat-analyzer-3";
      WORD = /[\p{L}\p{N}]+/gu;
      CAMEL = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|(?:(?![A-Za-z\p{Nd}])[\p{L}\p{N}])+/gu;
      SHORT_ALNUM = /^(?=[\p{L}\p{N}]*(?:\p{L}|(?!\p{Nd})\p{N}))(?=[\p{L}\p{N}]*\p{Nd})[\p{L}\p{N}]+$/u;
      SHORT_TOKEN_CHARS = 4;
      ALPHA = /^\p{L}+$/u;
      STOP_WORDS = new Set(
        "a an and are as at be by can could do does for from has have how i if in into is it its me my of on or our please so that the their them then there these this to us was we what when where which who will with would you your".split(" ")
      );
      DEFAULT_THESAURUS = { pr: ["pull", "request"], prs: ["pull", "request"], repo: ["repository"], repos: ["repository"] };
      memo = /* @__PURE__ */ new Map();
    }
  });

  // src/py.ts
  function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
  }
  function pyRound(x, digits) {
    if (!Number.isFinite(x)) return x;
    const text = x.toFixed(digits);
    const rest = (Math.abs(x).toFixed(100).split(".")[1] ?? "").slice(digits);
    if (!/^50*$/.test(rest) || Number(text[text.length - 1]) % 2 === 0) return Number(text);
    return Number((Number(text) - Math.sign(x) * 10 ** -digits).toFixed(digits));
  }
  function cmp(a, b) {
    if (a === b) return 0;
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = a.codePointAt(i);
      const y = b.codePointAt(i);
      if (x !== y) return x < y ? -1 : 1;
      if (x > 65535) i++;
    }
    return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
  }
  function bisectRight(sorted, value, compare) {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = lo + hi >> 1;
      if (compare(value, sorted[mid]) < 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  function cmpPath(a, b) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = cmp(a[i], b[i]);
      if (c) return c;
    }
    return a.length - b.length;
  }
  function reprStr(text) {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    let out = "";
    for (const ch of text) {
      const code = ch.codePointAt(0);
      const width = code < 256 ? 2 : code < 65536 ? 4 : 8;
      out += ch === quote ? "\\" + ch : "\\\n\r	".includes(ch) ? JSON.stringify(ch).slice(1, -1) : /(?! )[\p{C}\p{Z}]/u.test(ch) ? "\\" + "xuU"[width >> 2] + code.toString(16).padStart(width, "0") : ch;
    }
    return quote + out + quote;
  }
  function trimmed(full, limit, again, source) {
    if (full.length <= limit) return full;
    const i = Math.max(0, Math.floor((limit - 3) / 2));
    const j = Math.max(0, limit - 3 - i);
    const chars = Array.from(source);
    const s = again(chars.slice(0, i).join("") + chars.slice(chars.length - j).join(""));
    return s.slice(0, i) + "..." + s.slice(s.length - j);
  }
  function reprValue(value, limit, level) {
    if (value === null || value === void 0) return "None";
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
  function pyFloat(value) {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    let text = String(value);
    if (/e/.test(text)) {
      text = text.replace(/e([+-])(\d)$/, "e$10$2");
      return text;
    }
    return text.includes(".") ? text : text + ".0";
  }
  function shown(value, limit = 80) {
    return reprValue(value, limit, 4).slice(0, limit);
  }
  function unique(items) {
    return [...new Set(items)];
  }
  var init_py = __esm({
    "src/py.ts"() {
      "use strict";
    }
  });

  // src/errors.ts
  function errorEnvelope(code, message, options = {}) {
    return {
      ok: false,
      error: {
        code,
        message,
        details: options.details ?? {},
        hints: [...options.hints ?? []],
        next_action: options.next_action ?? null,
        help_path: options.help_path ?? "root"
      }
    };
  }
  function isError(result) {
    const r = result;
    return typeof r === "object" && r !== null && r.ok === false && typeof r.error === "object" && r.error !== null;
  }
  function ok(data, options = {}) {
    return { ok: true, ...data, help_path: options.help_path ?? "root", hints: [...options.hints ?? []], next_action: options.next_action ?? null };
  }
  function bad(message, options = {}) {
    const help_path = options.help_path ?? "root";
    return new ReaderError("BAD_REQUEST", message, { ...options, help_path, next_action: { op: "help", args: { path: help_path } } });
  }
  function empty(value) {
    return value === null || value === void 0 || (typeof value === "string" || Array.isArray(value)) && !value.length || isObject(value) && !Object.keys(value).length;
  }
  function dropEmpty(data, keep = []) {
    return Object.fromEntries(Object.entries(data).filter(([k, v]) => keep.includes(k) || !empty(v)));
  }
  function lean(envelope) {
    return envelope.ok === true ? dropEmpty(envelope, KEEP) : { ...envelope };
  }
  var ReaderError, KEEP;
  var init_errors = __esm({
    "src/errors.ts"() {
      "use strict";
      init_py();
      ReaderError = class extends Error {
        constructor(code, message, options = {}) {
          super(message);
          this.name = "ReaderError";
          this.code = code;
          this.details = options.details ?? {};
          this.hints = options.hints ?? [];
          this.next_action = options.next_action ?? null;
          this.help_path = options.help_path ?? "root";
        }
        envelope() {
          return errorEnvelope(this.code, this.message, this);
        }
      };
      KEEP = ["ok", "path", "next_cursor", "results", "matches", "tools", "nodes", "count", "help_path", "result", "args"];
    }
  });

  // src/sha256sync.ts
  var sha256sync_exports = {};
  __export(sha256sync_exports, {
    sha256Sync: () => sha256Sync
  });
  function roots(count, root) {
    const out = [];
    for (let p = 2; out.length < count; p++) if (![2, 3, 5, 7, 11, 13, 17].some((d) => d < p && p % d === 0)) out.push(root(p) % 1 * 2 ** 32 >>> 0);
    return Uint32Array.from(out);
  }
  function sha256Sync(data) {
    const length = data.length;
    const padded = new Uint8Array(length + 9 + 63 >> 6 << 6);
    padded.set(data);
    padded[length] = 128;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(length / 536870912));
    view.setUint32(padded.length - 4, length << 3 >>> 0);
    const h = H0.slice();
    const w = new Uint32Array(64);
    const rotr = (x, n) => x >>> n | x << 32 - n;
    for (let off = 0; off < padded.length; off += 64) {
      for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + 4 * i);
      for (let i = 16; i < 64; i++) {
        const a2 = w[i - 15];
        const b2 = w[i - 2];
        const s0 = rotr(a2, 7) ^ rotr(a2, 18) ^ a2 >>> 3;
        const s1 = rotr(b2, 17) ^ rotr(b2, 19) ^ b2 >>> 10;
        w[i] = w[i - 16] + s0 + w[i - 7] + s1 >>> 0;
      }
      let [a, b, c, d, e, f, g, hh] = h;
      for (let i = 0; i < 64; i++) {
        const t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (e & f ^ ~e & g) + K[i] + w[i] >>> 0;
        const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + (a & b ^ a & c ^ b & c) >>> 0;
        hh = g;
        g = f;
        f = e;
        e = d + t1 >>> 0;
        d = c;
        c = b;
        b = a;
        a = t1 + t2 >>> 0;
      }
      const add = [a, b, c, d, e, f, g, hh];
      for (let i = 0; i < 8; i++) h[i] = h[i] + add[i] >>> 0;
    }
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setUint32(4 * i, h[i]);
    return out;
  }
  var K, H0;
  var init_sha256sync = __esm({
    "src/sha256sync.ts"() {
      "use strict";
      K = roots(64, Math.cbrt);
      H0 = roots(8, Math.sqrt);
    }
  });

  // src/sha256.ts
  function hex(bytes) {
    let out = "";
    for (const b of bytes) out += b.toString(16).padStart(2, "0");
    return out;
  }
  async function sha256(data) {
    const subtle = globalThis.crypto?.subtle;
    return hex(subtle ? new Uint8Array(await subtle.digest("SHA-256", data)) : (await Promise.resolve().then(() => (init_sha256sync(), sha256sync_exports))).sha256Sync(data));
  }
  async function lookupBucket(key, buckets) {
    return parseInt((await sha256(encoder.encode(key))).slice(0, 8), 16) % buckets;
  }
  var encoder;
  var init_sha256 = __esm({
    "src/sha256.ts"() {
      "use strict";
      encoder = new TextEncoder();
    }
  });

  // src/proven.ts
  function hex2(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  async function sha2562(data) {
    const subtle = globalThis.crypto?.subtle;
    return hex2(subtle ? new Uint8Array(await subtle.digest("SHA-256", data)) : (await Promise.resolve().then(() => (init_sha256sync(), sha256sync_exports))).sha256Sync(data));
  }
  function unhex(text) {
    return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
  }
  function joined(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
  async function provenBody(data, root, place, perPage) {
    let at = -1;
    for (let i = data.length - PROOF_KEY.length; i > 0 && at < 0; i--) {
      if (PROOF_KEY.every((b, j) => data[i + j] === b)) at = i;
    }
    const depth = perPage > 1 ? (perPage - 1).toString(2).length : 0;
    const proof = at > 0 ? new TextDecoder().decode(data.subarray(at + PROOF_KEY.length, data.length - 2)) : "";
    if (at <= 0 || data[data.length - 2] !== 34 || data[data.length - 1] !== 125 || proof.length !== 64 * depth || !/^[0-9a-f]*$/.test(proof)) {
      throw new RangeError("a proven file without a well-formed proof");
    }
    const body = joined(data.subarray(0, at), Uint8Array.of(125));
    let digest = unhex(await sha2562(joined(Uint8Array.of(0), body)));
    for (let level = 0; level < depth; level++) {
      const sibling = unhex(proof.slice(64 * level, 64 * level + 64));
      digest = unhex(await sha2562(place >> level & 1 ? joined(Uint8Array.of(1), sibling, digest) : joined(Uint8Array.of(1), digest, sibling)));
    }
    if (!(place >= 0 && place < perPage) || hex2(digest) !== root) throw new RangeError("a proven file whose path does not lead to its page's root");
    return body;
  }
  async function provenFile(searcher, ref, bound, root, place, perPage, holder) {
    const inner = searcher;
    const known = inner.cache.get(ref.sha256);
    if (known) return known;
    const { store } = inner;
    const bytes = store.pending.get(ref.path) ?? await store.source.fetch({ path: ref.path, max_bytes: bound });
    store.pending.delete(ref.path);
    let body;
    try {
      body = await provenBody(bytes, root, place, perPage);
    } catch (err) {
      if (holder === "parent") throw (await Promise.resolve().then(() => (init_deferred(), deferred_exports))).provenMismatch(ref.path, root, err.message);
      throw new RangeError(`${ref.path} does not match the page root its ${holder} holds (${err.message}); it was not used`);
    }
    const value = store.parse(ref, body);
    store.json.set(ref.sha256, Promise.resolve(value));
    inner.cache.set(ref.sha256, value);
    return value;
  }
  async function provenDoc(searcher, pages, number, fetch) {
    const inner = searcher;
    if (!pages.roots) return (await inner.pagedRef(pages, number, fetch))[0];
    const perPage = Number(pages.per_page), path = `${pages.folder}/${pages.prefix}${number}.json`, ref = { path, sha256: path };
    if (!fetch && !inner.cache.has(path)) return { path, max_bytes: Number(pages.max_bytes) };
    await provenFile(searcher, ref, Number(pages.max_bytes), String(pages.roots[Math.floor(number / perPage)]), number % perPage, perPage, "parent");
    return ref;
  }
  var encoder2, PROOF_KEY;
  var init_proven = __esm({
    "src/proven.ts"() {
      "use strict";
      encoder2 = new TextEncoder();
      PROOF_KEY = encoder2.encode(',"proof":"');
    }
  });

  // src/wordfilter.ts
  var wordfilter_exports = {};
  __export(wordfilter_exports, {
    INDEX_FORMAT: () => INDEX_FORMAT,
    INDEX_FORMATS: () => INDEX_FORMATS,
    PartFilter: () => PartFilter,
    WordFilter: () => WordFilter,
    partFilter: () => partFilter,
    provenDoc: () => provenDoc,
    provenFile: () => provenFile,
    stale: () => stale,
    wordRefs: () => wordRefs
  });
  function fmix(h) {
    h ^= h >>> 16;
    h = Math.imul(h, 2246822507);
    h ^= h >>> 13;
    h = Math.imul(h, 3266489909);
    return (h ^ h >>> 16) >>> 0;
  }
  function fnv(data, basis) {
    let h = basis;
    for (const byte of data) h = Math.imul(h ^ byte, 16777619);
    return fmix(h);
  }
  async function wordRefs(reader, part, words2, ngrams, late = false) {
    const [held, chars] = ["words", "chars"].map((name) => part.spaces.find((s) => s.name === name));
    const refs2 = [];
    for (const word of words2) {
      const absent = !part.held.mayHold(word);
      if (!late && !absent) refs2.push(await reader.shardRef(part, held, word, false));
      else if (late ? !absent && await reader.entry(part, held, word) === null : absent) {
        for (const gram of ngrams(word)) if (part.held.has("chars", gram)) refs2.push(await reader.shardRef(part, chars, gram, false));
      }
    }
    return refs2;
  }
  var INDEX_FORMAT, INDEX_FORMATS, stale, UTF8, WordFilter, PartFilter, partFilter;
  var init_wordfilter = __esm({
    "src/wordfilter.ts"() {
      "use strict";
      init_proven();
      INDEX_FORMAT = "toolcat-index-4";
      INDEX_FORMATS = ["toolcat-index-2", "toolcat-index-3", INDEX_FORMAT];
      stale = (meta, analyzer) => !INDEX_FORMATS.includes(meta.format) || meta.analyzer?.version !== analyzer;
      UTF8 = new TextEncoder();
      WordFilter = class {
        /** Throws TypeError on a filter whose fields do not add up (``WordFilter`` in Python raises ValueError). */
        constructor(spec) {
          if (spec?.kind !== "bloom-fnv1a32") throw new TypeError(`unknown word filter kind ${String(spec?.kind)}`);
          this.array = Uint8Array.from(atob(String(spec.data)), (c) => c.charCodeAt(0));
          this.bits = Number(spec.bits);
          this.hashes = Number(spec.hashes);
          if (!(this.bits > 0 && this.bits === 8 * this.array.length && this.hashes >= 1 && this.hashes <= 32)) {
            throw new TypeError(`word filter of ${this.bits} bits, ${this.hashes} hashes and ${this.array.length} bytes`);
          }
        }
        /** False when ``word`` is surely not among the filter's words; true when it may be. */
        mayHold(word) {
          const data = UTF8.encode(word);
          const h1 = fnv(data, 2166136261);
          const h2 = (fnv(data, 84696351) | 1) >>> 0;
          for (let i = 0; i < this.hashes; i++) {
            const bit = (h1 + i * h2) % this.bits;
            if (!(this.array[bit >> 3] & 1 << (bit & 7))) return false;
          }
          return true;
        }
      };
      PartFilter = class {
        constructor(spaces) {
          this.words = new WordFilter(spaces.find((s) => s.name === "words")?.filter);
          const chars = spaces.find((s) => s.name === "chars")?.filter;
          this.grams = chars === void 0 ? null : new WordFilter(chars);
        }
        /** The words filter's answer for ``word``. */
        mayHold(word) {
          return this.words.mayHold(word);
        }
        /** False when the index surely lacks ``term`` in space ``space`` (``words``, or ``chars`` with a filter). */
        has(space2, term) {
          if (space2 === "words") return this.words.mayHold(term);
          return space2 !== "chars" || this.grams === null || this.grams.mayHold(term);
        }
      };
      partFilter = (spaces) => new PartFilter(spaces);
    }
  });

  // src/difflib.ts
  function matchedCount(a, b) {
    const b2j = /* @__PURE__ */ new Map();
    b.forEach((ch, j) => {
      const list = b2j.get(ch);
      if (list) list.push(j);
      else b2j.set(ch, [j]);
    });
    if (b.length >= 200) {
      const ntest = Math.floor(b.length / 100) + 1;
      for (const [ch, list] of [...b2j]) if (list.length > ntest) b2j.delete(ch);
    }
    let total = 0;
    const queue = [[0, a.length, 0, b.length]];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop();
      let besti = alo;
      let bestj = blo;
      let size = 0;
      let j2len = /* @__PURE__ */ new Map();
      for (let i = alo; i < ahi; i++) {
        const next = /* @__PURE__ */ new Map();
        for (const j of b2j.get(a[i]) ?? []) {
          if (j < blo) continue;
          if (j >= bhi) break;
          const k = (j2len.get(j - 1) ?? 0) + 1;
          next.set(j, k);
          if (k > size) {
            besti = i - k + 1;
            bestj = j - k + 1;
            size = k;
          }
        }
        j2len = next;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
        besti--;
        bestj--;
        size++;
      }
      while (besti + size < ahi && bestj + size < bhi && a[besti + size] === b[bestj + size]) size++;
      if (size) {
        total += size;
        if (alo < besti && blo < bestj) queue.push([alo, besti, blo, bestj]);
        if (besti + size < ahi && bestj + size < bhi) queue.push([besti + size, ahi, bestj + size, bhi]);
      }
    }
    return total;
  }
  function ratio(a, b) {
    const x = Array.from(a);
    const y = Array.from(b);
    const length = x.length + y.length;
    return length ? 2 * matchedCount(x, y) / length : 1;
  }
  function closeMatches(word, possibilities, n = 3, cutoff = 0.6) {
    const scored = [];
    for (const x of possibilities) {
      const score = ratio(x, word);
      if (score >= cutoff) scored.push([score, x]);
    }
    scored.sort((p, q) => q[0] - p[0] || cmp(q[1], p[1]));
    return scored.slice(0, n).map((p) => p[1]);
  }
  var init_difflib = __esm({
    "src/difflib.ts"() {
      "use strict";
      init_py();
    }
  });

  // src/namespaces.ts
  async function isNode(store, path) {
    try {
      await store.node(nodePath(path));
      return true;
    } catch (err) {
      if (err instanceof ReaderError) return false;
      throw err;
    }
  }
  async function isGroup(store, path) {
    const namespace = path.split(".", 1)[0];
    if (!(store.manifest.namespaces ?? []).map(String).includes(namespace)) return false;
    if (path === namespace) return true;
    try {
      const [groups] = await namespaceTree(store, namespace);
      return groups.has(path);
    } catch (err) {
      if (err instanceof ReaderError) return false;
      throw err;
    }
  }
  async function aliasOf(store, toolId) {
    let spec;
    try {
      [, spec] = await store.spec(toolId);
    } catch (err) {
      if (err instanceof ReaderError) return toolId.replaceAll(".", "_");
      throw err;
    }
    const aliases = isObject(spec.aliases) ? spec.aliases : {};
    return String(aliases.anthropic || aliases.openai || toolId.replaceAll(".", "_"));
  }
  async function namespacePointers(store, namespace) {
    let refs2 = null;
    if (store.pointers === null && isObject(store.manifest.namespace_index)) refs2 = (await store.fetchJson(store.manifest.namespace_index)).namespaces;
    if (!isObject(refs2)) {
      const all = await allPointers(store);
      return new Map([...all].filter(([k]) => k.split(".", 1)[0] === namespace));
    }
    const ref = Object.hasOwn(refs2, namespace) ? refs2[namespace] : null;
    if (!isObject(ref)) return /* @__PURE__ */ new Map();
    const tools = await store.nodeTools(await store.fetchJson(ref));
    return new Map(tools.sort((a, b) => cmp(a.tool_id, b.tool_id)).map((p) => [p.tool_id, p]));
  }
  async function namespaceTree(store, namespace) {
    const ops = namespace !== void 0 ? await namespacePointers(store, namespace) : await allPointers(store);
    const groups = /* @__PURE__ */ new Map();
    for (const toolId of ops.keys()) {
      const parts = toolId.split(".");
      for (let depth = 1; depth < parts.length; depth++) {
        const group = parts.slice(0, depth).join(".");
        let entry = groups.get(group);
        if (!entry) groups.set(group, entry = { groups: /* @__PURE__ */ new Set(), ops: [], count: 0 });
        entry.count += 1;
        if (depth === parts.length - 1) entry.ops.push(toolId);
        else entry.groups.add(parts.slice(0, depth + 1).join("."));
      }
    }
    return [groups, ops];
  }
  async function prefetchSubtree(store, path) {
    if (!store.source.concurrent) return;
    let level = [await store.node(path)];
    const seen = /* @__PURE__ */ new Set();
    for (let depth = 0; depth < MAX_NODE_DEPTH && level.length; depth++) {
      const children = level.flatMap((shard) => (shard.children ?? []).filter((c) => isObject(c) && isObject(c.ref) && !seen.has(String(c.ref.sha256))).map((c) => c.ref));
      children.forEach((ref) => seen.add(String(ref.sha256)));
      await store.prefetch([...children, ...level.flatMap((shard) => shard.pages ?? [])]);
      const next = [];
      for (const ref of children) {
        const shard = await store.fetchJson(ref);
        if (isObject(shard)) next.push(shard);
      }
      level = next;
    }
  }
  async function walk(store, path) {
    await prefetchSubtree(store, path);
    const out = [];
    const stack = [path];
    while (stack.length) {
      const current = stack.pop();
      const shard = await store.node(current);
      if (out.length + 1 > MAX_WALK_NODES || current.length > MAX_NODE_DEPTH) throw treeTooBig(path, MAX_NODE_DEPTH, MAX_WALK_NODES);
      out.push([current, shard]);
      const children = (shard.children ?? []).filter(isObject);
      for (const c of [...children].reverse()) {
        if (typeof c.name !== "string") continue;
        const child = [...current, c.name];
        if (JSON.stringify(child) === JSON.stringify(c.path ?? [])) stack.push(child);
      }
    }
    return out;
  }
  async function subtreePointers(store, path) {
    const out = /* @__PURE__ */ new Map();
    for (const [, shard] of await walk(store, path)) {
      for (const pointer of await store.nodeTools(shard)) if (!out.has(pointer.tool_id)) out.set(pointer.tool_id, pointer);
    }
    return out;
  }
  async function allPointers(store) {
    if (store.pointers === null) {
      const pointers = await subtreePointers(store, []);
      store.pointers = new Map([...pointers].sort((a, b) => cmp(a[0], b[0])));
    }
    return store.pointers;
  }
  var MAX_NODE_DEPTH, MAX_WALK_NODES;
  var init_namespaces = __esm({
    "src/namespaces.ts"() {
      "use strict";
      init_errors();
      init_failures();
      init_py();
      init_store();
      MAX_NODE_DEPTH = 64;
      MAX_WALK_NODES = 1e6;
    }
  });

  // src/quote.ts
  function pyQuote(text) {
    return shown(text, 1 << 30);
  }
  var init_quote = __esm({
    "src/quote.ts"() {
      "use strict";
      init_py();
    }
  });

  // src/fusionDefault.ts
  var LEXICAL_LEARNED;
  var init_fusionDefault = __esm({
    "src/fusionDefault.ts"() {
      "use strict";
      LEXICAL_LEARNED = false;
    }
  });

  // src/expand.ts
  var expand_exports = {};
  __export(expand_exports, {
    EXPANDED_TERM: () => EXPANDED_TERM,
    NAME_BOOST: () => NAME_BOOST,
    NAME_DEPTH: () => NAME_DEPTH,
    NAME_MIN: () => NAME_MIN,
    fuse: () => fuse,
    nameBoosted: () => nameBoosted,
    nameMatch: () => nameMatch,
    ranked: () => ranked,
    refs: () => refs,
    scores: () => scores,
    settings: () => settings,
    space: () => space,
    terms: () => terms
  });
  async function settings(meta) {
    const weight = Number(meta.weight), floor = Number(meta.floor), candidates = Math.trunc(Number(meta.candidates)), denominator = Number(meta.denominator);
    if (![weight, floor, candidates, denominator].every(Number.isFinite) || !(weight >= 0 && weight <= 1 && candidates >= 0 && denominator > 0)) {
      throw (await Promise.resolve().then(() => (init_deferred(), deferred_exports))).badExpand(meta);
    }
    return [weight, floor, candidates, denominator];
  }
  function space(part) {
    const meta = part.meta.expand;
    if (!part.firsts.has("expand")) part.firsts.set("expand", meta.firsts || meta.shards.map((s) => s.first));
    return { ...meta, name: "expand" };
  }
  function scores(terms2, denominator) {
    const total = /* @__PURE__ */ new Map();
    for (const [, q, posting] of terms2) {
      for (let i = 0; i < posting.ids.length; i++) {
        const doc = posting.ids[i];
        total.set(doc, (total.get(doc) ?? 0) + q * (posting.weights[i] / denominator));
      }
    }
    return total;
  }
  function fuse(lexical, expanded, limit, [weight, floor, candidates], allowed) {
    const top = [...expanded].filter(([doc, e]) => e >= floor && (allowed === null || allowed(doc)));
    top.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const lex = new Map(lexical.map(([doc, score, terms2]) => [doc, [score, terms2]]));
    const docs = /* @__PURE__ */ new Set([...lex.keys(), ...top.slice(0, candidates).map(([doc]) => doc)]);
    const fused = [];
    for (const doc of docs) {
      const [score, terms2] = lex.get(doc) ?? [0, []];
      const e = expanded.get(doc) ?? 0;
      const meaning = e >= floor ? weight * e : 0;
      const words2 = (1 - weight) * score;
      fused.push([doc, Math.min(1, words2 + meaning), meaning > words2 ? [...terms2, EXPANDED_TERM] : [...terms2]]);
    }
    fused.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return fused.slice(0, limit);
  }
  function nameMatch(queryTerms, toolId, analyze) {
    let best = 0;
    for (const name of /* @__PURE__ */ new Set([toolId, toolId.slice(toolId.lastIndexOf(".") + 1)])) {
      const terms2 = new Set(analyze(name));
      if (terms2.size && queryTerms.size) {
        let shared = 0;
        for (const t of terms2) if (queryTerms.has(t)) shared += 1;
        best = Math.max(best, shared / terms2.size * shared / queryTerms.size);
      }
    }
    return best;
  }
  function nameBoosted(hits, ids, queryTerms, analyze) {
    const head = hits.slice(0, ids.length).map(([doc, score, terms2], i) => {
      const match = nameMatch(queryTerms, ids[i], analyze);
      return match >= NAME_MIN ? [doc, Math.min(1, score + NAME_BOOST * match), terms2] : [doc, score, terms2];
    });
    head.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return [...head, ...hits.slice(head.length)];
  }
  async function refs(searcher, part, words2) {
    const expand = space(part);
    const out = [];
    for (const word of words2) out.push(await searcher.shardRef(part, expand, word, false));
    return out;
  }
  async function terms(searcher, part, query, weigh) {
    const expand = space(part);
    const tokens = searcher.words(query);
    const found = /* @__PURE__ */ new Map();
    for (const term of new Set(tokens)) {
      const key = `tools\0expand\0${term}`;
      if (!searcher.postings.has(key)) {
        const entry = await searcher.entry(part, expand, term);
        searcher.postings.set(key, entry === null ? null : searcher.decode("expand", entry));
      }
      const posting = searcher.postings.get(key);
      if (posting) found.set(term, posting);
    }
    return [...weigh(tokens, new Map([...found].map(([t, p]) => [t, p.idf])))].map(([t, q]) => [t, q, found.get(t)]);
  }
  async function ranked(searcher, part, query, allowed, limit, weigh) {
    const config = await settings(part.meta.expand);
    const lexical = await searcher.topK("tools", query, Math.max(limit, config[2]), allowed);
    const hits = fuse(lexical, scores(await terms(searcher, part, query, weigh), config[3]), Math.max(limit, NAME_DEPTH), config, allowed);
    const queryTerms = new Set(searcher.words(query));
    if (!queryTerms.size) return hits.slice(0, limit);
    const head = hits.slice(0, NAME_DEPTH);
    const ids = (await searcher.docs("tools", head)).map((doc) => String(doc.pointer.tool_id));
    return nameBoosted(hits, ids, queryTerms, (text) => searcher.words(text)).slice(0, limit);
  }
  var EXPANDED_TERM, NAME_BOOST, NAME_MIN, NAME_DEPTH;
  var init_expand = __esm({
    "src/expand.ts"() {
      "use strict";
      EXPANDED_TERM = "~related words (learned expansion)";
      NAME_BOOST = 0.1;
      NAME_MIN = 0.7;
      NAME_DEPTH = 10;
    }
  });

  // src/search.ts
  function queryWeights(tokens, idf) {
    const counts = /* @__PURE__ */ new Map();
    for (const t of tokens) if (idf.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
    const raw = /* @__PURE__ */ new Map();
    for (const [term, count] of counts) raw.set(term, (1 + Math.log(count)) * idf.get(term));
    let sum = 0;
    for (const v of raw.values()) sum += v * v;
    const norm = Math.sqrt(sum);
    const out = /* @__PURE__ */ new Map();
    if (norm > 0) for (const [term, v] of raw) out.set(term, v / norm);
    return out;
  }
  function pageRefs(page) {
    return page.files.map(([digest, size], i) => ({ path: `${page.folder}/${page.prefix}${Number(page.first) + i}.json`, sha256: digest, bytes: size }));
  }
  function nameKey(text) {
    return (text.toLowerCase().match(NAME_PARTS) ?? []).join(" ");
  }
  function nameLike(query, stopWords) {
    const parts = nameKey(query).split(" ").filter(Boolean);
    if (!parts.length || Array.from(query).length > NAME_MAX_CHARS) return false;
    if (!/\s/u.test(query)) return true;
    return parts.length <= NAME_SHORT_PARTS || parts.length <= NAME_MAX_PARTS && !parts.some((p) => stopWords.has(p));
  }
  async function noted(answer, asked) {
    const note = typeof asked === "string" && asked.length > MAX_QUERY_CHARS ? (await failures()).queryNote(asked) : null;
    if (note) answer.hints = [note, ...answer.hints ?? []];
    return answer;
  }
  function reason(pointer, all) {
    const terms2 = all.filter((t) => t[0] !== "~");
    const note = all.filter((t) => t[0] === "~").map((t) => t.slice(1));
    if (!terms2.length) return note[0] ?? "similar spelling (character n-grams)";
    const fields = [
      ["id", new Set(analyzeWords(pointer.tool_id))],
      ["summary", new Set(analyzeWords(pointer.summary))],
      ["tags", new Set(analyzeWords(pointer.tags.join(" ")))]
    ];
    const parts = terms2.map((term) => {
      const where = fields.filter(([, words2]) => words2.has(term)).map(([name]) => name);
      return `${term} (${(where.length ? where : ["text"]).join(", ")})`;
    });
    return ["matched " + parts.join("; "), ...note].join("; ");
  }
  function scope(entry, directOnly) {
    let [low, high] = entry.range;
    let extraIds;
    if (directOnly) {
      high = low + entry.direct;
      extraIds = new Set(entry.extra_direct);
    } else extraIds = new Set(entry.extra);
    return (docId) => low <= docId && docId < high || extraIds.has(docId);
  }
  function kthHitScore(total, wordDocs, k) {
    const scores2 = [];
    for (const [d, s] of total) if (wordDocs.has(d) || s >= MIN_CHAR_ONLY_SCORE) scores2.push(s);
    if (scores2.length < k) return -1;
    return scores2.sort((a, b) => b - a)[k - 1];
  }
  var MIN_CHAR_ONLY_SCORE, BOUND_SLACK, MIN_RELEVANCE, MIN_RELATIVE, HINT_BOOST, HINT_DEPTH, NAME_SHORT_PARTS, NAME_MAX_PARTS, NAME_MAX_CHARS, NAME_PARTS, LABELLED, failures, wordFilter, expansion, semantic, Posting, Part, Searcher;
  var init_search = __esm({
    "src/search.ts"() {
      "use strict";
      init_analyzer();
      init_errors();
      init_fusionDefault();
      init_py();
      init_sha256();
      init_store();
      MIN_CHAR_ONLY_SCORE = 0.1;
      BOUND_SLACK = 1e-9;
      MIN_RELEVANCE = 0.06;
      MIN_RELATIVE = 0.25;
      HINT_BOOST = 0.05;
      HINT_DEPTH = 20;
      NAME_SHORT_PARTS = 3;
      NAME_MAX_PARTS = 12;
      NAME_MAX_CHARS = 200;
      NAME_PARTS = /[\p{L}\p{N}]+/gu;
      LABELLED = /(?<![\p{L}\p{N}_])(server|category|namespace|service|app|tool|action|task|query)\s*[:=]/iu;
      failures = () => Promise.resolve().then(() => (init_deferred(), deferred_exports));
      wordFilter = () => Promise.resolve().then(() => (init_wordfilter(), wordfilter_exports));
      expansion = () => Promise.resolve().then(() => (init_expand(), expand_exports));
      semantic = () => import("./semantic.js");
      Posting = class {
        constructor(idf, ids, weights) {
          this.idf = idf;
          this.ids = ids;
          this.weights = weights;
          this.byDocMap = null;
          this.maxWeight = weights.length ? Math.max(...weights) : 0;
        }
        byDoc() {
          if (!this.byDocMap) this.byDocMap = new Map(this.ids.map((id, i) => [id, this.weights[i]]));
          return this.byDocMap;
        }
      };
      Part = class {
        constructor(meta) {
          this.meta = meta;
          this.masked = /* @__PURE__ */ new Set();
          this.deleted = /* @__PURE__ */ new Set();
          this.deltaSpaces = /* @__PURE__ */ new Map();
          this.deltaFirsts = /* @__PURE__ */ new Map();
          this.deltaDocFile = /* @__PURE__ */ new Map();
          this.nDocs = meta.n_docs;
          this.spaces = meta.spaces;
          if (!Array.isArray(this.spaces)) throw new TypeError("spaces");
          this.firsts = new Map(this.spaces.map((s) => [s.name, s.firsts || s.shards.map((shard) => shard.first)]));
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
              this.deltaFirsts.set(s.name, s.shards.map((sh) => sh.first));
            }
            for (const f of this.delta.docs) for (const i of f.ids) this.deltaDocFile.set(Number(i), f.ref);
          }
        }
        deltaShardRef(space2, term) {
          const s = this.deltaSpaces.get(space2);
          if (!s) return null;
          const index = bisectRight(this.deltaFirsts.get(space2), term, cmp) - 1;
          if (index < 0 || cmp(term, s.shards[index].last) > 0) return null;
          return s.shards[index].ref;
        }
      };
      Searcher = class {
        constructor(store, modelOptions = null) {
          this.store = store;
          this.modelOptions = modelOptions;
          this.cache = /* @__PURE__ */ new Map();
          this.postings = /* @__PURE__ */ new Map();
          this.interned = /* @__PURE__ */ new Map();
          this.meta = null;
          this.parts = /* @__PURE__ */ new Map();
          this.pendingPages = [];
          /** find_tool's weak bar on the scale of what ranks tools (``Searcher.weak_bar``): 0.35, or a learned fusion's own (semantic.ts sets it). */
          this.weakBar = 0.35;
          this.manifest = store.manifest;
          this.concurrent = store.source.concurrent;
        }
        /** The tier that answers (``Catalog.stats``): the semantic tier or the learned expansion once read, else why the reader answers lexically. */
        get searchTier() {
          const expand = this.parts.get("tools")?.meta.expand;
          return this.tierNow ? this.tierNow.tier() : expand ? `expanded (${expand.model?.name ?? "terms"})` : "vectors" in this.manifest ? "lexical: the build has vectors, but the reader was given no embedding model (js/README.md)" : "lexical: the build has no vectors";
        }
        /** The semantic tier when the build has vectors and the host gave a model (semantic.ts; its ``reason`` says why it cannot answer). */
        async semanticTier() {
          this.tierLoad ?? (this.tierLoad = this.modelOptions && isObject(this.manifest.vectors) ? semantic().then((m) => m.SemanticTier.open(this, this.modelOptions, this.store.source.baseUrl, sha256)) : null);
          return this.tierNow = await this.tierLoad;
        }
        // -- fetching -------------------------------------------------------------------------------
        /** The JSON file a ref points to, through the store (verified), kept for this searcher. */
        async fetch(ref) {
          const digest = ref.sha256;
          if (!this.cache.has(digest)) {
            this.cache.set(digest, await this.store.fetchJson(ref));
          }
          return this.cache.get(digest);
        }
        async part(name) {
          const known = this.parts.get(name);
          if (known) return known;
          if (this.meta === null) {
            const ref = this.manifest.index;
            if (!isObject(ref)) throw (await failures()).noIndex();
            const meta = await this.fetch(ref);
            if ((await wordFilter()).stale(meta, ANALYZER_VERSION)) throw (await failures()).staleIndex(meta);
            this.meta = meta;
            this.thesaurus = meta.analyzer?.thesaurus?.table ?? void 0;
          }
          let part;
          try {
            part = new Part(this.meta[name]);
            part.held = (await wordFilter()).partFilter(part.spaces);
          } catch (err) {
            throw (await failures()).badPart(name, err.message);
          }
          this.parts.set(name, part);
          return part;
        }
        words(text) {
          return analyzeWords(text, this.thesaurus);
        }
        async shardRef(part, space2, term, fetchPage = true) {
          const index = bisectRight(part.firsts.get(space2.name), term, cmp) - 1;
          if (index < 0) return null;
          const pages = space2.term_pages;
          if (!pages) {
            if (cmp(term, space2.shards[index].last) > 0) return null;
            return space2.shards[index].ref;
          }
          const [ref, page] = await this.pagedRef(pages, index, fetchPage);
          if (page !== null && cmp(term, page.last[index - Number(page.first)]) > 0) return null;
          return ref;
        }
        async pagedRef(pages, number, fetchPage) {
          const pageRef = pages.pages[Math.floor(number / Number(pages.per_page))];
          if (!fetchPage && !this.cache.has(pageRef.sha256)) {
            this.pendingPages.push(pageRef);
            return [{ path: `${pages.folder}/${pages.prefix}${number}.json`, max_bytes: Number(pages.max_bytes) }, null];
          }
          const page = await this.fetch(pageRef);
          return [pageRefs(page)[number - Number(page.first)], page];
        }
        async entry(part, space2, term) {
          if (!part.held.has(space2.name, term)) return null;
          const ref = await this.shardRef(part, space2, term);
          if (ref === null) return null;
          const terms2 = (await this.fetch(ref)).terms;
          return Object.hasOwn(terms2, term) ? terms2[term] : null;
        }
        async prefetch(refs2) {
          if (!this.concurrent) return;
          const missing = refs2.filter((r) => isObject(r) && !this.cache.has(r.sha256));
          if (missing.length > 1) await this.store.prefetch(missing);
        }
        async prefetchQuery(partName, query, extra = []) {
          if (!this.concurrent) return;
          const tier = await this.semanticTier();
          if (tier?.reason === null) extra = [...extra, ...await tier.refs(partName, query)];
          const part = await this.part(partName);
          const words2 = unique(this.words(query));
          const { wordRefs: wordRefs2 } = await wordFilter();
          this.pendingPages = [];
          const refs2 = [...extra, ...await wordRefs2(this, part, words2, wordNgrams)];
          if (part.meta.expand) refs2.push(...await (await expansion()).refs(this, part, words2));
          if (part.delta !== null) {
            for (const word of words2) refs2.push(part.deltaShardRef("words", word), ...wordNgrams(word).map((gram) => part.deltaShardRef("chars", gram)));
          }
          await this.prefetch([...this.pendingPages, ...refs2]);
          this.pendingPages = [];
          const more = await wordRefs2(this, part, words2, wordNgrams, true);
          await this.prefetch([...this.pendingPages, ...more]);
        }
        async docs(partName, hits) {
          const part = await this.part(partName);
          this.pendingPages = [];
          const refs2 = [];
          for (const [docId] of hits) refs2.push(await this.docRef(part, docId, false));
          await this.prefetch([...this.pendingPages, ...refs2]);
          const out = [];
          for (const [docId] of hits) out.push(await this.doc(part, docId));
          return out;
        }
        async pointed(hits, digits) {
          const docs = await this.docs("tools", hits);
          return hits.map(([, score, terms2], i) => [docs[i].pointer, digits === void 0 ? score : pyRound(score, digits), terms2]);
        }
        decode(spaceName, entry) {
          const ids = [];
          let last = 0;
          for (const gap of entry.docs) ids.push(last += gap);
          const posting = new Posting(Number(entry.idf), ids, entry.w);
          const key = `${spaceName}|${posting.idf}|${entry.docs.join(",")}|${entry.w.join(",")}`;
          const known = this.interned.get(key);
          if (known) return known;
          this.interned.set(key, posting);
          return posting;
        }
        async posting(partName, part, space2, term) {
          const key = `${partName}\0${space2.name}\0${term}`;
          if (!this.postings.has(key)) {
            const entry = await this.entry(part, space2, term);
            const posting = entry === null ? null : this.decode(space2.name, entry);
            this.postings.set(key, await this.withDelta(part, space2.name, term, posting));
          }
          return this.postings.get(key);
        }
        async withDelta(part, spaceName, term, posting) {
          if (part.delta === null) return posting;
          const ref = part.deltaShardRef(spaceName, term);
          let entry = null;
          if (ref !== null) {
            const terms2 = (await this.fetch(ref)).terms;
            entry = Object.hasOwn(terms2, term) ? terms2[term] : null;
          }
          const pairs = posting === null ? [] : posting.ids.map((id, i) => [id, posting.weights[i]]);
          let kept = part.masked.size ? pairs.filter(([i]) => !part.masked.has(i)) : pairs;
          if (entry === null && kept.length === pairs.length) return posting;
          const idf = posting !== null ? posting.idf : entry !== null ? Number(entry.idf) : 0;
          if (entry !== null) {
            const added = this.decode(spaceName, entry);
            kept = [...kept, ...added.ids.map((id, i) => [id, added.weights[i]])].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
          }
          if (!kept.length) return null;
          const merged = new Posting(idf, kept.map(([i]) => i), kept.map(([, w]) => w));
          const key = `merged|${spaceName}|${merged.idf}|${merged.ids.join(",")}|${merged.weights.join(",")}`;
          const known = this.interned.get(key);
          if (known) return known;
          this.interned.set(key, merged);
          return merged;
        }
        async bundledNgrams(partName, part, query) {
          const words2 = part.spaces.find((s) => s.name === "words");
          for (const word of unique(this.words(query))) {
            const entry = await this.entry(part, words2, word);
            if (entry === null) continue;
            const bundle = entry.chars ?? {};
            for (const gram of wordNgrams(word)) {
              const key = `${partName}\0chars\0${gram}`;
              if (this.postings.has(key)) continue;
              let sub = Object.hasOwn(bundle, gram) ? bundle[gram] : null;
              if (sub !== null && "same" in sub) sub = bundle[sub.same];
              const posting = sub === null || sub === void 0 ? null : this.decode("chars", sub);
              this.postings.set(key, await this.withDelta(part, "chars", gram, posting));
            }
          }
        }
        async spaceTerms(partName, part, space2, query) {
          if (space2.name === "chars") await this.bundledNgrams(partName, part, query);
          const found = /* @__PURE__ */ new Map();
          const tokens = space2.name === "chars" ? analyzeChars(query, this.thesaurus) : this.words(query);
          for (const term of unique(tokens)) {
            const posting = await this.posting(partName, part, space2, term);
            if (posting !== null) found.set(term, posting);
          }
          const weights = queryWeights(tokens, new Map([...found].map(([t, p]) => [t, p.idf])));
          return [...weights].map(([term, q]) => [term, q, found.get(term)]);
        }
        async docRef(part, docId, fetchPage = true) {
          const ref = part.deltaDocFile.get(docId);
          if (ref !== void 0) return ref;
          const shardNo = Math.floor(docId / part.docShardSize);
          if (part.docPages === null) return part.docShards[shardNo].ref;
          return (await wordFilter()).provenDoc(this, part.docPages, shardNo, fetchPage);
        }
        async doc(part, docId) {
          const shard = await this.fetch(await this.docRef(part, docId));
          const position = part.deltaDocFile.has(docId) ? shard.ids.indexOf(docId) : docId - shard.first;
          return shard.docs[position];
        }
        // -- scoring --------------------------------------------------------------------------------
        /** Every matching document's score and matched word terms (exhaustive; the top-k below equals it). */
        async scores(partName, query) {
          const part = await this.part(partName);
          await this.prefetchQuery(partName, query);
          const total = /* @__PURE__ */ new Map();
          const matched = /* @__PURE__ */ new Map();
          for (const space2 of part.spaces) {
            const scale = Number(space2.weight);
            for (const [term, q, posting] of await this.spaceTerms(partName, part, space2, query)) {
              const factor = scale * q;
              posting.ids.forEach((id, i) => total.set(id, (total.get(id) ?? 0) + factor * posting.weights[i]));
              if (space2.name === "words") for (const id of posting.ids) matched.set(id, [...matched.get(id) ?? [], term]);
            }
          }
          return [total, matched];
        }
        async ranked(partName, query, allowed = null, limit = null) {
          if (limit !== null) {
            const tier = await this.semanticTier();
            if (tier?.reason === null) return tier.ranked(this, partName, query, allowed, limit);
            const part = await this.part(partName);
            if (part.meta.expand) return (await expansion()).ranked(this, part, query, allowed, limit, queryWeights);
            return LEXICAL_LEARNED && partName === "tools" ? (await semantic()).lexicalRanked(this, query, allowed, limit) : this.topK(partName, query, limit, allowed);
          }
          const [total, matched] = await this.scores(partName, query);
          const hits = [];
          for (const [id, score] of total) {
            if ((matched.has(id) || score >= MIN_CHAR_ONLY_SCORE) && (allowed === null || allowed(id))) hits.push([id, score, matched.get(id) ?? []]);
          }
          return hits.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
        }
        async topK(partName, query, k, allowed) {
          const part = await this.part(partName);
          await this.prefetchQuery(partName, query);
          const factors = /* @__PURE__ */ new Map();
          const wordTerms = [];
          for (const space2 of part.spaces) {
            const scale = Number(space2.weight);
            for (const [term, q, posting] of await this.spaceTerms(partName, part, space2, query)) {
              const [factor, first] = factors.get(posting) ?? [0, term];
              factors.set(posting, [factor + scale * q, first]);
              if (space2.name === "words") wordTerms.push([term, posting]);
            }
          }
          const terms2 = [...factors].map(([posting, [factor, term]]) => [factor * posting.maxWeight, factor, term, posting]);
          terms2.sort((a, b) => b[0] - a[0] || cmp(a[2], b[2]));
          let remaining = 0;
          for (const t of terms2) remaining += t[0];
          let done = 0;
          let total = /* @__PURE__ */ new Map();
          const wordDocs = /* @__PURE__ */ new Set();
          const words2 = new Set(wordTerms.map(([, p]) => p));
          let position = 0;
          let kth = -1;
          while (position < terms2.length) {
            const [bound, factor, , posting] = terms2[position];
            position += 1;
            remaining -= bound;
            done += bound;
            const isWord = words2.has(posting);
            for (let i = 0; i < posting.ids.length; i++) {
              const id = posting.ids[i];
              if (allowed !== null && !allowed(id)) continue;
              total.set(id, (total.get(id) ?? 0) + factor * posting.weights[i]);
              if (isWord) wordDocs.add(id);
            }
            if (done > remaining) {
              kth = kthHitScore(total, wordDocs, k);
              if (kth > remaining + BOUND_SLACK) break;
            }
          }
          if (position < terms2.length) {
            total = new Map([...total].filter(([, s]) => s + remaining + BOUND_SLACK >= kth));
            for (const [, factor, , posting] of terms2.slice(position)) {
              const byDoc = posting.byDoc();
              const isWord = words2.has(posting);
              for (const [id, score] of total) {
                const weight = byDoc.get(id);
                if (weight !== void 0) {
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
        async nodeShardRef(path) {
          const part = await this.part("nodes");
          const index = bisectRight(part.docShards.map((s) => s.first_path), path, cmpPath) - 1;
          return index < 0 ? null : part.docShards[index].ref;
        }
        async nodeEntry(path) {
          const part = await this.part("nodes");
          const key = JSON.stringify(path);
          for (const ref2 of new Set(part.deltaDocFile.values())) {
            for (const doc of (await this.fetch(ref2)).docs) if (JSON.stringify(doc.path) === key) return doc;
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
        async scoped(query, path, directOnly = false, extra = []) {
          const deltaDocs = [...(await this.part("nodes")).deltaDocFile.values()];
          await this.prefetchQuery("tools", query, [await this.nodeShardRef(path), ...deltaDocs, ...extra]);
          const entry = await this.nodeEntry(path);
          if (entry === null) throw await (await failures()).unknownCategory(this, path, query);
          return scope(entry, directOnly);
        }
        // -- operations -----------------------------------------------------------------------------
        /** ``[pointer, confidence, matched terms]`` best first, optionally inside a node (and below it). */
        async rankTools(query, options = {}) {
          let allowed = null;
          if (options.within !== void 0 && (options.within.length || options.directOnly)) allowed = await this.scoped(query, options.within, options.directOnly);
          return this.pointed(await this.ranked("tools", query, allowed, options.limit ?? null), 6);
        }
        async rankToolsPage(query, within, offset, limit) {
          const allowed = within.length ? await this.scoped(query, within) : null;
          const hits = await this.ranked("tools", query, allowed);
          return [await this.pointed(hits.slice(offset, offset + limit), 6), hits.length];
        }
        async nameCandidates(query) {
          const lookup = this.manifest.lookup;
          if (!isObject(lookup) || !nameLike(query, STOP_WORDS)) return [];
          const refs2 = lookup.refs ?? [];
          const count = lookup.buckets ?? 0;
          if (!Array.isArray(refs2) || !Number.isInteger(count) || count < 1 || refs2.length !== count) return [];
          const parts = nameKey(query).split(" ").filter(Boolean);
          const typed = /\s/u.test(query) ? [] : [query, query.toLowerCase()];
          const out = [];
          for (const name of unique([...typed, parts.join("_"), parts.join("-")])) out.push([name, refs2[await lookupBucket(name, count)]]);
          return out;
        }
        async nameLookup(candidates) {
          for (const [name, ref] of candidates) {
            const entries = (await this.fetch(ref)).entries ?? {};
            const found = Object.hasOwn(entries, name) ? entries[name] : null;
            if (isObject(found) && typeof found.tool_id === "string") return found.tool_id;
          }
          return null;
        }
        /** A page of what findTool and searchToolByCategory show, whether more follow, and the exact name's id. */
        async answerTools(query, limit, offset = 0, allowed = null, scope2 = null, candidates = null, boost = null) {
          if (candidates === null) {
            candidates = await this.nameCandidates(query);
            await this.prefetchQuery("tools", query, candidates.map(([, ref]) => ref));
          }
          const named = await this.nameLookup(candidates);
          let hits = await this.ranked("tools", query, allowed, offset + limit + 2 + (boost ? HINT_DEPTH : 0));
          if (boost) {
            hits = hits.map(([d, s, t]) => [d, boost(d) ? Math.min(1, s + HINT_BOOST) : s, t]).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, offset + limit + 2);
          }
          const floor = hits.length ? Math.max(MIN_RELEVANCE, MIN_RELATIVE * hits[0][1]) : 0;
          const kept = hits.filter((h) => h[1] >= floor);
          if (named === null) {
            const page = await this.pointed(kept.slice(offset, offset + limit));
            const more = kept.length > offset + limit;
            const key = nameKey(query);
            const spelled = page.findIndex(([p]) => key === nameKey(p.tool_id) || key === nameKey(p.alias));
            if (offset > 0 || spelled < 0) return [page, more, null];
            const [first] = page.splice(spelled, 1);
            return [[[first[0], 1, first[2]], ...page], more, first[0].tool_id];
          }
          const pointed = await this.pointed(kept.slice(0, offset + limit + 1));
          const exact = pointed.find((h) => h[0].tool_id === named) ?? null;
          const pointer = exact !== null ? exact[0] : await (await failures()).specPointer(this, named, scope2);
          if (pointer === null) return [pointed.slice(offset, offset + limit), kept.length > offset + limit, null];
          const shown2 = [[pointer, 1, exact !== null ? exact[2] : []], ...pointed.filter((h) => h !== exact)];
          return [shown2.slice(offset, offset + limit), shown2.length > offset + limit, named];
        }
        async findTool(purpose, limit = 5) {
          let query;
          let matches;
          let page, named;
          try {
            query = await checkQuery(purpose, "purpose");
            const count = checkLimit(limit, 5);
            [page, , named] = LABELLED.test(query) ? await (await failures()).hintedTools(this, query, count) : await this.answerTools(query, count);
            matches = page.map(([pointer, score, terms2]) => ({
              name: pointer.tool_id,
              relevance: pyRound(Math.min(1, score), 4),
              reason: pointer.tool_id === named ? "exact name" : reason(pointer, terms2),
              ...pointer.summary && { summary: pointer.summary }
              // each hit's one line (issue 35)
            }));
          } catch (err) {
            if (err instanceof ReaderError) return err.envelope();
            throw err;
          }
          const weak2 = named === null && matches[0]?.relevance < this.weakBar && await (await failures()).weak(this, query, matches);
          return noted(weak2 || (matches.length ? { matches } : (await failures()).noTools(query)), purpose);
        }
        async nodeResults(query, limit) {
          const hits = await this.ranked("nodes", query, (docId) => docId > 0, limit);
          const docs = await this.docs("nodes", hits);
          return docs.map((doc, i) => ({ path: doc.path, title: doc.title, summary: doc.summary, confidence: pyRound(Math.min(1, hits[i][1]), 4) }));
        }
        async searchNodes(query, limit = 5) {
          let text;
          let results;
          try {
            text = await checkQuery(query, "query");
            results = await this.nodeResults(text, checkLimit(limit, 5));
          } catch (err) {
            if (err instanceof ReaderError) return err.envelope();
            throw err;
          }
          return noted(await (await failures()).nodesAnswer(this, text, results), query);
        }
        async searchToolByCategory(query, categoryPath, limit = 5, cursor = null) {
          try {
            const text = await checkQuery(query, "query");
            const count = checkLimit(limit, 5);
            const path = nodePath(categoryPath);
            const key = await (await failures()).cursorKey(text, path);
            const offset = await decodeCursor(cursor, key);
            const candidates = await this.nameCandidates(text);
            const refs2 = candidates.map(([, ref]) => ref);
            const allowed = path.length ? await this.scoped(text, path, false, refs2) : null;
            if (!path.length) await this.prefetchQuery("tools", text, refs2);
            const [page, more, named] = await this.answerTools(text, count, offset, allowed, path, candidates);
            return await noted(await (await failures()).categoryAnswer(this, text, path, page, more && key, offset, named), query);
          } catch (err) {
            if (err instanceof ReaderError) return err.envelope();
            throw err;
          }
        }
      };
    }
  });

  // src/failures.ts
  function notHttp(url) {
    return new ReaderError("BAD_REQUEST", `open() takes an http(s) base URL, got ${shown(url)}`, { hints: ["Serve the build folder over http(s), or pass a fetch that reads it."] });
  }
  function badParallel(value) {
    return new ReaderError("BAD_REQUEST", `max_parallel must be a positive integer, got ${shown(value, 40)}`);
  }
  function badPin(pin) {
    return new ReaderError("BAD_REQUEST", `pin must be 'sha256:' and 64 hex digits, got ${shown(pin, 100)}`, {
      hints: ["pin is the sha256 of the manifest file: the 'sha256' of the 'manifest' ref in catalog.json, e.g. pin='sha256:' + entry['manifest']['sha256']."]
    });
  }
  function badCursor(cursor, wellFormed) {
    if (!wellFormed) return bad(`cursor ${shown(cursor)} is not one this reader returned; omit it to start over`, { details: { cursor: shown(cursor, 40) } });
    return bad("this cursor belongs to another query or category", {
      details: { cursor: shown(cursor, 40) },
      hints: ["Pass back the next_cursor of the previous page with the same query and category."]
    });
  }
  function checkLongQuery(value, name) {
    if (typeof value !== "string" || !value.trim() || value.length > 1e6 && [...value].length > 1e6) {
      throw new ReaderError("BAD_REQUEST", `'${name}' must be a non-empty string, got ${shown(value, 60)}`, {
        details: { got: shown(value, 60) },
        hints: [`Say what you need in a few words: the action, the object and the domain, e.g. ${name}='upload a file to an S3 bucket'.`]
      });
    }
    const chars = [...value.trim()];
    if (chars.length <= MAX_QUERY_CHARS) return chars.join("");
    const cut = chars.slice(0, MAX_QUERY_CHARS);
    const space2 = cut.lastIndexOf(" ");
    return cut.slice(0, space2 >= MAX_QUERY_CHARS / 2 ? space2 : MAX_QUERY_CHARS).join("");
  }
  function queryNote(value) {
    const size = typeof value === "string" ? [...value.trim()].length : 0;
    return size > MAX_QUERY_CHARS ? `The query was cut to its first ${MAX_QUERY_CHARS.toLocaleString("en-US")} characters (of ${size.toLocaleString("en-US")}); put the action, the object and the domain first, in a few words.` : null;
  }
  function noTools(query) {
    return { matches: [], hints: [`No tool matches ${head200(query)} well; try other words, or browse the categories.`], next_action: browseRoot() };
  }
  function noNodes(query) {
    return { results: [], hints: [`No category matches ${head200(query)}; search tools by purpose instead, or browse the root.`], next_action: { op: "search", args: { query } } };
  }
  async function unknownWords(searcher, query) {
    const part = await searcher.part("tools");
    const space2 = part.spaces.find((s) => s.name === "words");
    const tokens = contentTokens(searcher, query);
    const missing = [];
    for (const token of tokens) {
      let known = false;
      for (const term of searcher.words(token)) if (await searcher.posting("tools", part, space2, term) !== null) known = true;
      if (!known) missing.push(token);
    }
    return [missing, Math.max(1, tokens.length)];
  }
  async function unknownShare(searcher, query) {
    const part = await searcher.part("tools");
    const space2 = part.spaces.find((s) => s.name === "words");
    const unseen = Math.log(1 + part.nDocs) + 1;
    let known = 0;
    let unknown = 0;
    for (const term of unique(contentTokens(searcher, query).flatMap((t) => searcher.words(t)))) {
      const posting = await searcher.posting("tools", part, space2, term);
      if (posting === null) unknown += unseen;
      else known += posting.idf;
    }
    return unknown ? unknown / (known + unknown) : 0;
  }
  async function weakWords(searcher, query, best, part = "tools") {
    const learned = part === "tools" ? searcher.weakRule : void 0;
    const [bar, rise, share] = learned ?? [part === "tools" ? searcher.weakBar : 0.35, 0, 0.58];
    if (!(best < bar + Math.max(rise, 0))) return null;
    const [missing, words2] = await unknownWords(searcher, query);
    return missing.length && best < bar + rise / words2 && await unknownShare(searcher, query) >= share ? missing : null;
  }
  function weakAnswer(query, hits, missing, key = "matches", browse = []) {
    return {
      [key]: hits,
      weak: true,
      hints: [`No good match for ${head200(query)}: no tool mentions ${missing.slice(0, 5).map(pyQuote).join(", ")}, so these match only part of it. Try other words for it, or browse the categories.`],
      next_action: { op: "list", args: { path: browse.join("/") } }
    };
  }
  async function weak(searcher, query, matches) {
    const missing = await weakWords(searcher, query, matches[0].relevance);
    return missing ? weakAnswer(query, matches, missing) : null;
  }
  async function nodesAnswer(searcher, query, results) {
    if (!results.length) return noNodes(query);
    const missing = await weakWords(searcher, query, results[0].confidence, "nodes");
    return missing ? weakAnswer(query, results, missing, "results") : { results };
  }
  async function categoryAnswer(searcher, query, path, page, key, offset, named) {
    if (!page.length && !offset) throw await noMatch(searcher, query, path);
    const results = page.map(([pointer, score]) => leanHit(pointer, score));
    const answer = { category_path: path, results, next_cursor: key === false ? null : encodeCursor(offset + page.length, key) };
    const missing = named || offset ? null : await weakWords(searcher, query, page[0][1]);
    if (!missing) return answer;
    if (missing.length === (await unknownWords(searcher, query))[1]) throw await noMatch(searcher, query, path, false);
    return { ...answer, ...weakAnswer(query, results, missing, "results", path) };
  }
  async function weakList(store, query, where, scores2) {
    const missing = await weakWords(store.searcherRequired(), query, Math.max(0, ...scores2.values()));
    if (!missing) return null;
    const hint = `No good match for ${head200(query)}: no tool mentions ${missing.slice(0, 5).map(pyQuote).join(", ")}, so these match only part of it. Try other words for it, or browse this category.`;
    return [hint, { op: "list", args: { path: where.join("/") } }];
  }
  async function specPointer(searcher, toolId, scope2) {
    const lookup = searcher.manifest.lookup;
    const entries = (await searcher.fetch(lookup.refs[await lookupBucket(toolId, lookup.buckets)])).entries ?? {};
    const found = Object.hasOwn(entries, toolId) ? entries[toolId] : null;
    if (!isObject(found)) return null;
    const spec = await searcher.fetch(found.spec);
    const homes = [spec.path ?? [], ...spec.categories ?? []];
    if (scope2 && scope2.length && !homes.some((home) => JSON.stringify(home.slice(0, scope2.length)) === JSON.stringify(scope2))) return null;
    return {
      tool_id: toolId,
      alias: (spec.aliases ?? {}).openai ?? toolId,
      type: spec.type ?? null,
      path: [...spec.path ?? []],
      summary: spec.summary ?? "",
      tags: [...spec.tags ?? []],
      kind: spec.kind ?? null,
      optional: spec.optional ?? false,
      deprecated: spec.deprecated ?? false,
      ...spec.capabilities?.length ? { capabilities: [...spec.capabilities] } : {},
      spec: found.spec
    };
  }
  function splitHint(query) {
    let hint = null;
    const found = HINT.exec(query);
    if (found === null && !LABEL.test(query)) return [query, null];
    if (found !== null) {
      const start = found.index + found[0].length - found[2].length;
      let end = found.index + found[0].length;
      const label = LABEL.exec(query.slice(start, end));
      if (label !== null) end = start + label.index;
      if (end - start > HINT_MAX_CHARS) {
        const space2 = query.lastIndexOf(" ", start + HINT_MAX_CHARS);
        end = space2 > start ? space2 : start + HINT_MAX_CHARS;
      }
      hint = query.slice(start, end).trim().replace(/,+$/, "").trim() || null;
      query = query.slice(0, found.index) + " " + query.slice(end);
    }
    const words2 = query.replace(new RegExp(LABEL.source, "giu"), " ").replace(/[/|;]/g, " ").split(/\s+/).filter(Boolean).join(" ");
    return [words2 || query.trim(), hint];
  }
  async function hintedTools(searcher, query, limit) {
    const [words2, hint] = splitHint(query);
    const path = hint && words2 ? await hintPath(searcher, hint) : null;
    const entry = path !== null ? await searcher.nodeEntry(path) : null;
    return searcher.answerTools(hint && words2 ? `${words2} ${hint}` : words2, limit, 0, null, null, null, entry !== null ? scope(entry, false) : null);
  }
  async function hintPath(searcher, hint) {
    const root = isObject(searcher.manifest.root) ? await searcher.fetch(searcher.manifest.root) : {};
    const key = (text) => nameKey(String(text)).replaceAll(" ", "_");
    const wanted = key(hint);
    for (const child of root.children ?? []) if (isObject(child) && key(child.name ?? "") === wanted) return [String(child.name)];
    const found = await searcher.nodeResults(hint, 5);
    const named = found.filter((r) => wanted === key(r.path.at(-1)) || wanted === key(r.title));
    if (named.length) return [...named[0]?.path];
    return found.length && found[0]?.confidence >= 0.3 ? [...found[0]?.path] : null;
  }
  function hashMismatch(where, path, digest, size, got, length) {
    return new ReaderError(
      "INTEGRITY",
      `${where} does not match the hash its parent holds (expected sha256 ${digest.slice(0, 16)}\u2026 and ${size} bytes, got ${got.slice(0, 16)}\u2026 and ${length} bytes); it was not used`,
      {
        details: { path, expected_sha256: digest, got_sha256: got, expected_bytes: size, got_bytes: length },
        hints: [
          "The file was modified or truncated after the build, or a cache/CDN serves a stale copy.",
          "Rebuild and redeploy the whole build folder; clear the reader cache if it persists."
        ]
      }
    );
  }
  function provenMismatch(path, root, why) {
    return new ReaderError("INTEGRITY", `${path} does not match the page root its parent holds (${why}); it was not used`, {
      details: { path, expected_root: root.slice(0, 64) },
      hints: ["The file was modified after the build, or a cache/CDN serves a stale copy; redeploy the build."]
    });
  }
  function tooLarge(url, limit, why) {
    return new ReaderError("INTEGRITY", `${url} is larger than expected (${limit} bytes: ${why}); it was not used`, {
      details: { url, limit_bytes: limit },
      hints: [
        "The host serves another file than the catalogue names, or a compressed body inflates past it (a gzip bomb); the reader stopped reading there."
      ]
    });
  }
  function notModified(url) {
    return new ReaderError("UNAVAILABLE", `${url} answered 304 Not Modified to a request without If-None-Match`, {
      details: { url, status: 304 },
      hints: ["The host or a cache in between answers 304 to unconditional requests; fix its configuration."]
    });
  }
  function malformedPendingRef(ref) {
    return new ReaderError("INTEGRITY", `malformed pending ref ${shown(ref, 200)}`, { details: { ref: shown(ref, 200) } });
  }
  function overCap(path, url, size, cap) {
    return new ReaderError("INTEGRITY", `the ref to ${path} promises ${size} bytes, above the reader's cap of ${cap} bytes (max_file_bytes); ${url} was not fetched`, {
      details: { path, url, promised_bytes: size, cap_bytes: cap },
      hints: [
        "A toolcat build keeps its files small; a huge promise means a malformed or hostile catalogue.",
        "If the catalogue is yours and the file is legitimately this large, open it with a larger max_file_bytes."
      ]
    });
  }
  function unreachable(url, attempts, last, timeout) {
    return new ReaderError("UNAVAILABLE", `could not fetch ${url} after ${attempts} attempt(s): ${last}`, {
      details: { url, attempts, last_error: last, timeout_s: timeout },
      hints: ["The server is down, slow or dropping connections; retry later or raise timeout/retries."]
    });
  }
  function redirectWithoutLocation(url, status) {
    return new ReaderError("UNAVAILABLE", `${url} answered a redirect (HTTP ${status}) the reader does not follow (without a Location)`, {
      details: { url, status, location: "" },
      hints: [REDIRECT_HINT]
    });
  }
  function redirect(url, target, reason2) {
    return new ReaderError("UNAVAILABLE", `${url} redirects to ${target.slice(0, 300)}, which the reader does not follow: ${reason2}`, {
      details: { url, location: target.slice(0, 300) },
      hints: [REDIRECT_HINT]
    });
  }
  function httpStatus(url, status) {
    return new ReaderError("UNAVAILABLE", `${url} answered HTTP ${status}` + (status === 404 ? " (not found)" : ""), {
      details: { url, status },
      hints: ["Check the base URL (it must be the folder holding catalog.json) and that the whole build folder was deployed."]
    });
  }
  function encoding(url, encoding2) {
    return new ReaderError("UNAVAILABLE", `${url} answered with Content-Encoding ${shown(encoding2.slice(0, 80))}, which the reader cannot decode`, {
      details: { url, content_encoding: encoding2.slice(0, 200) },
      hints: ["The reader asks for gzip or identity; configure the host to serve one of them."]
    });
  }
  function closeNames(word, names, n = 5) {
    const found = closeMatches(word, names, n, 0.5);
    const prefixed = names.filter((name) => name.startsWith(word) || word.startsWith(name + ".")).sort(cmp).slice(0, n);
    return unique([...found, ...prefixed]).slice(0, n);
  }
  function notAnEntry(message) {
    return new ReaderError("UNAVAILABLE", message, { hints: ["Point the reader at a toolcat build folder or its base URL."] });
  }
  function formatVersion(location2, found) {
    return new ReaderError("UNAVAILABLE", `${location2} has format_version ${shown(found)}; this reader reads ${SUPPORTED_FORMAT_VERSION}`, {
      details: { format_version: found ?? null, supported: SUPPORTED_FORMAT_VERSION },
      hints: ["Upgrade the toolcat reader or rebuild the catalogue with this version."]
    });
  }
  function versionNotPublished(requested, location2, available) {
    return new ReaderError("UNAVAILABLE", `registry_version ${pyQuote(requested)} is not published at ${location2}`, {
      details: { requested, available },
      hints: ["Pin one of the available versions, or open without version= to read the latest."]
    });
  }
  function pinMismatch(location2, pin, pinned, version, got) {
    return new ReaderError(
      "INTEGRITY",
      `${location2} does not publish the pinned manifest: expected sha256 ${pin}, got ${got ?? "None"}` + (pinned !== null ? ` (registry_version ${pinned})` : ""),
      {
        details: { expected_sha256: pin, got_sha256: got, registry_version: version },
        hints: [
          "The host serves another catalogue than the one pinned; nothing from it was used.",
          "Pin a new catalogue only after reviewing it: pin is the sha256 of its manifest file, the 'sha256' of the 'manifest' ref in catalog.json."
        ]
      }
    );
  }
  function notTheManifest(manifest, version) {
    if (!isObject(manifest) || manifest.artifact !== "manifest") return new ReaderError("INTEGRITY", "the manifest is not a toolcat manifest");
    return new ReaderError("INTEGRITY", `the manifest does not belong to registry_version ${version}`, { details: { manifest_version: manifest.registry_version ?? null } });
  }
  function treeTooBig(path, depth, nodes) {
    return new ReaderError("INTEGRITY", `the node tree under ${path.join("/") || "root"} is deeper than ${depth} levels or has more than ${nodes} nodes`, {
      hints: ["The host serves a node tree no toolcat build writes; pin the catalogue (pin='sha256:...') or report it to its publisher."]
    });
  }
  async function toolNotFound(store, name) {
    const suggestions = await suggestTools(store, name);
    return new ReaderError("TOOL_NOT_FOUND", `no tool named ${shown(name, 120)} (checked canonical ids, provider aliases and skill names)`, {
      details: { suggestions },
      hints: [suggestions.length ? `Did you mean ${suggestions.join(", ")}?` : "Search for the tool by purpose, or browse the groups."],
      next_action: suggestions.length ? { op: "describe", args: { tool_id: suggestions[0] } } : { op: "search", args: { query: name.replaceAll(".", " ").replaceAll("_", " ") } },
      help_path: "root"
    });
  }
  async function suggestTools(store, name) {
    let ids = [];
    const searcher = store.searcher();
    if (searcher !== null) {
      try {
        const hits = await searcher.rankTools(name.replaceAll(".", " ").replaceAll("_", " "), { limit: 5 });
        ids = hits.map((h) => String(h[0].tool_id));
      } catch {
      }
    }
    const counts = store.manifest.counts ?? {};
    if (Number(counts.tools ?? 0) + Number(counts.skills ?? 0) <= SUGGEST_WALK_LIMIT) {
      ids = unique([...closeNames(name, [...(await allPointers(store)).keys()].sort(cmp)), ...ids]);
    }
    return ids.slice(0, 5);
  }
  function noChild(path, walked, asked, children) {
    const where = walked.join("/") || "root";
    const names = children.sort(cmp);
    let close = closeNames(asked.toLowerCase(), names, 3);
    if (!close.length) close = closeNames(asked, names, 3);
    const suggestions = close.map((c) => [...walked, c].join("/"));
    return new ReaderError("UNKNOWN_PATH", `node ${pyQuote(path.join("/"))} does not exist: ${where} has no child ${pyQuote(asked)}`, {
      details: { path: [...path], parent: walked.join("/"), children: names, suggestions },
      hints: [`Children of ${where}: ${names.join(", ") || "none"}.`],
      next_action: unknownNodeNext(suggestions, walked, path.slice(walked.length))
    });
  }
  function searchNearby(err, query) {
    if (err.code === "UNKNOWN_PATH") err.next_action = { op: "search_in", args: { query, path: [...err.details.suggestions, err.details.parent][0] } };
    return err;
  }
  function unknownNodeNext(suggestions, walked, missing) {
    if (suggestions.length) return { op: "list", args: { path: suggestions[0] } };
    const words2 = missing.join(" ").replace(/[_.-]/g, " ").split(/\s+/).filter(Boolean).join(" ");
    const path = walked.join("/");
    if (!words2) return { op: "list", args: { path } };
    return walked.length ? { op: "search_in", args: { query: words2, path } } : { op: "search", args: { query: words2 } };
  }
  async function unknownCategory(searcher, path, query) {
    const root = isObject(searcher.manifest.root) ? await searcher.fetch(searcher.manifest.root) : { children: [] };
    const roots2 = (root.children ?? []).map((c) => c.name);
    const close = path.length ? closeMatches(path[0], roots2, 3, 0.3) : [];
    const hints = [`No category ${pyQuote(path.join("/"))}.`];
    if (close.length) hints.push("Closest root categories: " + close.join(", "));
    else if (roots2.length) hints.push("Root categories: " + roots2.slice(0, 10).join(", "));
    const suggestions = (await searcher.nodeResults(path.join(" "), 3)).map((r) => r.path);
    if (suggestions.length) hints.push("Closest node paths: " + suggestions.map((p) => p.join("/")).join(", "));
    return new ReaderError("UNKNOWN_PATH", `unknown category path ${pyQuote(path.join("/"))}`, {
      details: { category_path: path, closest_roots: close, closest_paths: suggestions },
      hints,
      next_action: { op: "search_nodes", args: { query: query || path.join(" ") } }
    });
  }
  function leanHit(pointer, score) {
    const out = {};
    for (const [key, value] of Object.entries(pointer)) {
      if (key === "alias" || isEmpty(value) || (key === "optional" || key === "deprecated") && value === false) continue;
      out[key] = value;
    }
    out.confidence = pyRound(Math.min(1, score), 4);
    return out;
  }
  function isEmpty(value) {
    return value === null || value === void 0 || value === "" || Array.isArray(value) && !value.length || isObject(value) && !Object.keys(value).length;
  }
  async function topTools(searcher, query, limit) {
    const hits = await searcher.ranked("tools", query, null, limit + 1);
    const floor = hits.length ? Math.max(MIN_RELEVANCE, MIN_RELATIVE * hits[0][1]) : 0;
    return searcher.pointed(hits.filter((h) => h[1] >= floor).slice(0, limit));
  }
  async function noMatch(searcher, query, path, anywhere = true) {
    const elsewhere = anywhere ? await topTools(searcher, query, 10) : [];
    const places = [];
    for (const [pointer] of elsewhere) if (!places.some((p) => JSON.stringify(p) === JSON.stringify(pointer.path))) places.push(pointer.path);
    const where = path.join("/");
    const hints = [`No tool under ${pyQuote(where || "the root")} matches ${pyQuote(query)}.`];
    let action;
    if (places.length) {
      hints.push("The query matches tools in: " + places.slice(0, 3).map((p) => p.join("/") || "(root)").join(", "));
      action = { op: "search_in", args: { query, path: places[0].join("/") } };
    } else {
      hints.push("No tool in the catalogue matches well; try other words, or browse the categories.");
      action = { op: "list", args: { path: where } };
    }
    return new ReaderError("NO_MATCH_IN_CATEGORY", `no tool under ${pyQuote(where || "(root)")} matches the query`, {
      details: { category_path: path, query, matching_categories: places.slice(0, 3) },
      hints,
      next_action: action
    });
  }
  function noIndex() {
    return new ReaderError("UNAVAILABLE", "this build has no search index", {
      hints: ["Rebuild the catalogue with a toolcat that writes the index (manifest key 'index')."],
      next_action: { op: "list", args: {} }
    });
  }
  function staleIndex(meta) {
    if (!INDEX_FORMATS.includes(meta.format)) {
      return new ReaderError("UNAVAILABLE", "the search index was written in another format than this reader reads: rebuild the catalogue", {
        details: { index: meta.format ?? null, reader: INDEX_FORMAT },
        hints: ["Rebuild the catalogue with this toolcat (`toolcat build SRC OUT`), then search again."]
      });
    }
    return new ReaderError("UNAVAILABLE", "the search index was built with another analyzer version", {
      details: { index: meta.analyzer?.version ?? null, reader: ANALYZER_VERSION },
      hints: ["Use a reader that matches the toolcat version that built the catalogue."]
    });
  }
  function badExpand(meta) {
    const why = `ValueError('expand settings out of range: ${meta.weight}, ${meta.candidates}, ${meta.denominator}')`;
    return new ReaderError("INTEGRITY", `the search index meta's tools.expand entry is not what a build writes (${why})`, {
      hints: ["The host serves files a toolcat build did not write; rebuild and republish the catalogue."]
    });
  }
  function badPart(name, why) {
    return new ReaderError("INTEGRITY", `the search index meta's '${name}' part is not what a build writes (${why})`, {
      details: { part: name },
      hints: ["The host serves files a toolcat build did not write; rebuild and republish the catalogue."]
    });
  }
  async function cursorKey(...parts) {
    return (await sha256(new TextEncoder().encode(pyTupleRepr(parts)))).slice(0, 8);
  }
  function pyTupleRepr(parts) {
    const one = (v) => Array.isArray(v) ? "[" + v.map(one).join(", ") + "]" : shown(v, 1 << 30);
    return "(" + parts.map(one).join(", ") + (parts.length === 1 ? ",)" : ")");
  }
  var head200, browseRoot, contentTokens, HINT, HINT_MAX_CHARS, LABEL, REDIRECT_HINT;
  var init_failures = __esm({
    "src/failures.ts"() {
      "use strict";
      init_analyzer();
      init_wordfilter();
      init_difflib();
      init_namespaces();
      init_errors();
      init_py();
      init_quote();
      init_search();
      init_sha256();
      init_source();
      init_store();
      head200 = (text) => pyQuote([...text].slice(0, 200).join(""));
      browseRoot = () => ({ op: "list", args: { path: "" } });
      contentTokens = (searcher, query) => unique(Array.from(query).slice(0, 1e3).join("").match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => searcher.words(t).length);
      HINT = /(?<![\p{L}\p{N}_])(server|category|namespace|service|app)\s*[:=]\s*([^/;|\n]*)/iu;
      HINT_MAX_CHARS = 80;
      LABEL = /(?<![\p{L}\p{N}_])(tool|action|task|query)\s*[:=]/iu;
      REDIRECT_HINT = `The reader follows redirects only within the base URL's scheme, host and port, at most ${MAX_REDIRECTS} hops; open the final URL directly.`;
    }
  });

  // src/protocol.ts
  function pathText(path) {
    if (Array.isArray(path)) return path.map(String).join("/");
    if (typeof path !== "string" || ["root", "/", "."].includes(path.trim())) return "";
    return path.trim();
  }
  function abstract(action) {
    if (!isObject(action) || typeof action.op !== "string") return null;
    const op = action.op;
    const args = isObject(action.args) ? action.args : {};
    if (OPS.includes(op)) return [op, { ...args }];
    if (op === "tool_help") return typeof args.query === "string" ? ["search", { query: args.query }] : ["help", { path: args.path ?? "root" }];
    if (op === "tool_exec" || op === "call_tool") return ["call", { tool_id: args.op ?? args.tool_id, args: args.args || {} }];
    if (op === "tool_describe" || op === "expand_tool") return ["describe", { tool_id: args.name ?? args.tool_id }];
    if (op === "find_tool") return ["search", { query: args.purpose ?? "" }];
    if (op === "tool_list") return ["help", { path: args.namespace || "root" }];
    if (op === "search_tool_by_category") {
      const path = pathText(args.category_path ?? "");
      return path ? ["search_in", { query: args.query ?? "", path }] : ["search", { query: args.query ?? "" }];
    }
    if (op === "read_skill_resource") return ["read_resource", { tool_id: args.tool_id, path: args.path }];
    return null;
  }
  async function specAction(op, args, world) {
    switch (op) {
      case "list":
        return { op: "list", args: { path: pathText(args.path ?? "") } };
      case "search":
        return { op: "search_tool_by_category", args: { query: args.query, category_path: "" } };
      case "search_nodes":
        return { op: "search_nodes", args: { query: args.query } };
      case "search_in":
        return { op: "search_tool_by_category", args: { query: args.query, category_path: pathText(args.path ?? "") } };
      case "describe":
        return { op: "expand_tool", args: { tool_id: args.tool_id } };
      case "call":
        return { op: "call_tool", args: { tool_id: args.tool_id, args: args.args || {} } };
      case "read_resource":
        return { op: "call_tool", args: { tool_id: args.tool_id, args: { resource: args.path } } };
    }
    const path = pathText(args.path ?? "");
    if (!path) return { op: "list", args: { path: "" } };
    const toolId = await world.resolve(path);
    if (toolId !== null) return { op: "expand_tool", args: { tool_id: toolId } };
    if (await isNode(world, path)) return { op: "list", args: { path } };
    return { op: "search_tool_by_category", args: { query: words(path), category_path: "" } };
  }
  async function namespacedAction(op, args, world) {
    if (op === "search" || op === "search_nodes" || op === "search_in") return { op: "find_tool", args: { purpose: args.query } };
    if (op === "describe") return { op: "tool_describe", args: { name: args.tool_id } };
    if (op === "call" || op === "read_resource") {
      const toolId = await world.resolve(args.tool_id) ?? String(args.tool_id);
      return { op: await aliasOf(world, toolId), args: op === "call" ? args.args || {} : { resource: args.path } };
    }
    const path = dotted(args);
    if (!path) return { op: "tool_list", args: {} };
    const found = await world.resolve(path);
    if (found !== null) return { op: "tool_describe", args: { name: found } };
    if (await isGroup(world, path)) return { op: "tool_list", args: { namespace: path } };
    return { op: "find_tool", args: { purpose: words(path) } };
  }
  async function gatewayAction(op, args, world) {
    if (op === "search" || op === "search_nodes" || op === "search_in") return { op: "tool_help", args: { query: args.query } };
    if (op === "describe") return { op: "tool_help", args: { path: args.tool_id } };
    if (op === "call") return { op: "tool_exec", args: { op: args.tool_id, args: args.args || {} } };
    if (op === "read_resource") return { op: "tool_exec", args: { op: args.tool_id, args: { resource: args.path } } };
    const path = dotted(args);
    if (!path) return { op: "tool_help", args: { path: "root" } };
    if (await world.resolve(path) !== null || await isGroup(world, path)) return { op: "tool_help", args: { path } };
    return { op: "tool_help", args: { query: words(path) } };
  }
  async function renderAction(action, dialect, world) {
    const found = abstract(action);
    if (found === null) return null;
    const [op, args] = found;
    for (const key of ["query", "tool_id"]) {
      if (key in args && (typeof args[key] !== "string" || !args[key].trim())) {
        return key === "query" ? dialect.action("help", { path: "" }, world) : null;
      }
    }
    if (op === "call" && !isObject(args.args ?? {})) args.args = {};
    if (op === "read_resource" && typeof args.path !== "string") return null;
    return dialect.action(op, args, world);
  }
  function renderHint(text, dialect) {
    if (typeof text !== "string") return text;
    return text.replace(HINT_WORDS, (word) => dialect.names[TOOL_OPS[word] ?? "list"]);
  }
  async function render(envelope, name, world) {
    const dialect = { spec: SPEC, gateway: GATEWAY, namespaced: NAMESPACED }[name];
    const holder = isObject(envelope.error) ? envelope.error : envelope;
    if ("next_action" in holder) holder.next_action = await renderAction(holder.next_action, dialect, world);
    if (Array.isArray(holder.hints)) holder.hints = holder.hints.map((h) => renderHint(h, dialect));
    if (holder !== envelope && Array.isArray(envelope.hints)) envelope.hints = envelope.hints.map((h) => renderHint(h, dialect));
    return envelope;
  }
  var OPS, TOOL_OPS, HINT_WORDS, words, dotted, SPEC, GATEWAY, NAMESPACED;
  var init_protocol = __esm({
    "src/protocol.ts"() {
      "use strict";
      init_py();
      init_namespaces();
      OPS = ["list", "search", "search_nodes", "search_in", "describe", "call", "help", "read_resource"];
      TOOL_OPS = {
        tool_help: "help",
        tool_exec: "call",
        tool_batch: "call",
        tool_describe: "describe",
        tool_list: "list",
        find_tool: "search",
        expand_tool: "describe",
        call_tool: "call",
        search_tool_by_category: "search_in",
        search_nodes: "search_nodes",
        read_skill_resource: "read_resource"
      };
      HINT_WORDS = new RegExp("\\b(" + Object.keys(TOOL_OPS).sort((a, b) => b.length - a.length).join("|") + ")\\b|\\blist(?=\\()", "g");
      words = (path) => path.replace(/[./_\s-]+/g, " ").trim() || "tools";
      dotted = (args) => pathText(args.path ?? "").replaceAll("/", ".").replace(/^\.+|\.+$/g, "");
      SPEC = {
        names: { list: "list", search: "search_tool_by_category", search_nodes: "search_nodes", search_in: "search_tool_by_category", describe: "expand_tool", call: "call_tool", help: "expand_tool", read_resource: "call_tool" },
        action: specAction
      };
      GATEWAY = {
        names: { list: "tool_help", search: "tool_help", search_nodes: "tool_help", search_in: "tool_help", describe: "tool_help", call: "tool_exec", help: "tool_help", read_resource: "tool_exec" },
        action: gatewayAction
      };
      NAMESPACED = {
        names: { list: "tool_list", search: "find_tool", search_nodes: "find_tool", search_in: "find_tool", describe: "tool_describe", call: "tool_describe", help: "tool_describe", read_resource: "tool_describe" },
        action: namespacedAction
      };
    }
  });

  // src/deferred.ts
  var deferred_exports = {};
  __export(deferred_exports, {
    Catalog: () => Catalog,
    badCursor: () => badCursor,
    badExpand: () => badExpand,
    badParallel: () => badParallel,
    badPart: () => badPart,
    badPin: () => badPin,
    categoryAnswer: () => categoryAnswer,
    checkLongQuery: () => checkLongQuery,
    closeNames: () => closeNames,
    cursorKey: () => cursorKey,
    encoding: () => encoding,
    formatVersion: () => formatVersion,
    hashMismatch: () => hashMismatch,
    hintedTools: () => hintedTools,
    httpStatus: () => httpStatus,
    leanHit: () => leanHit,
    malformedPendingRef: () => malformedPendingRef,
    noChild: () => noChild,
    noIndex: () => noIndex,
    noMatch: () => noMatch,
    noNodes: () => noNodes,
    noTools: () => noTools,
    nodesAnswer: () => nodesAnswer,
    notAnEntry: () => notAnEntry,
    notHttp: () => notHttp,
    notModified: () => notModified,
    notTheManifest: () => notTheManifest,
    overCap: () => overCap,
    pinMismatch: () => pinMismatch,
    provenMismatch: () => provenMismatch,
    queryNote: () => queryNote,
    redirect: () => redirect,
    redirectWithoutLocation: () => redirectWithoutLocation,
    render: () => render,
    searchNearby: () => searchNearby,
    specPointer: () => specPointer,
    splitHint: () => splitHint,
    staleIndex: () => staleIndex,
    subtreePointers: () => subtreePointers,
    tooLarge: () => tooLarge,
    toolNotFound: () => toolNotFound,
    treeTooBig: () => treeTooBig,
    unknownCategory: () => unknownCategory,
    unknownShare: () => unknownShare,
    unknownWords: () => unknownWords,
    unreachable: () => unreachable,
    versionNotPublished: () => versionNotPublished,
    weak: () => weak,
    weakAnswer: () => weakAnswer,
    weakList: () => weakList,
    weakWords: () => weakWords
  });
  var init_deferred = __esm({
    "src/deferred.ts"() {
      "use strict";
      init_failures();
      init_protocol();
      init_namespaces();
      init_catalog();
    }
  });

  // src/source.ts
  function backoff(attempt) {
    return Math.min(BACKOFF_SECONDS * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS);
  }
  function wireLimit(limit) {
    return limit + Math.floor(limit / 1e3) + 1024;
  }
  function cleanPath(path) {
    if (typeof path !== "string" || !path || path.length > MAX_REF_PATH || path.includes("\\")) return false;
    for (const ch of path) {
      const c = ch.codePointAt(0);
      if (c < 32 || c >= 127 && c <= 159 || c >= 55296 && c <= 57343) return false;
    }
    const segments = path.split("/");
    if (segments[0].includes(":")) return false;
    return segments.every((s) => s !== "" && s !== "." && s !== "..");
  }
  function isSha256(value) {
    return typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
  }
  function checkRef(ref) {
    if (!isObject(ref)) {
      throw new ReaderError("INTEGRITY", `expected a ref {path, sha256, bytes}, got ${Array.isArray(ref) ? "list" : ref === null ? "NoneType" : typeof ref}`, {
        hints: ["The catalogue is malformed; rebuild it with `toolcat build`."]
      });
    }
    const { path, sha256: digest, bytes: size } = ref;
    if (!cleanPath(path)) {
      throw new ReaderError("INTEGRITY", `ref path ${shown(path, 200)} is not a clean relative path inside the catalogue`, {
        details: { ref: { path: shown(path, 200), sha256: digest, bytes: size } },
        hints: ["Ref paths are relative to the base URL: no '..', '.', empty segments, leading '/', URLs, backslashes or control characters."]
      });
    }
    if (!isSha256(digest)) throw new ReaderError("INTEGRITY", `ref to ${path} has no valid sha256`, { details: { ref } });
    if (typeof size !== "number" || !Number.isInteger(size) || size < 0) {
      throw new ReaderError("INTEGRITY", `ref to ${path} has no valid byte count`, { details: { ref } });
    }
    return [path, digest, size];
  }
  async function verify(data, path, digest, size, where) {
    const got = await sha256(data);
    if (data.length !== size || got !== digest) throw (await failures2()).hashMismatch(where, path, digest, size, got, data.length);
    return data;
  }
  function origin(url) {
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
      const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
      return `${parsed.protocol}//${parsed.hostname.toLowerCase()}:${port}`;
    } catch {
      return null;
    }
  }
  var MAX_ENTRY_BYTES, MAX_FILE_BYTES, MAX_REF_PATH, MAX_REDIRECTS, BACKOFF_SECONDS, MAX_BACKOFF_SECONDS, LEAVES_ORIGIN, failures2, Retry, sleep, HttpSource;
  var init_source = __esm({
    "src/source.ts"() {
      "use strict";
      init_errors();
      init_py();
      init_sha256();
      MAX_ENTRY_BYTES = 1024 * 1024;
      MAX_FILE_BYTES = 64 * 1024 * 1024;
      MAX_REF_PATH = 1024;
      MAX_REDIRECTS = 3;
      BACKOFF_SECONDS = 0.1;
      MAX_BACKOFF_SECONDS = 1;
      LEAVES_ORIGIN = "it leaves the catalogue's origin (scheme, host and port)";
      failures2 = () => Promise.resolve().then(() => (init_deferred(), deferred_exports));
      Retry = class extends Error {
      };
      sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1e3));
      HttpSource = class {
        constructor(baseUrl, options = {}) {
          this.stats = { requests: 0, round_trips: 0, bytes_downloaded: 0, bytes_decoded: 0, cache_hits: 0, not_modified: 0 };
          this.baseUrl = baseUrl.endsWith("/") ? baseUrl : baseUrl + "/";
          this.location = this.baseUrl;
          this.timeout = options.timeout ?? 10;
          this.retries = Math.max(0, options.retries ?? 2);
          this.maxParallel = Math.max(1, options.maxParallel ?? 8);
          this.maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
          const fetchFn = options.fetch ?? globalThis.fetch;
          this.fetchFn = (input, init2) => fetchFn(input, init2);
        }
        get concurrent() {
          return this.maxParallel > 1;
        }
        url(path) {
          return this.baseUrl + path.split("/").map(encodeURIComponent).join("/");
        }
        async readEntry() {
          const [status, body] = await this.get("catalog.json", MAX_ENTRY_BYTES, false, "the cap for catalog.json");
          if (status === 304) throw (await failures2()).notModified(this.url("catalog.json"));
          return body;
        }
        /** The verified bytes of one ref (or, for a pending ref, its unverified bytes: the caller checks them). */
        async fetch(ref, batched = false) {
          if (isObject(ref) && !("sha256" in ref) && "max_bytes" in ref) {
            const { path: path2, max_bytes: limit } = ref;
            if (!cleanPath(path2) || !Number.isInteger(limit) || limit < 0) throw (await failures2()).malformedPendingRef(ref);
            return (await this.get(path2, Math.min(limit, this.maxFileBytes), batched))[1];
          }
          const [path, digest, size] = checkRef(ref);
          const url = this.url(path);
          if (size > this.maxFileBytes) throw (await failures2()).overCap(path, url, size, this.maxFileBytes);
          const [, body] = await this.get(path, size, batched);
          return verify(body, path, digest, size, url);
        }
        /** Several refs at once, at most ``maxParallel`` in flight: one round trip. Each slot holds bytes or the error. */
        async fetchMany(refs2) {
          const one = async (ref, batched) => {
            try {
              return await this.fetch(ref, batched);
            } catch (err) {
              if (err instanceof ReaderError) return err;
              throw err;
            }
          };
          if (refs2.length < 2 || this.maxParallel === 1) {
            const out2 = [];
            for (const ref of refs2) out2.push(await one(ref, false));
            return out2;
          }
          const before = this.stats.requests;
          const out = new Array(refs2.length);
          let next = 0;
          const worker = async () => {
            while (next < refs2.length) {
              const index = next++;
              out[index] = await one(refs2[index], true);
            }
          };
          await Promise.all(Array.from({ length: Math.min(this.maxParallel, refs2.length) }, worker));
          if (this.stats.requests > before) this.stats.round_trips += 1;
          return out;
        }
        /** GET with a deadline per attempt and bounded retries: ``[status, decoded body]`` for 2xx and 304. */
        async get(path, limit, batched, why = "the size its ref promised") {
          const url = this.url(path);
          let last = "";
          for (let attempt = 0; attempt <= this.retries; attempt++) {
            if (attempt) await sleep(backoff(attempt));
            this.stats.requests += 1;
            this.stats.round_trips += batched && !attempt ? 0 : 1;
            try {
              return await this.attempt(url, limit, why);
            } catch (err) {
              if (!(err instanceof Retry)) throw err;
              last = err.message;
            }
          }
          throw (await failures2()).unreachable(url, this.retries + 1, last, this.timeout);
        }
        async attempt(url, limit, why) {
          const controller = new AbortController();
          const timer = setTimeout(() => controller.abort(), this.timeout * 1e3);
          try {
            let current = url;
            for (let hop = 0; ; hop++) {
              let response = await this.fetchFn(current, {
                headers: { "Accept-Encoding": "gzip" },
                redirect: "manual",
                signal: controller.signal,
                cache: "no-store"
              });
              if (response.type === "opaqueredirect") {
                response = await this.fetchFn(current, { redirect: "follow", signal: controller.signal });
                if (origin(response.url) !== origin(this.baseUrl)) throw (await failures2()).redirect(url, response.url, LEAVES_ORIGIN);
              }
              const status = response.status;
              if (status >= 300 && status < 400 && status !== 304) {
                const location2 = response.headers.get("location");
                await response.body?.cancel().catch(() => void 0);
                if (!location2) throw (await failures2()).redirectWithoutLocation(url, status);
                const target = new URL(location2, current).href;
                if (origin(target) !== origin(this.baseUrl)) throw (await failures2()).redirect(url, target, LEAVES_ORIGIN);
                if (hop + 1 > MAX_REDIRECTS) throw (await failures2()).redirect(url, target, `it is hop ${hop + 1}, more than ${MAX_REDIRECTS}`);
                current = target;
                continue;
              }
              if (status === 304) {
                await response.body?.cancel().catch(() => void 0);
                return [304, new Uint8Array()];
              }
              if (status >= 500 || status === 429) {
                await response.body?.cancel().catch(() => void 0);
                throw new Retry(`HTTP ${status}`);
              }
              if (status < 200 || status >= 300) {
                await response.body?.cancel().catch(() => void 0);
                throw (await failures2()).httpStatus(url, status);
              }
              return [status, await this.readBody(url, response, limit, why)];
            }
          } catch (err) {
            if (err instanceof ReaderError || err instanceof Retry) throw err;
            if (controller.signal.aborted) throw new Retry(`no complete answer within the ${this.timeout} s timeout (timed out)`);
            const error = err;
            const cause = error.cause?.message;
            throw new Retry(`${error.name}: ${error.message}${cause ? ` (${cause})` : ""}`.slice(0, 300));
          } finally {
            clearTimeout(timer);
          }
        }
        /** A 2xx body read chunk by chunk, never past ``limit`` decoded bytes (nor past its wire limit). */
        async readBody(url, response, limit, why) {
          const encoding2 = (response.headers.get("content-encoding") ?? "").trim().toLowerCase();
          if (!["", "identity", "gzip", "x-gzip"].includes(encoding2)) {
            await response.body?.cancel().catch(() => void 0);
            throw (await failures2()).encoding(url, encoding2);
          }
          const text = (response.headers.get("content-length") ?? "").trim();
          const declared = /^\d+$/.test(text) ? Number(text.slice(0, 20)) : null;
          if (declared !== null && declared > wireLimit(limit)) {
            await response.body?.cancel().catch(() => void 0);
            throw (await failures2()).tooLarge(url, limit, why);
          }
          const chunks = [];
          let received = 0;
          const reader = response.body?.getReader();
          while (reader) {
            const { done, value } = await reader.read();
            if (done) break;
            received += value.length;
            if (received > limit) {
              await reader.cancel().catch(() => void 0);
              throw (await failures2()).tooLarge(url, limit, why);
            }
            chunks.push(value);
          }
          const body = new Uint8Array(received);
          let at = 0;
          for (const chunk of chunks) {
            body.set(chunk, at);
            at += chunk.length;
          }
          this.stats.bytes_downloaded += encoding2 && encoding2 !== "identity" && declared !== null ? declared : received;
          this.stats.bytes_decoded += received;
          return body;
        }
      };
    }
  });

  // src/store.ts
  function kindOf(value) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "array";
    if (typeof value === "number") return Number.isInteger(value) ? "integer" : "float";
    return typeof value === "object" ? "object" : typeof value === "boolean" ? "bool" : typeof value === "string" ? "string" : typeof value;
  }
  function checkShape(path, value) {
    const hint = "The host serves files a toolcat build did not write; rebuild and republish the catalogue.";
    if (!isObject(value)) {
      const kind2 = kindOf(value).replace("integer", "int").replace("string", "str");
      throw new ReaderError("INTEGRITY", `${path} is not what a build writes: a JSON ${kind2} where every artifact is an object`, { details: { path }, hints: [hint] });
    }
    const kind = value.artifact;
    const shape = typeof kind === "string" ? SHAPES[kind] : void 0;
    for (const [field, [want, element]] of Object.entries(shape ?? {})) {
      if (!(field in value)) continue;
      const got = value[field];
      if (got === null && NULLABLE.has(`${kind}.${field}`)) continue;
      const items = Array.isArray(got) ? got : isObject(got) ? Object.values(got) : [];
      if (kindOf(got) !== want || element !== null && !items.every((x) => kindOf(x) === element)) {
        throw new ReaderError("INTEGRITY", `${path}: field '${field}' of this ${kind} artifact has the wrong type`, { details: { path, field }, hints: [hint] });
      }
    }
  }
  function childName(asked, children) {
    if (children.has(asked)) return asked;
    const folded = fold(asked);
    for (const [name, child] of children) if (fold(name) === folded || fold(String(child.title ?? "")) === folded) return name;
    return null;
  }
  function deprecationNote(spec) {
    const value = spec.deprecated;
    if (typeof value === "string" && value.trim()) return `${spec.tool_id} is deprecated: ${value}`;
    return `${spec.tool_id} is deprecated; search for its replacement before relying on it`;
  }
  function nodePath(path) {
    if (path === null || path === void 0) return [];
    let parts;
    if (typeof path === "string") {
      const text = path.trim();
      if (ROOT_NAMES.includes(text)) return [];
      parts = text.replace(/^\/+|\/+$/g, "").replaceAll("/", ".").split(".");
    } else if (Array.isArray(path) && path.every((p) => typeof p === "string")) parts = [...path];
    else throw bad(`a path is a list of names or a 'a/b' string, got ${shown(path)}`);
    if (parts.some((p) => !p) || parts.length > MAX_PATH_DEPTH) throw bad(`path ${shown(path)} has an empty segment or more than ${MAX_PATH_DEPTH} names`);
    return parts;
  }
  function checkLimit(limit, fallback) {
    if (limit === null || limit === void 0) return fallback;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
      throw bad(`'limit' must be an integer from 1 to ${MAX_LIMIT}, got ${shown(limit, 40)}`, { hints: [`Use a limit between 1 and ${MAX_LIMIT}.`] });
    }
    return Math.min(MAX_LIMIT, limit);
  }
  function checkStr(value, name, allowEmpty = false, helpPath = "root") {
    if (typeof value !== "string" || !allowEmpty && !value.trim() || value.length > 4 * MAX_NAME) {
      throw bad(`'${name}' must be a non-empty string (at most ${4 * MAX_NAME} characters), got ${shown(value)}`, { help_path: helpPath });
    }
    return value;
  }
  async function checkQuery(value, name = "query") {
    return typeof value === "string" && value.trim() && value.length <= MAX_QUERY_CHARS ? value.trim() : (await failures3()).checkLongQuery(value, name);
  }
  function checkTags(tags) {
    if (tags === null || tags === void 0) return [];
    const list = typeof tags === "string" ? [tags] : tags;
    if (!Array.isArray(list) || !list.every((t) => typeof t === "string")) throw bad(`'tags' must be a list of strings, got ${shown(tags)}`);
    return list.map((t) => t.toLowerCase());
  }
  function encodeCursor(offset, key) {
    return `o:${offset}` + (key ? `:${key}` : "");
  }
  async function decodeCursor(cursor, key) {
    if (cursor === null || cursor === void 0) return 0;
    const parts = typeof cursor === "string" && cursor.length <= 100 ? cursor.split(":") : [];
    const wellFormed = parts.length >= 2 && parts[0] === "o" && /^[0-9]+$/.test(parts[1]);
    if (!wellFormed || JSON.stringify(parts.slice(2)) !== JSON.stringify(key ? [key] : [])) throw (await failures3()).badCursor(cursor, wellFormed);
    return Number(parts[1]);
  }
  var SUPPORTED_FORMAT_VERSION, MAX_NAME, SUGGEST_WALK_LIMIT, decoder, failures3, SHAPES, NULLABLE, fold, Store, MAX_LIMIT, MAX_PATH_DEPTH, ROOT_NAMES, MAX_QUERY_CHARS;
  var init_store = __esm({
    "src/store.ts"() {
      "use strict";
      init_errors();
      init_py();
      init_sha256();
      init_source();
      SUPPORTED_FORMAT_VERSION = 1;
      MAX_NAME = 300;
      SUGGEST_WALK_LIMIT = 2e3;
      decoder = new TextDecoder("utf-8", { fatal: false });
      failures3 = () => Promise.resolve().then(() => (init_deferred(), deferred_exports));
      SHAPES = {
        catalog: { manifest: ["object", null], registry_version: ["string", null], versions: ["array", "object"] },
        manifest: {
          root: ["object", null],
          lookup: ["object", null],
          namespaces: ["array", "string"],
          namespace_index: ["object", null],
          index: ["object", null],
          prompts: ["object", null],
          counts: ["object", null]
        },
        node: { children: ["array", "object"], tools: ["array", "object"], pages: ["array", "object"], path: ["array", "string"] },
        namespace_index: { namespaces: ["object", "object"] },
        namespace: { tools: ["array", "object"], pages: ["array", "object"] },
        lookup: { entries: ["object", "object"], bucket: ["integer", null], buckets: ["integer", null] },
        tool: {
          tool_id: ["string", null],
          args_schema: ["object", null],
          path: ["array", "string"],
          tags: ["array", "string"],
          examples: ["array", null],
          handler: ["object", null],
          policy: ["object", null],
          aliases: ["object", null]
        },
        index_meta: { analyzer: ["object", null], tools: ["object", null], nodes: ["object", null], score: ["object", null] },
        index_terms: { terms: ["object", "object"] },
        index_docs: { docs: ["array", "object"], first: ["integer", null] },
        index_delta_docs: { docs: ["array", "object"], ids: ["array", "integer"] },
        index_pages: { folder: ["string", null], prefix: ["string", null], first: ["integer", null], files: ["array", "array"] },
        prompts: { sections: ["object", null], snippets: ["object", null], focused: ["object", null] },
        prompt_snippets: { entries: ["object", null] },
        aliases: { to_alias: ["object", "string"], to_id: ["object", "string"] }
      };
      NULLABLE = /* @__PURE__ */ new Set(["tool.handler", "tool.policy", "tool.aliases", "tool.examples", "tool.tags", "manifest.index", "manifest.prompts", "manifest.namespace_index", "manifest.lookup", "manifest.counts"]);
      fold = (text) => text.toLowerCase();
      Store = class {
        constructor(source, pinned, pin) {
          this.source = source;
          this.pinned = pinned;
          this.pin = pin;
          this.entry = {};
          this.manifest = {};
          this.registry_version = "";
          this.json = /* @__PURE__ */ new Map();
          this.pending = /* @__PURE__ */ new Map();
          this.prefetchErrors = /* @__PURE__ */ new Map();
          this.nodes = /* @__PURE__ */ new Map();
          /** Every pointer by tool_id, once a walk of the whole tree loaded them (namespaces.ts). */
          this.pointers = null;
          this.searcherInstance = null;
          // -- the search index -----------------------------------------------------------------------
          this.searcherFactory = null;
        }
        // -- the entry and the manifest ------------------------------------------------------------
        async readEntry() {
          const raw = await this.source.readEntry();
          const location2 = this.source.location;
          let entry;
          try {
            entry = JSON.parse(decoder.decode(raw));
          } catch (err) {
            throw (await failures3()).notAnEntry(`${location2}: catalog.json is not valid JSON (${err.message})`);
          }
          if (!isObject(entry) || entry.artifact !== "catalog" || entry.format !== "toolcat") throw (await failures3()).notAnEntry(`${location2}: catalog.json is not a toolcat entry point`);
          if (entry.format_version !== SUPPORTED_FORMAT_VERSION) throw (await failures3()).formatVersion(location2, entry.format_version);
          checkShape("catalog.json", entry);
          return entry;
        }
        async manifestRef(entry) {
          const versions = (entry.versions ?? []).filter(isObject).map((v) => [String(v.registry_version), v.manifest ?? {}]);
          let candidates;
          if (this.pinned === null) candidates = [[String(entry.registry_version), entry.manifest ?? {}], ...versions];
          else {
            candidates = versions.filter(([v]) => v === this.pinned);
            if (!candidates.length) throw (await failures3()).versionNotPublished(this.pinned, this.source.location, versions.map(([v]) => v));
          }
          if (this.pin === null) return candidates[0];
          for (const [version, ref] of candidates) if (isObject(ref) && ref.sha256 === this.pin) return [version, ref];
          const first = candidates[0];
          throw (await failures3()).pinMismatch(this.source.location, this.pin, this.pinned, first[0], isObject(first[1]) ? first[1].sha256 ?? null : null);
        }
        async load(entry) {
          const [version, ref] = await this.manifestRef(entry);
          const manifest = await this.fetchJson(ref);
          if (!isObject(manifest) || manifest.artifact !== "manifest" || manifest.format_version !== SUPPORTED_FORMAT_VERSION || manifest.registry_version !== version) {
            throw (await failures3()).notTheManifest(manifest, version);
          }
          this.entry = entry;
          this.manifest = manifest;
          this.registry_version = version;
          this.nodes = /* @__PURE__ */ new Map();
          this.pointers = null;
          this.searcherInstance = null;
        }
        async refresh() {
          const entry = await this.readEntry();
          if (this.pinned !== null || this.pin !== null || entry.registry_version === this.registry_version) {
            this.entry = entry;
            return false;
          }
          await this.load(entry);
          return true;
        }
        // -- fetching -------------------------------------------------------------------------------
        /** The bytes a ref points to, verified against its sha256. */
        async fetchBytes(ref) {
          return this.source.fetch(ref);
        }
        /** The parsed JSON a ref points to (verified, kept in memory by sha256; treat it as read-only). */
        fetchJson(ref) {
          const digest = isObject(ref) ? ref.sha256 : void 0;
          if (typeof digest === "string") {
            const known = this.json.get(digest);
            if (known) return known;
            const failed = this.prefetchErrors.get(digest);
            if (failed) {
              this.prefetchErrors.delete(digest);
              return Promise.reject(failed);
            }
          }
          const promise = this.read(ref);
          if (typeof digest === "string") {
            this.json.set(digest, promise);
            promise.catch(() => this.json.delete(digest));
          }
          return promise;
        }
        async read(ref) {
          const pendingBytes = isObject(ref) ? this.pending.get(String(ref.path)) : void 0;
          if (pendingBytes !== void 0) {
            this.pending.delete(String(ref.path));
            const [path, digest, size] = checkRef(ref);
            return this.parse(ref, await verify(pendingBytes, path, digest, size, path));
          }
          return this.parse(ref, await this.source.fetch(ref));
        }
        parse(ref, data) {
          let value;
          try {
            value = JSON.parse(decoder.decode(data));
          } catch (err) {
            throw new ReaderError("INTEGRITY", `${ref.path} is not valid JSON: ${err.message}`);
          }
          checkShape(String(ref.path), value);
          return value;
        }
        /** Several JSON files at once (one round trip); an error is kept for the next ``fetchJson`` of that file. */
        async prefetch(refs2) {
          if (!this.source.concurrent) return;
          const wanted = [...new Map(refs2.filter((r) => isObject(r) && typeof r.sha256 === "string" && !this.json.has(r.sha256)).map((r) => [r.sha256, r])).values()];
          const pending = [...new Map(refs2.filter((r) => isObject(r) && "max_bytes" in r && !("sha256" in r) && !this.pending.has(String(r.path))).map((r) => [r.path, r])).values()];
          if (wanted.length + pending.length < 2) return;
          const results = await this.source.fetchMany([...wanted, ...pending]);
          pending.forEach((r, i) => {
            const data = results[wanted.length + i];
            if (data instanceof Uint8Array) this.pending.set(String(r.path), data);
          });
          wanted.forEach((ref, i) => {
            const data = results[i];
            const digest = String(ref.sha256);
            try {
              if (data instanceof ReaderError) throw data;
              this.json.set(digest, Promise.resolve(this.parse(ref, data)));
              this.prefetchErrors.delete(digest);
            } catch (err) {
              if (!(err instanceof ReaderError)) throw err;
              this.prefetchErrors.set(digest, err);
            }
          });
        }
        stats() {
          return { ...this.source.stats, memory_files: this.json.size };
        }
        // -- lookups ---------------------------------------------------------------------------------
        async lookup(name) {
          const lookup = this.manifest.lookup ?? {};
          const refs2 = lookup.refs ?? [];
          const count = lookup.buckets ?? 0;
          if (!refs2.length || !Number.isInteger(count) || count < 1) return null;
          const entries = (await this.fetchJson(refs2[await lookupBucket(name, count)])).entries ?? {};
          const found = Object.hasOwn(entries, name) ? entries[name] : null;
          return isObject(found) ? found : null;
        }
        async find(name) {
          for (const candidate of unique([name, name.trim(), name.trim().toLowerCase()])) {
            const found = await this.lookup(candidate);
            if (found !== null) return found;
          }
          return null;
        }
        async resolve(name) {
          if (typeof name !== "string" || !name.trim() || name.length > MAX_NAME) return null;
          const found = await this.find(name);
          return found !== null ? String(found.tool_id) : null;
        }
        /** ``[tool_id, spec]`` for a name, or TOOL_NOT_FOUND with suggestions. */
        async spec(name, helpPath = "root") {
          if (typeof name !== "string" || !name.trim() || name.length > MAX_NAME) {
            throw bad(`a tool name must be a non-empty string, got ${shown(name)}`, { help_path: helpPath });
          }
          const found = await this.find(name);
          if (found === null) throw await (await failures3()).toolNotFound(this, name);
          return [String(found.tool_id), await this.fetchJson(found.spec)];
        }
        searcher() {
          if (this.searcherInstance === null && "index" in this.manifest && this.searcherFactory) this.searcherInstance = this.searcherFactory(this);
          return this.searcherInstance;
        }
        searcherRequired() {
          const searcher = this.searcher();
          if (searcher === null) {
            throw new ReaderError("UNAVAILABLE", "search is unavailable: this catalogue was built without a search index", {
              hints: ["Browse with list()/tool_help() instead, or rebuild with the search stage."],
              next_action: { op: "list", args: { path: "" } }
            });
          }
          return searcher;
        }
        // -- node shards ------------------------------------------------------------------------------
        async node(path) {
          const key = JSON.stringify(path);
          const known = this.nodes.get(key);
          if (known) return known;
          let shard = await this.fetchJson(this.manifest.root);
          const walked = [];
          for (const asked of path) {
            const children = new Map((shard.children ?? []).map((c) => [c.name, c]));
            const name = childName(asked, children);
            if (name === null) throw (await failures3()).noChild(path, walked, asked, [...children.keys()]);
            walked.push(name);
            const walkedKey = JSON.stringify(walked);
            shard = this.nodes.get(walkedKey) ?? await this.fetchJson(children.get(name).ref);
            this.nodes.set(walkedKey, shard);
          }
          if (!isObject(shard)) throw new ReaderError("INTEGRITY", `node shard of ${path.join("/") || "root"} is not an object`);
          this.nodes.set(key, shard);
          return shard;
        }
        async canonicalPath(path) {
          return path.length ? [...(await this.node(path)).path ?? []] : [];
        }
        /** The pointers of a paged shard (node or namespace): its first page, then the others (fetched together). */
        async nodeTools(shard) {
          await this.prefetch(shard.pages ?? []);
          const tools = [...shard.tools ?? []];
          for (const ref of shard.pages ?? []) tools.push(...(await this.fetchJson(ref)).tools ?? []);
          return tools;
        }
      };
      MAX_LIMIT = 50;
      MAX_PATH_DEPTH = 32;
      ROOT_NAMES = ["", "root", "/", "."];
      MAX_QUERY_CHARS = 4 * MAX_NAME;
    }
  });

  // src/summary.ts
  var summary_exports = {};
  __export(summary_exports, {
    oneLine: () => oneLine,
    summarized: () => summarized,
    withSummaries: () => withSummaries
  });
  function oneLine(text, limit = SUMMARY_CHARS) {
    if (typeof text !== "string") return null;
    const line = text.replace(LEAD, "").split(BREAK)[0].replace(SPACES, " ").replace(/ $/, "");
    if (!line) return null;
    const points = Array.from(line);
    if (points.length <= limit) return line;
    const head = points.slice(0, limit - 1).join("");
    const cut = head.includes(" ") ? head.slice(0, head.lastIndexOf(" ")) : head;
    return cut.replace(/[ ,;:]+$/, "") + "\u2026";
  }
  function withSummaries(rows, key) {
    return rows.map((row) => {
      const summary = isObject2(row) && typeof row[key] === "string" ? oneLine(row.summary) : null;
      return summary ? { ...row, summary } : row;
    });
  }
  function summarized(answer) {
    if (Array.isArray(answer.matches)) {
      const rows = withSummaries(answer.matches, "name");
      answer.matches = rows.map((m, i) => i && isObject2(m) ? Object.fromEntries(Object.entries(m).filter(([k]) => k !== "reason")) : m);
    } else if (Array.isArray(answer.results)) {
      answer.results = answer.results.map((r) => isObject2(r) && typeof r.summary === "string" ? { ...r, summary: oneLine(r.summary) ?? r.summary } : r);
    }
    return answer;
  }
  var isObject2, SUMMARY_CHARS, WS, SPACES, LEAD, BREAK;
  var init_summary = __esm({
    "src/summary.ts"() {
      "use strict";
      isObject2 = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
      SUMMARY_CHARS = 120;
      WS = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
      SPACES = new RegExp(`[${WS}]+`, "g");
      LEAD = new RegExp(`^[${WS}]+`);
      BREAK = /[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/;
    }
  });

  // src/ops.ts
  function publicPointer(pointer, confidence) {
    const out = {};
    for (const [k, v] of Object.entries(pointer)) {
      if (HIDDEN_POINTER_KEYS.has(k) || isBlank(v) || k === "type" && v === "tool") continue;
      out[k] = clone(v);
    }
    if (confidence !== void 0) out.confidence = roundTo4(confidence);
    return out;
  }
  function checkCapability(capability) {
    if (capability === null || capability === void 0) return null;
    if (typeof capability !== "string" || !capability.trim() || capability.length > 200) {
      throw bad(`'capability' must be a capability name such as 'code-analysis', got ${shown(capability)}`);
    }
    return capability.trim().toLowerCase();
  }
  function hasCapability(pointer, capability) {
    const declared = pointer.capabilities;
    return Array.isArray(declared) && declared.map((c) => String(c).toLowerCase()).includes(capability);
  }
  function delegate(result, helpPath = "root") {
    if (isError(result)) return result;
    const out = { ...result };
    for (const key of ["tools", "results"]) {
      if (Array.isArray(out[key])) out[key] = out[key].map((t) => isObject(t) && "tool_id" in t ? publicPointer(t) : t);
    }
    return { ok: true, ...out, help_path: out.help_path ?? helpPath, hints: out.hints ?? [], next_action: out.next_action ?? null };
  }
  async function listNode(store, path, tags, query, limit, cursor, capability) {
    const where = await store.canonicalPath(nodePath(path));
    const wanted = checkTags(tags);
    const able = checkCapability(capability);
    const count = checkLimit(limit, 10);
    if (query !== null && query !== void 0) checkStr(query, "query", true);
    const offset = await decodeCursor(cursor);
    const shard = await store.node(where);
    const searched = typeof query === "string" && !!query.trim();
    let hits = [];
    const filtered = !!wanted.length || able !== null;
    let page;
    let total;
    if (searched && !filtered) {
      [hits, total] = await store.searcherRequired().rankToolsPage(query, where, offset, count);
      page = hits.map((h) => h[0]);
    } else {
      let pointers;
      if (searched) {
        hits = await store.searcherRequired().rankTools(query, { within: where });
        pointers = hits.map((h) => h[0]);
      } else if (filtered) pointers = [...(await (await Promise.resolve().then(() => (init_deferred(), deferred_exports))).subtreePointers(store, where)).values()];
      else if (offset + count <= (shard.tools ?? []).length) pointers = shard.tools ?? [];
      else pointers = await store.nodeTools(shard);
      if (wanted.length) pointers = pointers.filter((p) => wanted.every((t) => (p.tags ?? []).map((x) => x.toLowerCase()).includes(t)));
      if (able !== null) pointers = pointers.filter((p) => hasCapability(p, able));
      page = pointers.slice(offset, offset + count);
      total = searched || filtered ? pointers.length : shard.direct_tools ?? pointers.length;
    }
    const confidences = new Map(hits.map((h) => [h[0].tool_id, Number(h[1])]));
    const more = offset + count < total;
    const nodes = offset || filtered || searched ? [] : (shard.children ?? []).map((c) => dropEmpty(Object.fromEntries(["name", "path", "title", "summary", "tags", "tool_count"].filter((k) => k in c).map((k) => [k, c[k]]))));
    const tools = page.map((p) => publicPointer(p, confidences.size ? confidences.get(p.tool_id) : void 0));
    const hints = [];
    let next;
    const weak2 = searched && tools.length && !offset ? await (await Promise.resolve().then(() => (init_deferred(), deferred_exports))).weakList(store, query, where, confidences) : null;
    if (weak2) [hints[0], next] = weak2;
    else if (tools.length) next = { op: "describe", args: { tool_id: tools[0]?.tool_id } };
    else if (nodes.length) next = { op: "list", args: { path: nodes[0].path.join("/") } };
    else {
      const text = [searched ? query : "", ...wanted, able ?? "", ...where].filter(Boolean).join(" ");
      next = text ? { op: "search", args: { query: text } } : null;
      hints.push("Nothing here matches; search the whole catalogue by purpose, or browse from the root.");
    }
    const out = dropEmpty({ path: where, title: shard.title ?? "", summary: shard.summary ?? "", tool_count: shard.tool_count ?? 0, nodes, tools, total_tools: total }, ["path", "nodes", "tools"]);
    out.next_cursor = more ? encodeCursor(offset + count) : null;
    if (weak2) out.weak = true;
    return ok(out, { help_path: where.join("/") || "root", hints, next_action: next });
  }
  async function searchNodes(store, query, limit) {
    await checkQuery(query);
    const count = checkLimit(limit, 5);
    return delegate(await store.searcherRequired().searchNodes(query, count));
  }
  async function searchToolByCategory(store, query, categoryPath, limit, cursor) {
    await checkQuery(query);
    const count = checkLimit(limit, 5);
    if (cursor !== null && cursor !== void 0 && typeof cursor !== "string") throw bad(`cursor ${shown(cursor)} must be a string this reader returned`);
    const where = await store.canonicalPath(nodePath(categoryPath)).catch(async (e) => {
      throw (await Promise.resolve().then(() => (init_deferred(), deferred_exports))).searchNearby(e, query);
    });
    const inside = where.join("/") || "root";
    const answer = await summarized2(delegate(await store.searcherRequired().searchToolByCategory(query, where, count, cursor ?? null), inside));
    if (answer.error) answer.error.help_path = inside;
    const results = answer.results;
    if (answer.ok && results?.length) answer.next_action = answer.next_action ?? { op: "describe", args: { tool_id: results[0]?.tool_id } };
    return answer;
  }
  async function describe(store, runs, name) {
    const [toolId, spec] = await store.spec(name);
    const out = Object.fromEntries(DESCRIBED_KEYS.map((k) => [k, clone(spec[k] ?? null)]));
    if (out.type === "tool") out.type = null;
    for (const flag of ["deprecated", "optional"]) out[flag] = out[flag] || null;
    const aliases = isObject(spec.aliases) ? spec.aliases : {};
    out.alias = aliases.anthropic || aliases.openai || toolId.replaceAll(".", "_");
    if (out.when_to_use === out.summary || out.when_to_use === out.description) out.when_to_use = null;
    if (out.description === out.summary) out.description = null;
    const handler = isObject(spec.handler) ? spec.handler : null;
    out.handler = handler ? { type: handler.type ?? null } : null;
    const hints = [];
    const executable = runs(toolId, handler);
    out.executable = executable;
    const skill = spec.skill;
    if (isObject(skill)) {
      const body = new TextDecoder().decode(await store.fetchBytes(skill.body));
      const frontmatter = isObject(skill.frontmatter) ? skill.frontmatter : {};
      out.skill = dropEmpty({
        name: skill.name ?? null,
        level: 2,
        frontmatter: Object.fromEntries(Object.entries(frontmatter).filter(([k]) => k !== "name" && k !== "description").map(([k, v]) => [k, clone(v)])),
        body,
        resources: (skill.resources ?? []).map((r) => dropEmpty({ path: r.path ?? null, media_type: r.media_type ?? null, bytes: (r.ref ?? {}).bytes ?? null }))
      });
      if (skill.resources?.length) hints.push("Read a resource only when the instructions call for it (the resource argument).");
    }
    if (!executable && !hints.length) hints.push("This tool has no handler this reader can run: the host application executes it.");
    if (spec.deprecated) hints.push(deprecationNote(spec));
    const example = (spec.examples ?? []).find(isObject)?.args;
    const next = executable ? { op: "call", args: { tool_id: toolId, args: clone(example || {}) } } : null;
    return ok(dropEmpty(out, ["tool_id", "args_schema", "executable"]), { help_path: toolId, hints, next_action: next });
  }
  async function findTool(store, purpose, limit) {
    await checkQuery(purpose, "purpose");
    const count = checkLimit(limit, 5);
    return summarized2(delegate(await store.searcherRequired().findTool(purpose, count)));
  }
  async function summarized2(answer) {
    return answer.ok ? (await Promise.resolve().then(() => (init_summary(), summary_exports))).summarized(answer) : answer;
  }
  var HIDDEN_POINTER_KEYS, DESCRIBED_KEYS, clone, isBlank, roundTo4;
  var init_ops = __esm({
    "src/ops.ts"() {
      "use strict";
      init_errors();
      init_py();
      init_store();
      HIDDEN_POINTER_KEYS = /* @__PURE__ */ new Set(["spec", "alias", "aliases", "tokens", "optional"]);
      DESCRIBED_KEYS = [
        "tool_id",
        "type",
        "path",
        "categories",
        "summary",
        "description",
        "args_schema",
        "result_schema",
        "examples",
        "errors",
        "tags",
        "kind",
        "optional",
        "when_to_use",
        "policy",
        "annotations",
        "version",
        "author",
        "capabilities",
        "constraints",
        "tools",
        "deprecated"
      ];
      clone = (value) => value === void 0 ? value : structuredClone(value);
      isBlank = (v) => v === null || v === void 0 || v === false || v === "" || Array.isArray(v) && !v.length || isObject(v) && !Object.keys(v).length;
      roundTo4 = (x) => pyRound(x, 4);
    }
  });

  // src/catalog.ts
  async function checkPin(pin) {
    if (pin === null || pin === void 0) return null;
    const text = typeof pin === "string" ? pin.trim().toLowerCase() : "";
    const digest = text.startsWith("sha256:") ? text.slice(7) : "";
    if (!/^[0-9a-f]{64}$/.test(digest)) throw (await failures4()).badPin(pin);
    return digest;
  }
  function guides(envelope) {
    const holder = isObject(envelope.error) ? envelope.error : envelope;
    return (holder.next_action ?? null) !== null || [holder.hints, envelope.hints].some((hints) => Array.isArray(hints) && hints.length > 0);
  }
  var failures4, Catalog;
  var init_catalog = __esm({
    "src/catalog.ts"() {
      "use strict";
      init_errors();
      init_ops();
      init_py();
      init_search();
      init_source();
      init_store();
      failures4 = () => Promise.resolve().then(() => (init_deferred(), deferred_exports));
      Catalog = class {
        constructor(store, runs) {
          this.store = store;
          this.runs = runs;
        }
        /** Open the catalogue at an http(s) base URL (the folder holding catalog.json). */
        static async open(url, options = {}) {
          const text = String(url);
          if (!/^https?:\/\//i.test(text)) throw (await failures4()).notHttp(text);
          if (options.version !== void 0 && options.version !== null && typeof options.version !== "string") {
            throw new ReaderError("BAD_REQUEST", `version must be a registry_version string, got ${shown(options.version)}`);
          }
          const maxParallel = options.maxParallel ?? 8;
          if (!Number.isInteger(maxParallel) || maxParallel < 1) throw (await failures4()).badParallel(maxParallel);
          const digest = await checkPin(options.pin);
          const base = text.replace(/catalog\.json$/, "");
          const source = new HttpSource(base, {
            timeout: options.timeout ?? 10,
            retries: options.retries ?? 2,
            maxParallel,
            maxFileBytes: options.maxFileBytes ?? MAX_FILE_BYTES,
            ...options.fetch ? { fetch: options.fetch } : {}
          });
          const store = new Store(source, options.version ?? null, digest);
          store.searcherFactory = (s) => new Searcher(s, options.model ? { fetch: options.fetch, ...options.model } : null);
          await store.load(await store.readEntry());
          return new this(store, options.runs ?? (() => false));
        }
        get manifest() {
          return this.store.manifest;
        }
        get registryVersion() {
          return this.store.registry_version;
        }
        /** Re-read catalog.json; true when a new registry_version was loaded (never with ``version``/``pin``). */
        refresh() {
          return this.store.refresh();
        }
        /** Requests, round trips, bytes so far, the files in memory, and which search tier answers. */
        stats() {
          const searcher = this.store.searcherInstance;
          return { ...this.store.stats(), ...searcher ? { search_tier: searcher.searchTier } : {} };
        }
        /** The canonical tool id for a canonical id, any provider alias or a skill name; null if unknown. */
        resolve(name) {
          return this.store.resolve(name);
        }
        /** The lexical searcher (rankTools, findTool ...); throws UNAVAILABLE without an index. */
        searcher() {
          return this.store.searcherRequired();
        }
        /** ``fn``'s answer, a ReaderError as its envelope, rendered in ``dialect`` (next_action and hints). */
        async run(fn, dialect) {
          let result;
          try {
            result = await fn();
          } catch (err) {
            if (err instanceof ReaderError) result = err.envelope();
            else {
              const error = err;
              result = errorEnvelope("INTERNAL", `failed: ${error?.name}: ${error?.message}`, { details: { exception: error?.name }, hints: ["This is a reader or catalogue bug; the host log has the traceback."] });
            }
          }
          if (dialect === null) return result;
          try {
            return lean(guides(result) ? await (await Promise.resolve().then(() => (init_deferred(), deferred_exports))).render(result, dialect, this.store) : result);
          } catch (err) {
            if (err instanceof ReaderError) return err.envelope();
            return errorEnvelope("INTERNAL", `rendering the answer failed: ${err.message}`);
          }
        }
        // == spec dialect ========================================================================
        list(options = {}) {
          const { path = null, tags = null, query = null, limit = 10, cursor = null, capability = null } = options;
          return this.run(() => listNode(this.store, path, tags, query, limit, cursor, capability), "spec");
        }
        searchNodes(query, limit = 5) {
          return this.run(() => searchNodes(this.store, query, limit), "spec");
        }
        searchToolByCategory(query, categoryPath, limit = 5, cursor = null) {
          return this.run(() => searchToolByCategory(this.store, query, categoryPath, limit, cursor), "spec");
        }
        expandTool(toolId) {
          return this.run(() => describe(this.store, this.runs, toolId), "spec");
        }
        // == namespaced dialect ==================================================================
        toolDescribe(name) {
          return this.run(() => describe(this.store, this.runs, name), "namespaced");
        }
        findTool(purpose, limit = 5) {
          return this.run(() => findTool(this.store, purpose, limit), "namespaced");
        }
      };
    }
  });

  // src/site.ts
  init_analyzer();
  init_catalog();
  var Reader = class {
    constructor(entryUrl) {
      this.catalog = null;
      this.entryUrl = new URL(entryUrl, document.baseURI).href;
    }
    open() {
      if (this.catalog === null) {
        this.catalog = Catalog.open(new URL(".", this.entryUrl).href);
        this.catalog.catch(() => this.catalog = null);
      }
      return this.catalog;
    }
    /** What find_tool shows (exact names first, no filler), as ``[{pointer, score}]``. */
    async search(query, limit) {
      const catalog = await this.open();
      const [page] = await catalog.searcher().answerTools(query.trim(), limit);
      return page.map(([pointer, score]) => ({ pointer, score }));
    }
    async files() {
      return Number((await this.open()).stats().memory_files);
    }
  };
  function pageOf(pointer) {
    const path = Array.isArray(pointer.path) ? pointer.path.map(String) : [];
    const page = path.length ? "nodes/" + encodeURIComponent(path.join(".")) + ".html" : "index.html";
    return page + "#" + encodeURIComponent(String(pointer.tool_id));
  }
  function attach(box) {
    const input = box.querySelector("input");
    const list = box.querySelector("ol");
    const status = box.querySelector(".tc-status");
    const entry = new URL(box.getAttribute("data-catalog") || "", document.baseURI);
    if (entry.origin !== location.origin || !input || !list || !status) return;
    const reader = new Reader(entry.href);
    const siteRoot = new URL("..", new URL(".", entry.href));
    let timer;
    let generation = 0;
    const run = async () => {
      const query = input.value.trim();
      const mine = ++generation;
      if (!query) {
        list.replaceChildren();
        status.textContent = "";
        return;
      }
      const started = performance.now();
      try {
        const results = await reader.search(query, 10);
        const files = await reader.files();
        if (mine !== generation) return;
        list.replaceChildren(
          ...results.map((r) => {
            const li = document.createElement("li");
            const a = document.createElement("a");
            const score = document.createElement("span");
            a.href = new URL(pageOf(r.pointer), siteRoot).href;
            a.textContent = String(r.pointer.tool_id);
            a.className = "tc-hit";
            score.className = "tc-score";
            score.textContent = r.score.toFixed(3);
            li.append(a, document.createTextNode(" \u2014 " + String(r.pointer.summary)), score);
            return li;
          })
        );
        status.textContent = `${results.length} result(s) in ${Math.round(performance.now() - started)} ms from ${files} file(s), each checked against its sha256.`;
      } catch (error) {
        if (mine !== generation) return;
        list.replaceChildren();
        status.textContent = "Search unavailable: " + error.message;
      }
    };
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(run, 120);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        clearTimeout(timer);
        void run();
      }
    });
  }
  function init() {
    const box = document.getElementById("toolcat-search");
    if (box) attach(box);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  window.toolcatSearch = { Reader, Catalog, analyzeWords: (text) => analyzeWords(text), stem };
})();
