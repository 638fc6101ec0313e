/* toolcat search in the browser: built from js/src/site.ts and the toolcat reader package (`npm run site` in js/); do not edit. */
"use strict";
(() => {
  var __defProp = Object.defineProperty;
  var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
  var __publicField = (obj, key, value) => __defNormalProp(obj, typeof key !== "symbol" ? key + "" : key, value);

  // src/analyzer.ts
  var ANALYZER_VERSION = "toolcat-analyzer-3";
  var WORD = /[\p{L}\p{N}]+/gu;
  var CAMEL = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|(?:(?![A-Za-z\p{Nd}])[\p{L}\p{N}])+/gu;
  var SHORT_ALNUM = /^(?=[\p{L}\p{N}]*(?:\p{L}|(?!\p{Nd})\p{N}))(?=[\p{L}\p{N}]*\p{Nd})[\p{L}\p{N}]+$/u;
  var SHORT_TOKEN_CHARS = 4;
  var ALPHA = /^\p{L}+$/u;
  var STOP_WORDS = new Set(
    "a an and are as at be by can could do does for from has have how i if in into is it its me my of on or our please so that the their them then there these this to us was we what when where which who will with would you your".split(" ")
  );
  var DEFAULT_THESAURUS = { pr: ["pull", "request"], prs: ["pull", "request"], repo: ["repository"], repos: ["repository"] };
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
  var memo = /* @__PURE__ */ new Map();
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
      let terms = memo.get(token);
      if (!terms) {
        terms = tokenTerms(token, thesaurus);
        if (memo.size > 5e4) memo.clear();
        memo.set(token, terms);
      }
      out.push(...terms);
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

  // src/errors.ts
  var ReaderError = class extends Error {
    constructor(code, message, options = {}) {
      super(message);
      __publicField(this, "code");
      __publicField(this, "details");
      __publicField(this, "hints");
      __publicField(this, "next_action");
      __publicField(this, "help_path");
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
      if (ch === "\\" || ch === quote) out += "\\" + ch;
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "	") out += "\\t";
      else if (code < 32 || code >= 127 && code <= 160 || code === 173) out += "\\x" + code.toString(16).padStart(2, "0");
      else if (code >= 55296 && code <= 57343) out += "\\u" + code.toString(16);
      else out += ch;
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
  function pyJson(value) {
    if (value === null || value === void 0) return "null";
    if (typeof value === "string") return JSON.stringify(value);
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : pyFloat(value);
    if (typeof value === "boolean") return String(value);
    if (Array.isArray(value)) return "[" + value.map(pyJson).join(", ") + "]";
    if (isObject(value)) {
      return "{" + Object.keys(value).sort(cmp).map((k) => JSON.stringify(k) + ": " + pyJson(value[k])).join(", ") + "}";
    }
    return "null";
  }
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
  function unique(items) {
    return [...new Set(items)];
  }

  // src/protocol.ts
  var OPS = ["list", "search", "search_nodes", "search_in", "describe", "call", "help", "read_resource"];
  var TOOL_OPS = {
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
  var HINT_NAMES = {
    spec: { list: "list", search: "search_tool_by_category", search_nodes: "search_nodes", search_in: "search_tool_by_category", describe: "expand_tool", call: "call_tool", help: "expand_tool", read_resource: "call_tool" },
    gateway: { list: "tool_help", search: "tool_help", search_nodes: "tool_help", search_in: "tool_help", describe: "tool_help", call: "tool_exec", help: "tool_help", read_resource: "tool_exec" },
    namespaced: { list: "tool_list", search: "find_tool", search_nodes: "find_tool", search_in: "find_tool", describe: "tool_describe", call: "tool_describe", help: "tool_describe", read_resource: "tool_describe" }
  };
  var HINT_WORDS = new RegExp("\\b(" + Object.keys(TOOL_OPS).sort((a, b) => b.length - a.length).join("|") + ")\\b|\\blist(?=\\()", "g");
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
  var words = (path) => path.replace(/[./_\s-]+/g, " ").trim() || "tools";
  var dotted = (args) => pathText(args.path ?? "").replaceAll("/", ".").replace(/^\.+|\.+$/g, "");
  async function spec(op, args, world) {
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
    if (await world.isNode(path)) return { op: "list", args: { path } };
    return { op: "search_tool_by_category", args: { query: words(path), category_path: "" } };
  }
  async function gateway(op, args, world) {
    if (op === "search" || op === "search_nodes" || op === "search_in") return { op: "tool_help", args: { query: args.query } };
    if (op === "describe") return { op: "tool_help", args: { path: args.tool_id } };
    if (op === "call") return { op: "tool_exec", args: { op: args.tool_id, args: args.args || {} } };
    if (op === "read_resource") return { op: "tool_exec", args: { op: args.tool_id, args: { resource: args.path } } };
    const path = dotted(args);
    if (!path) return { op: "tool_help", args: { path: "root" } };
    if (await world.resolve(path) !== null || await world.isGroup(path)) return { op: "tool_help", args: { path } };
    return { op: "tool_help", args: { query: words(path) } };
  }
  async function namespaced(op, args, world) {
    if (op === "search" || op === "search_nodes" || op === "search_in") return { op: "find_tool", args: { purpose: args.query } };
    if (op === "describe") return { op: "tool_describe", args: { name: args.tool_id } };
    if (op === "call" || op === "read_resource") {
      const toolId = await world.resolve(args.tool_id) ?? String(args.tool_id);
      return { op: await world.aliasOf(toolId), args: op === "call" ? args.args || {} : { resource: args.path } };
    }
    const path = dotted(args);
    if (!path) return { op: "tool_list", args: {} };
    const found = await world.resolve(path);
    if (found !== null) return { op: "tool_describe", args: { name: found } };
    if (await world.isGroup(path)) return { op: "tool_list", args: { namespace: path } };
    return { op: "find_tool", args: { purpose: words(path) } };
  }
  var RENDERERS = { spec, gateway, namespaced };
  async function renderAction(action, dialect, world) {
    const found = abstract(action);
    if (found === null) return null;
    const [op, args] = found;
    for (const key of ["query", "tool_id"]) {
      if (key in args && (typeof args[key] !== "string" || !args[key].trim())) {
        return key === "query" ? RENDERERS[dialect]("help", { path: "" }, world) : null;
      }
    }
    if (op === "call" && !isObject(args.args ?? {})) args.args = {};
    if (op === "read_resource" && typeof args.path !== "string") return null;
    return RENDERERS[dialect](op, args, world);
  }
  function renderHint(text, dialect) {
    if (typeof text !== "string") return text;
    return text.replace(HINT_WORDS, (word) => HINT_NAMES[dialect][TOOL_OPS[word] ?? "list"]);
  }
  async function renderOne(envelope, dialect, world) {
    const holder = isObject(envelope.error) ? envelope.error : envelope;
    if ("next_action" in holder) holder.next_action = await renderAction(holder.next_action, dialect, world);
    if (Array.isArray(holder.hints)) holder.hints = holder.hints.map((h) => renderHint(h, dialect));
    if (holder !== envelope && Array.isArray(envelope.hints)) envelope.hints = envelope.hints.map((h) => renderHint(h, dialect));
  }
  async function render(envelope, dialect, world) {
    await renderOne(envelope, dialect, world);
    return envelope;
  }
  function empty(value) {
    return value === null || value === void 0 || (typeof value === "string" || Array.isArray(value)) && !value.length || isObject(value) && !Object.keys(value).length;
  }
  function dropEmpty(data, keep = []) {
    return Object.fromEntries(Object.entries(data).filter(([k, v]) => keep.includes(k) || !empty(v)));
  }
  var KEEP = ["ok", "path", "next_cursor", "results", "matches", "tools", "nodes", "count", "help_path", "result", "args"];
  function lean(envelope) {
    return envelope.ok === true ? dropEmpty(envelope, KEEP) : { ...envelope };
  }

  // src/schemaText.ts
  var MAX_DEPTH = 8;
  function resolve(schema, root, depth = 0) {
    let node = schema;
    while (isObject(node) && typeof node.$ref === "string" && depth < MAX_DEPTH) {
      const ref = node.$ref;
      if (!ref.startsWith("#/")) break;
      let target = root;
      for (const part of ref.slice(2).split("/")) {
        const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
        target = isObject(target) && Object.hasOwn(target, key) ? target[key] : null;
      }
      if (!isObject(target)) break;
      node = { ...target, ...Object.fromEntries(Object.entries(node).filter(([k]) => k !== "$ref")) };
      depth += 1;
    }
    return isObject(node) ? node : {};
  }
  function valueType(value) {
    if (typeof value === "boolean") return "boolean";
    if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
    if (typeof value === "string") return "string";
    if (Array.isArray(value)) return "array";
    return value === null ? "null" : "object";
  }
  var union = (parts) => unique(parts).join(" | ") || "any";
  function typeText(schema, root, depth = 0) {
    root = root === void 0 ? schema : root;
    const node = resolve(schema, root, depth);
    if (depth >= MAX_DEPTH) return "any";
    const raw = node.type;
    let names;
    if (Array.isArray(raw)) names = raw.map(String);
    else if (typeof raw === "string") names = [raw];
    else {
      for (const key of ["anyOf", "oneOf"]) {
        const branches = node[key];
        if (Array.isArray(branches)) return union(branches.filter(isObject).map((b) => typeText(b, root, depth + 1)));
      }
      if (Array.isArray(node.enum)) names = node.enum.map(valueType);
      else if ("const" in node) names = [valueType(node.const)];
      else names = "properties" in node ? ["object"] : ["any"];
    }
    if (names.includes("array")) {
      const items = resolve(node.items, root, depth + 1);
      if (Object.keys(items).length) {
        const inner = typeText(items, root, depth + 1);
        names = names.map((n) => n === "array" ? inner.includes(" | ") ? `array of (${inner})` : `array of ${inner}` : n);
      }
    }
    return union(names);
  }
  var num = (v) => typeof v === "number" ? String(v) : typeof v === "string" ? v : v === null ? "None" : v === true ? "True" : v === false ? "False" : pyJson(v);
  function range(low, high, what) {
    const has = (v) => v !== null && v !== void 0;
    if (has(low) && has(high)) return `${what} ${num(low)}..${num(high)}`;
    if (has(low)) return `${what} \u2265 ${num(low)}`;
    if (has(high)) return `${what} \u2264 ${num(high)}`;
    return null;
  }
  function bounds(node) {
    const out = [];
    const low = "minimum" in node ? `${num(node.minimum)} \u2264 ` : "exclusiveMinimum" in node ? `${num(node.exclusiveMinimum)} < ` : "";
    const high = "maximum" in node ? ` \u2264 ${num(node.maximum)}` : "exclusiveMaximum" in node ? ` < ${num(node.exclusiveMaximum)}` : "";
    if (low || high) out.push(`${low}value${high}`);
    for (const [what, lo, hi] of [["length", "minLength", "maxLength"], ["items", "minItems", "maxItems"], ["keys", "minProperties", "maxProperties"]]) {
      const text = range(node[lo], node[hi], what);
      if (text) out.push(text);
    }
    if ("multipleOf" in node) out.push(`multiple of ${num(node.multipleOf)}`);
    if (node.uniqueItems === true) out.push("unique items");
    return out;
  }
  function schemaRules(schema, root) {
    root = root === void 0 ? schema : root;
    const node = resolve(schema, root);
    const parts = [];
    if (Array.isArray(node.enum)) parts.push("one of: " + node.enum.map(pyJson).join(", "));
    else if ("const" in node) parts.push(`exactly ${pyJson(node.const)}`);
    if ("default" in node) parts.push(`default: ${pyJson(node.default)}`);
    parts.push(...bounds(node));
    if (typeof node.format === "string") parts.push(`format: ${node.format}`);
    if (typeof node.pattern === "string") parts.push(`pattern: ${node.pattern}`);
    return parts;
  }
  function examplesText(schema) {
    const node = isObject(schema) ? schema : {};
    const values = Array.isArray(node.examples) ? [...node.examples] : [];
    if ("example" in node) values.push(node.example);
    return values.map(pyJson);
  }

  // src/sha256.ts
  var K = new Uint32Array([
    1116352408,
    1899447441,
    3049323471,
    3921009573,
    961987163,
    1508970993,
    2453635748,
    2870763221,
    3624381080,
    310598401,
    607225278,
    1426881987,
    1925078388,
    2162078206,
    2614888103,
    3248222580,
    3835390401,
    4022224774,
    264347078,
    604807628,
    770255983,
    1249150122,
    1555081692,
    1996064986,
    2554220882,
    2821834349,
    2952996808,
    3210313671,
    3336571891,
    3584528711,
    113926993,
    338241895,
    666307205,
    773529912,
    1294757372,
    1396182291,
    1695183700,
    1986661051,
    2177026350,
    2456956037,
    2730485921,
    2820302411,
    3259730800,
    3345764771,
    3516065817,
    3600352804,
    4094571909,
    275423344,
    430227734,
    506948616,
    659060556,
    883997877,
    958139571,
    1322822218,
    1537002063,
    1747873779,
    1955562222,
    2024104815,
    2227730452,
    2361852424,
    2428436474,
    2756734187,
    3204031479,
    3329325298
  ]);
  function hex(bytes) {
    let out = "";
    for (const b of bytes) out += b.toString(16).padStart(2, "0");
    return out;
  }
  function sha256Sync(data) {
    const length = data.length;
    const padded = new Uint8Array(length + 9 + 63 >> 6 << 6);
    padded.set(data);
    padded[length] = 128;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(length / 536870912));
    view.setUint32(padded.length - 4, length << 3 >>> 0);
    const h = new Uint32Array([1779033703, 3144134277, 1013904242, 2773480762, 1359893119, 2600822924, 528734635, 1541459225]);
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
    return hex(out);
  }
  async function sha256(data) {
    const subtle = globalThis.crypto?.subtle;
    if (!subtle) return sha256Sync(data);
    return hex(new Uint8Array(await subtle.digest("SHA-256", data)));
  }
  var encoder = new TextEncoder();
  async function lookupBucket(key, buckets) {
    return parseInt((await sha256(encoder.encode(key))).slice(0, 8), 16) % buckets;
  }

  // src/source.ts
  var MAX_ENTRY_BYTES = 1024 * 1024;
  var MAX_FILE_BYTES = 64 * 1024 * 1024;
  var MAX_REF_PATH = 1024;
  var MAX_REDIRECTS = 3;
  var BACKOFF_SECONDS = 0.1;
  var MAX_BACKOFF_SECONDS = 1;
  var REDIRECT_HINT = `The reader follows redirects only within the base URL's scheme, host and port, at most ${MAX_REDIRECTS} hops; open the final URL directly.`;
  var Retry = class extends Error {
  };
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
    if (data.length !== size || got !== digest) {
      throw new ReaderError(
        "INTEGRITY",
        `${where} does not match the hash its parent holds (expected sha256 ${digest.slice(0, 16)}\u2026 and ${size} bytes, got ${got.slice(0, 16)}\u2026 and ${data.length} bytes); it was not used`,
        {
          details: { path, expected_sha256: digest, got_sha256: got, expected_bytes: size, got_bytes: data.length },
          hints: [
            "The file was modified or truncated after the build, or a cache/CDN serves a stale copy.",
            "Rebuild and redeploy the whole build folder; clear the reader cache if it persists."
          ]
        }
      );
    }
    return data;
  }
  function tooLarge(url, limit, why) {
    return new ReaderError("INTEGRITY", `${url} is larger than expected (${limit} bytes: ${why}); it was not used`, {
      details: { url, limit_bytes: limit },
      hints: [
        "The host serves another file than the catalogue names, or a compressed body inflates past it (a gzip bomb); the reader stopped reading there."
      ]
    });
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
  var sleep = (seconds) => new Promise((resolve2) => setTimeout(resolve2, seconds * 1e3));
  var HttpSource = class {
    constructor(baseUrl, options = {}) {
      __publicField(this, "baseUrl");
      __publicField(this, "location");
      __publicField(this, "stats", { requests: 0, round_trips: 0, bytes_downloaded: 0, bytes_decoded: 0, cache_hits: 0, not_modified: 0 });
      __publicField(this, "timeout");
      __publicField(this, "retries");
      __publicField(this, "maxParallel");
      __publicField(this, "maxFileBytes");
      __publicField(this, "fetchFn");
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
      if (status === 304) {
        const url = this.url("catalog.json");
        throw new ReaderError("UNAVAILABLE", `${url} answered 304 Not Modified to a request without If-None-Match`, {
          details: { url, status: 304 },
          hints: ["The host or a cache in between answers 304 to unconditional requests; fix its configuration."]
        });
      }
      return body;
    }
    /** The verified bytes of one ref (or, for a pending ref, its unverified bytes: the caller checks them). */
    async fetch(ref, batched = false) {
      if (isObject(ref) && !("sha256" in ref) && "max_bytes" in ref) {
        const { path: path2, max_bytes: limit } = ref;
        if (!cleanPath(path2) || !Number.isInteger(limit) || limit < 0) {
          throw new ReaderError("INTEGRITY", `malformed pending ref ${shown(ref, 200)}`, { details: { ref: shown(ref, 200) } });
        }
        return (await this.get(path2, Math.min(limit, this.maxFileBytes), batched))[1];
      }
      const [path, digest, size] = checkRef(ref);
      const url = this.url(path);
      if (size > this.maxFileBytes) {
        throw new ReaderError(
          "INTEGRITY",
          `the ref to ${path} promises ${size} bytes, above the reader's cap of ${this.maxFileBytes} bytes (max_file_bytes); ${url} was not fetched`,
          {
            details: { path, url, promised_bytes: size, cap_bytes: this.maxFileBytes },
            hints: [
              "A toolcat build keeps its files small; a huge promise means a malformed or hostile catalogue.",
              "If the catalogue is yours and the file is legitimately this large, open it with a larger max_file_bytes."
            ]
          }
        );
      }
      const [, body] = await this.get(path, size, batched);
      return verify(body, path, digest, size, url);
    }
    /** Several refs at once, at most ``maxParallel`` in flight: one round trip. Each slot holds bytes or the error. */
    async fetchMany(refs) {
      const one = async (ref, batched) => {
        try {
          return await this.fetch(ref, batched);
        } catch (err) {
          if (err instanceof ReaderError) return err;
          throw err;
        }
      };
      if (refs.length < 2 || this.maxParallel === 1) {
        const out2 = [];
        for (const ref of refs) out2.push(await one(ref, false));
        return out2;
      }
      const before = this.stats.requests;
      const out = new Array(refs.length);
      let next = 0;
      const worker = async () => {
        while (next < refs.length) {
          const index = next++;
          out[index] = await one(refs[index], true);
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.maxParallel, refs.length) }, worker));
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
      throw new ReaderError("UNAVAILABLE", `could not fetch ${url} after ${this.retries + 1} attempt(s): ${last}`, {
        details: { url, attempts: this.retries + 1, last_error: last, timeout_s: this.timeout },
        hints: ["The server is down, slow or dropping connections; retry later or raise timeout/retries."]
      });
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
            if (origin(response.url) !== origin(this.baseUrl)) this.refuse(url, response.url, "it leaves the catalogue's origin (scheme, host and port)");
          }
          const status = response.status;
          if (status >= 300 && status < 400 && status !== 304) {
            const location2 = response.headers.get("location");
            await response.body?.cancel().catch(() => void 0);
            if (!location2) {
              throw new ReaderError("UNAVAILABLE", `${url} answered a redirect (HTTP ${status}) the reader does not follow (without a Location)`, {
                details: { url, status, location: "" },
                hints: [REDIRECT_HINT]
              });
            }
            const target = new URL(location2, current).href;
            if (origin(target) !== origin(this.baseUrl)) this.refuse(url, target, "it leaves the catalogue's origin (scheme, host and port)");
            if (hop + 1 > MAX_REDIRECTS) this.refuse(url, target, `it is hop ${hop + 1}, more than ${MAX_REDIRECTS}`);
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
            throw new ReaderError("UNAVAILABLE", `${url} answered HTTP ${status}` + (status === 404 ? " (not found)" : ""), {
              details: { url, status },
              hints: ["Check the base URL (it must be the folder holding catalog.json) and that the whole build folder was deployed."]
            });
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
    refuse(url, target, reason2) {
      throw new ReaderError("UNAVAILABLE", `${url} redirects to ${target.slice(0, 300)}, which the reader does not follow: ${reason2}`, {
        details: { url, location: target.slice(0, 300) },
        hints: [REDIRECT_HINT]
      });
    }
    /** A 2xx body read chunk by chunk, never past ``limit`` decoded bytes (nor past its wire limit). */
    async readBody(url, response, limit, why) {
      const encoding = (response.headers.get("content-encoding") ?? "").trim().toLowerCase();
      if (!["", "identity", "gzip", "x-gzip"].includes(encoding)) {
        await response.body?.cancel().catch(() => void 0);
        throw new ReaderError("UNAVAILABLE", `${url} answered with Content-Encoding ${shown(encoding.slice(0, 80))}, which the reader cannot decode`, {
          details: { url, content_encoding: encoding.slice(0, 200) },
          hints: ["The reader asks for gzip or identity; configure the host to serve one of them."]
        });
      }
      const text = (response.headers.get("content-length") ?? "").trim();
      const declared = /^\d+$/.test(text) ? Number(text.slice(0, 20)) : null;
      if (declared !== null && declared > wireLimit(limit)) {
        await response.body?.cancel().catch(() => void 0);
        throw tooLarge(url, limit, why);
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
          throw tooLarge(url, limit, why);
        }
        chunks.push(value);
      }
      const body = new Uint8Array(received);
      let at = 0;
      for (const chunk of chunks) {
        body.set(chunk, at);
        at += chunk.length;
      }
      this.stats.bytes_downloaded += encoding && encoding !== "identity" && declared !== null ? declared : received;
      this.stats.bytes_decoded += received;
      return body;
    }
  };

  // src/store.ts
  var SUPPORTED_FORMAT_VERSION = 1;
  var MAX_NAME = 300;
  var SUGGEST_WALK_LIMIT = 2e3;
  var MAX_NODE_DEPTH = 64;
  var MAX_WALK_NODES = 1e6;
  var decoder = new TextDecoder("utf-8", { fatal: false });
  var SHAPES = {
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
  var NULLABLE = /* @__PURE__ */ new Set(["tool.handler", "tool.policy", "tool.aliases", "tool.examples", "tool.tags", "manifest.index", "manifest.prompts", "manifest.namespace_index", "manifest.lookup", "manifest.counts"]);
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
  function closeNames(word, names, n = 5) {
    const found = closeMatches(word, names, n, 0.5);
    const prefixed = names.filter((name) => name.startsWith(word) || word.startsWith(name + ".")).sort(cmp).slice(0, n);
    return unique([...found, ...prefixed]).slice(0, n);
  }
  var fold = (text) => text.toLowerCase();
  function childName(asked, children) {
    if (children.has(asked)) return asked;
    const folded = fold(asked);
    for (const [name, child] of children) if (fold(name) === folded || fold(String(child.title ?? "")) === folded) return name;
    return null;
  }
  function deprecationNote(spec2) {
    const value = spec2.deprecated;
    if (typeof value === "string" && value.trim()) return `${spec2.tool_id} is deprecated: ${value}`;
    return `${spec2.tool_id} is deprecated; search for its replacement before relying on it`;
  }
  var Store = class {
    constructor(source, pinned, pin) {
      this.source = source;
      this.pinned = pinned;
      this.pin = pin;
      __publicField(this, "entry", {});
      __publicField(this, "manifest", {});
      __publicField(this, "registry_version", "");
      __publicField(this, "json", /* @__PURE__ */ new Map());
      __publicField(this, "pending", /* @__PURE__ */ new Map());
      __publicField(this, "prefetchErrors", /* @__PURE__ */ new Map());
      __publicField(this, "nodes", /* @__PURE__ */ new Map());
      __publicField(this, "pointers", null);
      __publicField(this, "searcherInstance", null);
      // -- the search index -----------------------------------------------------------------------
      __publicField(this, "searcherFactory", null);
    }
    // -- the entry and the manifest ------------------------------------------------------------
    async readEntry() {
      const raw = await this.source.readEntry();
      const location2 = this.source.location;
      let entry;
      try {
        entry = JSON.parse(decoder.decode(raw));
      } catch (err) {
        throw new ReaderError("UNAVAILABLE", `${location2}: catalog.json is not valid JSON (${err.message})`, {
          hints: ["Point the reader at a toolcat build folder or its base URL."]
        });
      }
      if (!isObject(entry) || entry.artifact !== "catalog" || entry.format !== "toolcat") {
        throw new ReaderError("UNAVAILABLE", `${location2}: catalog.json is not a toolcat entry point`, {
          hints: ["Point the reader at a toolcat build folder or its base URL."]
        });
      }
      const found = entry.format_version;
      if (found !== SUPPORTED_FORMAT_VERSION) {
        throw new ReaderError("UNAVAILABLE", `${location2} has format_version ${shown(found)}; this reader reads ${SUPPORTED_FORMAT_VERSION}`, {
          details: { format_version: found ?? null, supported: SUPPORTED_FORMAT_VERSION },
          hints: ["Upgrade the toolcat reader or rebuild the catalogue with this version."]
        });
      }
      checkShape("catalog.json", entry);
      return entry;
    }
    manifestRef(entry) {
      const versions = (entry.versions ?? []).filter(isObject).map((v) => [String(v.registry_version), v.manifest ?? {}]);
      let candidates;
      if (this.pinned === null) candidates = [[String(entry.registry_version), entry.manifest ?? {}], ...versions];
      else {
        candidates = versions.filter(([v]) => v === this.pinned);
        if (!candidates.length) {
          throw new ReaderError("UNAVAILABLE", `registry_version '${this.pinned}' is not published at ${this.source.location}`, {
            details: { requested: this.pinned, available: versions.map(([v]) => v) },
            hints: ["Pin one of the available versions, or open without version= to read the latest."]
          });
        }
      }
      if (this.pin === null) return candidates[0];
      for (const [version, ref] of candidates) if (isObject(ref) && ref.sha256 === this.pin) return [version, ref];
      const first = candidates[0];
      const got = isObject(first[1]) ? first[1].sha256 ?? null : null;
      throw new ReaderError(
        "INTEGRITY",
        `${this.source.location} does not publish the pinned manifest: expected sha256 ${this.pin}, got ${got ?? "None"}` + (this.pinned !== null ? ` (registry_version ${this.pinned})` : ""),
        {
          details: { expected_sha256: this.pin, got_sha256: got, registry_version: first[0] },
          hints: [
            "The host serves another catalogue than the one pinned; nothing from it was used.",
            "Pin a new catalogue only after reviewing it: pin is the sha256 of its manifest file, the 'sha256' of the 'manifest' ref in catalog.json."
          ]
        }
      );
    }
    async load(entry) {
      const [version, ref] = this.manifestRef(entry);
      const manifest = await this.fetchJson(ref);
      if (!isObject(manifest) || manifest.artifact !== "manifest") throw new ReaderError("INTEGRITY", "the manifest is not a toolcat manifest");
      if (manifest.format_version !== SUPPORTED_FORMAT_VERSION || manifest.registry_version !== version) {
        throw new ReaderError("INTEGRITY", `the manifest does not belong to registry_version ${version}`, {
          details: { manifest_version: manifest.registry_version ?? null }
        });
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
    async prefetch(refs) {
      if (!this.source.concurrent) return;
      const wanted = [...new Map(refs.filter((r) => isObject(r) && typeof r.sha256 === "string" && !this.json.has(r.sha256)).map((r) => [r.sha256, r])).values()];
      const pending = refs.filter((r) => isObject(r) && "max_bytes" in r && !("sha256" in r));
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
      const refs = lookup.refs ?? [];
      const count = lookup.buckets ?? 0;
      if (!refs.length || !Number.isInteger(count) || count < 1) return null;
      const entries = (await this.fetchJson(refs[await lookupBucket(name, count)])).entries ?? {};
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
      if (found === null) {
        const suggestions = await this.suggestTools(name);
        throw new ReaderError("TOOL_NOT_FOUND", `no tool named ${shown(name, 120)} (checked canonical ids, provider aliases and skill names)`, {
          details: { suggestions },
          hints: [suggestions.length ? `Did you mean ${suggestions.join(", ")}?` : "Search for the tool by purpose, or browse the groups."],
          next_action: suggestions.length ? { op: "describe", args: { tool_id: suggestions[0] } } : { op: "search", args: { query: name.replaceAll(".", " ").replaceAll("_", " ") } },
          help_path: "root"
        });
      }
      return [String(found.tool_id), await this.fetchJson(found.spec)];
    }
    async suggestTools(name) {
      let ids = [];
      const searcher = this.searcher();
      if (searcher !== null) {
        try {
          const hits = await searcher.rankTools(name.replaceAll(".", " ").replaceAll("_", " "), { limit: 5 });
          ids = hits.map((h) => String(h[0].tool_id));
        } catch {
        }
      }
      const counts = this.manifest.counts ?? {};
      if (Number(counts.tools ?? 0) + Number(counts.skills ?? 0) <= SUGGEST_WALK_LIMIT) {
        ids = unique([...closeNames(name, [...(await this.allPointers()).keys()].sort(cmp)), ...ids]);
      }
      return ids.slice(0, 5);
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
        if (name === null) {
          const where = walked.join("/") || "root";
          const names = [...children.keys()].sort(cmp);
          let close = closeNames(asked.toLowerCase(), names, 3);
          if (!close.length) close = closeNames(asked, names, 3);
          const suggestions = close.map((c) => [...walked, c].join("/"));
          throw new ReaderError("UNKNOWN_PATH", `node '${path.join("/")}' does not exist: ${where} has no child '${asked}'`, {
            details: { path: [...path], children: names, suggestions },
            hints: [`Children of ${where}: ${names.join(", ") || "none"}.`],
            next_action: { op: "list", args: { path: suggestions.length ? suggestions[0] : walked.join("/") } }
          });
        }
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
    async isNode(path) {
      try {
        await this.node(nodePath(path));
        return true;
      } catch (err) {
        if (err instanceof ReaderError) return false;
        throw err;
      }
    }
    async isGroup(path) {
      const namespace = path.split(".", 1)[0];
      if (!(this.manifest.namespaces ?? []).map(String).includes(namespace)) return false;
      if (path === namespace) return true;
      try {
        const [groups] = await this.namespaceTree(namespace);
        return groups.has(path);
      } catch (err) {
        if (err instanceof ReaderError) return false;
        throw err;
      }
    }
    async aliasOf(toolId) {
      let spec2;
      try {
        [, spec2] = await this.spec(toolId);
      } catch (err) {
        if (err instanceof ReaderError) return toolId.replaceAll(".", "_");
        throw err;
      }
      const aliases = isObject(spec2.aliases) ? spec2.aliases : {};
      return String(aliases.anthropic || aliases.openai || toolId.replaceAll(".", "_"));
    }
    /** The pointers of a paged shard (node or namespace): its first page, then the others (fetched together). */
    async nodeTools(shard) {
      await this.prefetch(shard.pages ?? []);
      const tools = [...shard.tools ?? []];
      for (const ref of shard.pages ?? []) tools.push(...(await this.fetchJson(ref)).tools ?? []);
      return tools;
    }
    async prefetchSubtree(path) {
      if (!this.source.concurrent) return;
      let level = [await this.node(path)];
      const seen = /* @__PURE__ */ new Set();
      for (let depth = 0; depth < MAX_NODE_DEPTH && level.length; depth++) {
        const children = level.flatMap((shard) => (shard.children ?? []).filter((c) => isObject(c) && isObject(c.ref) && !seen.has(String(c.ref.sha256))).map((c) => c.ref));
        children.forEach((ref) => seen.add(String(ref.sha256)));
        await this.prefetch([...children, ...level.flatMap((shard) => shard.pages ?? [])]);
        const next = [];
        for (const ref of children) {
          const shard = await this.fetchJson(ref);
          if (isObject(shard)) next.push(shard);
        }
        level = next;
      }
    }
    /** Every node shard under ``path``, depth first (fetched a level at a time). */
    async walk(path) {
      await this.prefetchSubtree(path);
      const out = [];
      const stack = [path];
      while (stack.length) {
        const current = stack.pop();
        const shard = await this.node(current);
        if (out.length + 1 > MAX_WALK_NODES || current.length > MAX_NODE_DEPTH) {
          throw new ReaderError("INTEGRITY", `the node tree under ${path.join("/") || "root"} is deeper than ${MAX_NODE_DEPTH} levels or has more than ${MAX_WALK_NODES} nodes`, {
            hints: ["The host serves a node tree no toolcat build writes; pin the catalogue (pin='sha256:...') or report it to its publisher."]
          });
        }
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
    async subtreePointers(path) {
      const out = /* @__PURE__ */ new Map();
      for (const [, shard] of await this.walk(path)) {
        for (const pointer of await this.nodeTools(shard)) if (!out.has(pointer.tool_id)) out.set(pointer.tool_id, pointer);
      }
      return out;
    }
    get pointersLoaded() {
      return this.pointers !== null;
    }
    async namespacePointers(namespace) {
      let refs = null;
      if (this.pointers === null && isObject(this.manifest.namespace_index)) refs = (await this.fetchJson(this.manifest.namespace_index)).namespaces;
      if (!isObject(refs)) {
        const all = await this.allPointers();
        return new Map([...all].filter(([k]) => k.split(".", 1)[0] === namespace));
      }
      const ref = Object.hasOwn(refs, namespace) ? refs[namespace] : null;
      if (!isObject(ref)) return /* @__PURE__ */ new Map();
      const tools = await this.nodeTools(await this.fetchJson(ref));
      return new Map(tools.sort((a, b) => cmp(a.tool_id, b.tool_id)).map((p) => [p.tool_id, p]));
    }
    async allPointers() {
      if (this.pointers === null) {
        const pointers = await this.subtreePointers([]);
        this.pointers = new Map([...pointers].sort((a, b) => cmp(a[0], b[0])));
      }
      return this.pointers;
    }
    async namespaceTree(namespace) {
      const ops = namespace !== void 0 ? await this.namespacePointers(namespace) : await this.allPointers();
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
  };
  var MAX_LIMIT = 50;
  var MAX_PATH_DEPTH = 32;
  var ROOT_NAMES = ["", "root", "/", "."];
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
  function checkTags(tags) {
    if (tags === null || tags === void 0) return [];
    const list = typeof tags === "string" ? [tags] : tags;
    if (!Array.isArray(list) || !list.every((t) => typeof t === "string")) throw bad(`'tags' must be a list of strings, got ${shown(tags)}`);
    return list.map((t) => t.toLowerCase());
  }
  function checkBool(value, name) {
    if (typeof value !== "boolean") throw bad(`'${name}' must be true or false, got ${shown(value)}`);
    return value;
  }
  async function cursorKey(...parts) {
    return (await sha256(new TextEncoder().encode(pyTupleRepr(parts)))).slice(0, 8);
  }
  function pyTupleRepr(parts) {
    const one = (v) => Array.isArray(v) ? "[" + v.map(one).join(", ") + "]" : shown(v, 1 << 30);
    return "(" + parts.map(one).join(", ") + (parts.length === 1 ? ",)" : ")");
  }
  function encodeCursor(offset, key) {
    return `o:${offset}` + (key ? `:${key}` : "");
  }
  function decodeCursor(cursor, key) {
    if (cursor === null || cursor === void 0) return 0;
    const parts = typeof cursor === "string" && cursor.length <= 100 ? cursor.split(":") : [];
    if (parts.length < 2 || parts[0] !== "o" || !/^[0-9]+$/.test(parts[1])) {
      throw bad(`cursor ${shown(cursor)} is not one this reader returned; omit it to start over`, { details: { cursor: shown(cursor, 40) } });
    }
    const rest = parts.slice(2);
    if (JSON.stringify(rest) !== JSON.stringify(key ? [key] : [])) {
      throw bad("this cursor belongs to another query or category", {
        details: { cursor: shown(cursor, 40) },
        hints: ["Pass back the next_cursor of the previous page with the same query and category."]
      });
    }
    return Number(parts[1]);
  }

  // src/search.ts
  var MIN_CHAR_ONLY_SCORE = 0.1;
  var BOUND_SLACK = 1e-9;
  var MIN_RELEVANCE = 0.06;
  var MIN_RELATIVE = 0.25;
  var NAME_SHORT_PARTS = 3;
  var NAME_MAX_PARTS = 12;
  var NAME_MAX_CHARS = 200;
  var NAME_PARTS = /[\p{L}\p{N}]+/gu;
  var Posting = class {
    constructor(idf, ids, weights) {
      this.idf = idf;
      this.ids = ids;
      this.weights = weights;
      __publicField(this, "maxWeight");
      __publicField(this, "byDocMap", null);
      this.maxWeight = weights.length ? Math.max(...weights) : 0;
    }
    byDoc() {
      if (!this.byDocMap) this.byDocMap = new Map(this.ids.map((id, i) => [id, this.weights[i]]));
      return this.byDocMap;
    }
  };
  var Part = class {
    constructor(meta) {
      this.meta = meta;
      __publicField(this, "nDocs");
      __publicField(this, "spaces");
      __publicField(this, "firsts");
      __publicField(this, "docShardSize");
      __publicField(this, "docShards");
      __publicField(this, "docPages");
      __publicField(this, "delta");
      __publicField(this, "masked", /* @__PURE__ */ new Set());
      __publicField(this, "deleted", /* @__PURE__ */ new Set());
      __publicField(this, "deltaSpaces", /* @__PURE__ */ new Map());
      __publicField(this, "deltaFirsts", /* @__PURE__ */ new Map());
      __publicField(this, "deltaDocFile", /* @__PURE__ */ new Map());
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
    deltaShardRef(space, term) {
      const s = this.deltaSpaces.get(space);
      if (!s) return null;
      const index = bisectRight(this.deltaFirsts.get(space), term, cmp) - 1;
      if (index < 0 || cmp(term, s.shards[index].last) > 0) return null;
      return s.shards[index].ref;
    }
  };
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
  function requireQuery(text, name) {
    if (typeof text !== "string" || !text.trim()) {
      throw new ReaderError("BAD_REQUEST", `'${name}' must be a non-empty string`, {
        details: { got: pyReprShort(text) },
        hints: [`Say what you need in a few words, e.g. ${name}='read a file from a bucket'.`]
      });
    }
    return text.trim();
  }
  function pyReprShort(value) {
    return (value === null || value === void 0 ? "None" : typeof value === "string" ? `'${value}'` : JSON.stringify(value)).slice(0, 60);
  }
  function reason(pointer, terms) {
    if (!terms.length) return "similar spelling (character n-grams)";
    const fields = [
      ["id", new Set(analyzeWords(pointer.tool_id))],
      ["summary", new Set(analyzeWords(pointer.summary))],
      ["tags", new Set(analyzeWords(pointer.tags.join(" ")))]
    ];
    const parts = terms.map((term) => {
      const where = fields.filter(([, words2]) => words2.has(term)).map(([name]) => name);
      return `${term} (${(where.length ? where : ["text"]).join(", ")})`;
    });
    return "matched " + parts.join("; ");
  }
  var Searcher = class {
    constructor(store) {
      this.store = store;
      __publicField(this, "manifest");
      __publicField(this, "bytesRead", 0);
      __publicField(this, "cache", /* @__PURE__ */ new Map());
      __publicField(this, "postings", /* @__PURE__ */ new Map());
      __publicField(this, "interned", /* @__PURE__ */ new Map());
      __publicField(this, "meta", null);
      __publicField(this, "parts", /* @__PURE__ */ new Map());
      __publicField(this, "pendingPages", []);
      __publicField(this, "thesaurus");
      __publicField(this, "concurrent");
      this.manifest = store.manifest;
      this.concurrent = store.source.concurrent;
    }
    /** Why this reader answers lexically: the semantic tier is not part of the TypeScript reader (yet). */
    get searchTier() {
      return "vectors" in this.manifest ? "lexical: the build has vectors, but the TypeScript reader has no embedding model (the semantic tier is Python-only for now)" : "lexical: the build has no vectors";
    }
    // -- fetching -------------------------------------------------------------------------------
    async fetch(ref) {
      const digest = ref.sha256;
      if (!this.cache.has(digest)) {
        this.cache.set(digest, await this.store.fetchJson(ref));
        this.bytesRead += Number(ref.bytes ?? 0);
      }
      return this.cache.get(digest);
    }
    async part(name) {
      const known = this.parts.get(name);
      if (known) return known;
      if (this.meta === null) {
        const ref = this.manifest.index;
        if (!isObject(ref)) {
          throw new ReaderError("UNAVAILABLE", "this build has no search index", {
            hints: ["Rebuild the catalogue with a toolcat that writes the index (manifest key 'index')."],
            next_action: { op: "list", args: {} }
          });
        }
        const meta = await this.fetch(ref);
        if (meta.analyzer?.version !== ANALYZER_VERSION) {
          throw new ReaderError("UNAVAILABLE", "the search index was built with another analyzer version", {
            details: { index: meta.analyzer?.version ?? null, reader: ANALYZER_VERSION },
            hints: ["Use a reader that matches the toolcat version that built the catalogue."]
          });
        }
        this.meta = meta;
        this.thesaurus = meta.analyzer?.thesaurus?.table ?? void 0;
      }
      let part;
      try {
        part = new Part(this.meta[name]);
      } catch (err) {
        throw new ReaderError("INTEGRITY", `the search index meta's '${name}' part is not what a build writes (${err.message})`, {
          details: { part: name },
          hints: ["The host serves files a toolcat build did not write; rebuild and republish the catalogue."]
        });
      }
      this.parts.set(name, part);
      return part;
    }
    words(text) {
      return analyzeWords(text, this.thesaurus);
    }
    async shardRef(part, space, term, fetchPage = true) {
      const index = bisectRight(part.firsts.get(space.name), term, cmp) - 1;
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
    async pagedRef(pages, number, fetchPage) {
      const pageRef = pages.pages[Math.floor(number / Number(pages.per_page))];
      if (!fetchPage && !this.cache.has(pageRef.sha256)) {
        this.pendingPages.push(pageRef);
        return [{ path: `${pages.folder}/${pages.prefix}${number}.json`, max_bytes: Number(pages.max_bytes) }, null];
      }
      const page = await this.fetch(pageRef);
      return [pageRefs(page)[number - Number(page.first)], page];
    }
    async entry(part, space, term) {
      const ref = await this.shardRef(part, space, term);
      if (ref === null) return null;
      const terms = (await this.fetch(ref)).terms;
      return Object.hasOwn(terms, term) ? terms[term] : null;
    }
    async prefetch(refs) {
      if (!this.concurrent) return;
      const missing = refs.filter((r) => isObject(r) && !this.cache.has(r.sha256));
      if (missing.length > 1) await this.store.prefetch(missing);
    }
    async prefetchQuery(partName, query, extra = []) {
      if (!this.concurrent) return;
      const part = await this.part(partName);
      const spaces = new Map(part.spaces.map((s) => [s.name, s]));
      const words2 = unique(this.words(query));
      this.pendingPages = [];
      const refs = [];
      for (const word of words2) refs.push(await this.shardRef(part, spaces.get("words"), word, false));
      refs.push(...extra);
      if (part.delta !== null) {
        for (const word of words2) refs.push(part.deltaShardRef("words", word));
        for (const word of words2) for (const gram of wordNgrams(word)) refs.push(part.deltaShardRef("chars", gram));
      }
      if (!part.meta.bundles) {
        for (const gram of unique(analyzeChars(query, this.thesaurus))) refs.push(await this.shardRef(part, spaces.get("chars"), gram, false));
      }
      await this.prefetch([...this.pendingPages, ...refs]);
      if (part.meta.bundles) {
        const unknown = [];
        for (const word of words2) if (await this.entry(part, spaces.get("words"), word) === null) unknown.push(word);
        this.pendingPages = [];
        const more = [];
        for (const gram of unknown.flatMap(wordNgrams)) more.push(await this.shardRef(part, spaces.get("chars"), gram, false));
        await this.prefetch([...this.pendingPages, ...more]);
      }
    }
    async docs(partName, hits) {
      const part = await this.part(partName);
      this.pendingPages = [];
      const refs = [];
      for (const [docId] of hits) refs.push(await this.docRef(part, docId, false));
      await this.prefetch([...this.pendingPages, ...refs]);
      const out = [];
      for (const [docId] of hits) out.push(await this.doc(part, docId));
      return out;
    }
    async pointed(hits, digits) {
      const docs = await this.docs("tools", hits);
      return hits.map(([, score, terms], i) => [docs[i].pointer, digits === void 0 ? score : pyRound(score, digits), terms]);
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
    async posting(partName, part, space, term) {
      const key = `${partName}\0${space.name}\0${term}`;
      if (!this.postings.has(key)) {
        const entry = await this.entry(part, space, term);
        const posting = entry === null ? null : this.decode(space.name, entry);
        this.postings.set(key, await this.withDelta(part, space.name, term, posting));
      }
      return this.postings.get(key);
    }
    async withDelta(part, spaceName, term, posting) {
      if (part.delta === null) return posting;
      const ref = part.deltaShardRef(spaceName, term);
      let entry = null;
      if (ref !== null) {
        const terms = (await this.fetch(ref)).terms;
        entry = Object.hasOwn(terms, term) ? terms[term] : null;
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
    async spaceTerms(partName, part, space, query) {
      if (space.name === "chars" && part.meta.bundles) await this.bundledNgrams(partName, part, query);
      const found = /* @__PURE__ */ new Map();
      const tokens = space.name === "words" ? this.words(query) : analyzeChars(query, this.thesaurus);
      for (const term of unique(tokens)) {
        const posting = await this.posting(partName, part, space, term);
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
      return (await this.pagedRef(part.docPages, shardNo, fetchPage))[0];
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
      for (const space of part.spaces) {
        const scale = Number(space.weight);
        for (const [term, q, posting] of await this.spaceTerms(partName, part, space, query)) {
          const factor = scale * q;
          posting.ids.forEach((id, i) => total.set(id, (total.get(id) ?? 0) + factor * posting.weights[i]));
          if (space.name === "words") for (const id of posting.ids) matched.set(id, [...matched.get(id) ?? [], term]);
        }
      }
      return [total, matched];
    }
    async ranked(partName, query, allowed = null, limit = null) {
      if (limit !== null) return this.topK(partName, query, limit, allowed);
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
      for (const space of part.spaces) {
        const scale = Number(space.weight);
        for (const [term, q, posting] of await this.spaceTerms(partName, part, space, query)) {
          const [factor, first] = factors.get(posting) ?? [0, term];
          factors.set(posting, [factor + scale * q, first]);
          if (space.name === "words") wordTerms.push([term, posting]);
        }
      }
      const terms = [...factors].map(([posting, [factor, term]]) => [factor * posting.maxWeight, factor, term, posting]);
      terms.sort((a, b) => b[0] - a[0] || cmp(a[2], b[2]));
      let remaining = 0;
      for (const t of terms) remaining += t[0];
      let done = 0;
      let total = /* @__PURE__ */ new Map();
      const wordDocs = /* @__PURE__ */ new Set();
      const words2 = new Set(wordTerms.map(([, p]) => p));
      let position = 0;
      let kth = -1;
      while (position < terms.length) {
        const [bound, factor, , posting] = terms[position];
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
      if (position < terms.length) {
        total = new Map([...total].filter(([, s]) => s + remaining + BOUND_SLACK >= kth));
        for (const [, factor, , posting] of terms.slice(position)) {
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
      if (entry === null) throw await this.unknownPath(path, query);
      let [low, high] = entry.range;
      let extraIds;
      if (directOnly) {
        high = low + entry.direct;
        extraIds = new Set(entry.extra_direct);
      } else extraIds = new Set(entry.extra);
      return (docId) => low <= docId && docId < high || extraIds.has(docId);
    }
    async unknownPath(path, query) {
      const root = isObject(this.manifest.root) ? await this.fetch(this.manifest.root) : { children: [] };
      const roots = (root.children ?? []).map((c) => c.name);
      const close = path.length ? closeMatches(path[0], roots, 3, 0.3) : [];
      const hints = [`No category '${path.join("/")}'.`];
      if (close.length) hints.push("Closest root categories: " + close.join(", "));
      else if (roots.length) hints.push("Root categories: " + roots.slice(0, 10).join(", "));
      const suggestions = (await this.nodeResults(path.join(" "), 3)).map((r) => r.path);
      if (suggestions.length) hints.push("Closest node paths: " + suggestions.map((p) => p.join("/")).join(", "));
      return new ReaderError("UNKNOWN_PATH", `unknown category path '${path.join("/")}'`, {
        details: { category_path: path, closest_roots: close, closest_paths: suggestions },
        hints,
        next_action: { op: "search_nodes", args: { query: query || path.join(" ") } }
      });
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
    async topTools(query, limit) {
      const hits = await this.ranked("tools", query, null, limit + 1);
      const floor = hits.length ? Math.max(MIN_RELEVANCE, MIN_RELATIVE * hits[0][1]) : 0;
      return this.pointed(hits.filter((h) => h[1] >= floor).slice(0, limit));
    }
    async nameCandidates(query) {
      const lookup = this.manifest.lookup;
      if (!isObject(lookup) || !nameLike(query, STOP_WORDS)) return [];
      const refs = lookup.refs ?? [];
      const count = lookup.buckets ?? 0;
      if (!Array.isArray(refs) || !Number.isInteger(count) || count < 1 || refs.length !== count) return [];
      const parts = nameKey(query).split(" ").filter(Boolean);
      const typed = /\s/u.test(query) ? [] : [query, query.toLowerCase()];
      const out = [];
      for (const name of unique([...typed, parts.join("_"), parts.join("-")])) out.push([name, refs[await lookupBucket(name, count)]]);
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
    async specPointer(toolId, scope) {
      const lookup = this.manifest.lookup;
      const entries = (await this.fetch(lookup.refs[await lookupBucket(toolId, lookup.buckets)])).entries ?? {};
      const found = Object.hasOwn(entries, toolId) ? entries[toolId] : null;
      if (!isObject(found)) return null;
      const spec2 = await this.fetch(found.spec);
      const homes = [spec2.path ?? [], ...spec2.categories ?? []];
      if (scope && scope.length && !homes.some((home) => JSON.stringify(home.slice(0, scope.length)) === JSON.stringify(scope))) return null;
      return {
        tool_id: toolId,
        alias: (spec2.aliases ?? {}).openai ?? toolId,
        type: spec2.type ?? null,
        path: [...spec2.path ?? []],
        summary: spec2.summary ?? "",
        tags: [...spec2.tags ?? []],
        kind: spec2.kind ?? null,
        optional: spec2.optional ?? false,
        deprecated: spec2.deprecated ?? false,
        ...spec2.capabilities?.length ? { capabilities: [...spec2.capabilities] } : {},
        spec: found.spec
      };
    }
    /** A page of what findTool and searchToolByCategory show, whether more follow, and the exact name's id. */
    async answerTools(query, limit, offset = 0, allowed = null, scope = null, candidates = null) {
      if (candidates === null) {
        candidates = await this.nameCandidates(query);
        await this.prefetchQuery("tools", query, candidates.map(([, ref]) => ref));
      }
      const named = await this.nameLookup(candidates);
      const hits = await this.ranked("tools", query, allowed, offset + limit + 2);
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
      const pointer = exact !== null ? exact[0] : await this.specPointer(named, scope);
      if (pointer === null) return [pointed.slice(offset, offset + limit), kept.length > offset + limit, null];
      const shown2 = [[pointer, 1, exact !== null ? exact[2] : []], ...pointed.filter((h) => h !== exact)];
      return [shown2.slice(offset, offset + limit), shown2.length > offset + limit, named];
    }
    async findTool(purpose, limit = 5) {
      let query;
      let matches;
      try {
        query = requireQuery(purpose, "purpose");
        const count = checkLimit(limit, 5);
        const [page, , named] = await this.answerTools(query, count);
        matches = page.map(([pointer, score, terms]) => ({
          name: pointer.tool_id,
          relevance: pyRound(Math.min(1, score), 4),
          reason: pointer.tool_id === named ? "exact name" : reason(pointer, terms)
        }));
      } catch (err) {
        if (err instanceof ReaderError) return err.envelope();
        throw err;
      }
      if (matches.length) return { matches };
      return { matches: [], hints: [`No tool matches ${pyQuote(query)} well; try other words, or browse the categories.`], next_action: { op: "list", args: { path: "" } } };
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
        text = requireQuery(query, "query");
        results = await this.nodeResults(text, checkLimit(limit, 5));
      } catch (err) {
        if (err instanceof ReaderError) return err.envelope();
        throw err;
      }
      if (results.length) return { results };
      return { results: [], hints: [`No category matches ${pyQuote(text)}; browse the root, or search for a tool by purpose.`], next_action: { op: "list", args: { path: "" } } };
    }
    async searchToolByCategory(query, categoryPath, limit = 5, cursor = null) {
      try {
        const text = requireQuery(query, "query");
        const count = checkLimit(limit, 5);
        const path = nodePath(categoryPath);
        const key = await cursorKey(text, path);
        const offset = decodeCursor(cursor, key);
        const candidates = await this.nameCandidates(text);
        const refs = candidates.map(([, ref]) => ref);
        const allowed = path.length ? await this.scoped(text, path, false, refs) : null;
        if (!path.length) await this.prefetchQuery("tools", text, refs);
        const [page, more] = await this.answerTools(text, count, offset, allowed, path, candidates);
        if (!page.length && offset === 0) throw await this.noMatch(text, path);
        return {
          category_path: path,
          results: page.map(([pointer, score]) => leanHit(pointer, score)),
          next_cursor: more ? encodeCursor(offset + page.length, key) : null
        };
      } catch (err) {
        if (err instanceof ReaderError) return err.envelope();
        throw err;
      }
    }
    async noMatch(query, path) {
      const elsewhere = await this.topTools(query, 10);
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
  };
  function kthHitScore(total, wordDocs, k) {
    const scores = [];
    for (const [d, s] of total) if (wordDocs.has(d) || s >= MIN_CHAR_ONLY_SCORE) scores.push(s);
    if (scores.length < k) return -1;
    return scores.sort((a, b) => b - a)[k - 1];
  }
  function pyQuote(text) {
    return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  }

  // src/ops.ts
  var HIDDEN_POINTER_KEYS = /* @__PURE__ */ new Set(["spec", "alias", "aliases", "tokens", "optional"]);
  var DESCRIBED_KEYS = [
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
  var clone = (value) => value === void 0 ? value : structuredClone(value);
  var isBlank = (v) => v === null || v === void 0 || v === false || v === "" || Array.isArray(v) && !v.length || isObject(v) && !Object.keys(v).length;
  function publicPointer(pointer, confidence) {
    const out = {};
    for (const [k, v] of Object.entries(pointer)) {
      if (HIDDEN_POINTER_KEYS.has(k) || isBlank(v) || k === "type" && v === "tool") continue;
      out[k] = clone(v);
    }
    if (confidence !== void 0) out.confidence = roundTo4(confidence);
    return out;
  }
  var roundTo4 = (x) => pyRound(x, 4);
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
    const offset = decodeCursor(cursor);
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
      } else if (filtered) pointers = [...(await store.subtreePointers(where)).values()];
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
    if (tools.length) next = { op: "describe", args: { tool_id: tools[0]?.tool_id } };
    else if (nodes.length) next = { op: "list", args: { path: nodes[0].path.join("/") } };
    else {
      const text = [searched ? query : "", ...wanted, able ?? "", ...where].filter(Boolean).join(" ");
      next = text ? { op: "search", args: { query: text } } : null;
      hints.push("Nothing here matches; search the whole catalogue by purpose, or browse from the root.");
    }
    const out = dropEmpty({ path: where, title: shard.title ?? "", summary: shard.summary ?? "", tool_count: shard.tool_count ?? 0, nodes, tools, total_tools: total }, ["path", "nodes", "tools"]);
    out.next_cursor = more ? encodeCursor(offset + count) : null;
    return ok(out, { help_path: where.join("/") || "root", hints, next_action: next });
  }
  async function searchNodes(store, query, limit) {
    checkStr(query, "query");
    const count = checkLimit(limit, 5);
    const answer = delegate(await store.searcherRequired().searchNodes(query, count));
    if (answer.ok && !answer.results?.length && !answer.hints?.length) {
      answer.hints = [`No category matches ${shown(query, 80)}; search tools by purpose instead, or browse from the root.`];
      answer.next_action = answer.next_action ?? { op: "search", args: { query } };
    }
    return answer;
  }
  async function searchToolByCategory(store, query, categoryPath, limit, cursor) {
    checkStr(query, "query");
    const count = checkLimit(limit, 5);
    if (cursor !== null && cursor !== void 0 && typeof cursor !== "string") throw bad(`cursor ${shown(cursor)} must be a string this reader returned`);
    const where = await store.canonicalPath(nodePath(categoryPath));
    const answer = delegate(await store.searcherRequired().searchToolByCategory(query, where, count, cursor ?? null));
    const results = answer.results;
    if (answer.ok && results?.length) answer.next_action = answer.next_action ?? { op: "describe", args: { tool_id: results[0]?.tool_id } };
    return answer;
  }
  async function describe(store, runs, name) {
    const [toolId, spec2] = await store.spec(name);
    const out = Object.fromEntries(DESCRIBED_KEYS.map((k) => [k, clone(spec2[k] ?? null)]));
    if (out.type === "tool") out.type = null;
    for (const flag of ["deprecated", "optional"]) out[flag] = out[flag] || null;
    const aliases = isObject(spec2.aliases) ? spec2.aliases : {};
    out.alias = aliases.anthropic || aliases.openai || toolId.replaceAll(".", "_");
    if (out.when_to_use === out.summary || out.when_to_use === out.description) out.when_to_use = null;
    if (out.description === out.summary) out.description = null;
    const handler = isObject(spec2.handler) ? spec2.handler : null;
    out.handler = handler ? { type: handler.type ?? null } : null;
    const hints = [];
    const executable = runs(toolId, handler);
    out.executable = executable;
    const skill = spec2.skill;
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
    if (spec2.deprecated) hints.push(deprecationNote(spec2));
    const example = (spec2.examples ?? []).find(isObject)?.args;
    const next = executable ? { op: "call", args: { tool_id: toolId, args: clone(example || {}) } } : null;
    return ok(dropEmpty(out, ["tool_id", "args_schema", "executable"]), { help_path: toolId, hints, next_action: next });
  }
  async function toolList(store, namespace, tags, capability) {
    const wanted = checkTags(tags);
    const able = checkCapability(capability);
    let group = null;
    const namespaces = (store.manifest.namespaces ?? []).map(String);
    if (namespace !== null && namespace !== void 0) {
      group = checkStr(namespace, "namespace").trim().replace(/^\.+|\.+$/g, "");
      if (!namespaces.includes(group.split(".", 1)[0])) throw unknownPath(group, namespaces);
    }
    const pointers = group !== null ? await store.namespacePointers(group.split(".", 1)[0]) : await store.allPointers();
    const rows = [];
    for (const [toolId, pointer] of pointers) {
      if (group !== null && toolId !== group && !toolId.startsWith(group + ".")) continue;
      if (wanted.length && !wanted.every((t) => (pointer.tags ?? []).map((x) => x.toLowerCase()).includes(t))) continue;
      if (able !== null && !hasCapability(pointer, able)) continue;
      rows.push(dropEmpty({ name: toolId, alias: pointer.alias ?? null, type: pointer.type !== "tool" ? pointer.type ?? null : null, kind: pointer.kind ?? null, summary: pointer.summary ?? null }));
    }
    if (group !== null && !rows.length && !wanted.length && able === null) {
      const [groups, ops] = await store.namespaceTree(group.split(".", 1)[0]);
      throw unknownPath(group, [...groups.keys(), ...ops.keys()].sort(cmp));
    }
    let next = rows.length ? { op: "describe", args: { tool_id: rows[0]?.name } } : null;
    const hints = rows.length ? [] : ["Nothing matches these filters; search by purpose instead."];
    if (!rows.length) next = { op: "search", args: { query: [...wanted, able ?? "", group ?? ""].join(" ").trim() } };
    return ok(dropEmpty({ namespace: group, count: rows.length, tools: rows }, ["count", "tools"]), { help_path: group ?? "root", hints, next_action: next });
  }
  async function findTool(store, purpose, limit) {
    checkStr(purpose, "purpose");
    const count = checkLimit(limit, 5);
    return delegate(await store.searcherRequired().findTool(purpose, count));
  }
  function unknownPath(text, names) {
    const close = closeNames(text, names);
    return new ReaderError("UNKNOWN_PATH", `no group or operation ${shown(text, 120)}`, {
      details: { path: text, suggestions: close },
      hints: [close.length ? `Did you mean ${close.join(", ")}?` : "Search by purpose, or start at the root to see the groups."],
      next_action: close.length ? { op: "help", args: { path: close[0] } } : { op: "search", args: { query: text.replaceAll(".", " ").replaceAll("_", " ") } },
      help_path: "root"
    });
  }
  async function toolHelp(store, runs, path, format, includeExamples, includeSchemas, query, limit) {
    if (format !== "short" && format !== "full") throw bad(`format must be 'short' or 'full', got ${shown(format)}`);
    const examples = checkBool(includeExamples, "include_examples");
    const schemas = checkBool(includeSchemas, "include_schemas");
    if (path === null || path === void 0) path = "root";
    if (typeof path !== "string" || path.length > MAX_NAME) throw bad(`a help path is a dotted string like 'onto.task', got ${shown(path)}`);
    const text = path.trim().replace(/^\.+|\.+$/g, "").replaceAll("/", ".");
    if (query !== null && query !== void 0) {
      if (typeof query !== "string" || !query.trim() || query.length > 4 * MAX_NAME) throw bad(`'query' must be a non-empty string saying what you need, got ${shown(query)}`);
      return helpSearch(store, ROOT_NAMES.includes(text) ? "" : text, query.trim(), checkLimit(limit, 5));
    }
    if (ROOT_NAMES.includes(text)) return helpRoot(store, format);
    const toolId = await store.resolve(text);
    if (toolId !== null) return helpOp(store, runs, toolId, format, examples, schemas);
    const namespaces = (store.manifest.namespaces ?? []).map(String);
    if (!namespaces.includes(text.split(".", 1)[0])) throw unknownPath(text, namespaces);
    const [groups, ops] = await store.namespaceTree(text.split(".", 1)[0]);
    if (!groups.has(text)) throw unknownPath(text, [...groups.keys(), ...ops.keys()].sort(cmp));
    return helpGroup(store, text, groups, ops, format);
  }
  function commonPath(pointers) {
    const paths = pointers.filter(isObject).map((p) => [...p.path ?? []]);
    if (!paths.length) return [];
    let common = paths[0];
    for (const other of paths.slice(1)) {
      let size = 0;
      while (size < Math.min(common.length, other.length) && common[size] === other[size]) size++;
      common = common.slice(0, size);
    }
    return common;
  }
  async function nodeSummary(store, pointers) {
    const common = commonPath(pointers);
    let root;
    try {
      if (common.length) {
        const shard = await store.node(common);
        const title = String(shard.title || common[common.length - 1]);
        const summary = String(shard.summary || "");
        return summary ? `${title}: ${summary}` : title;
      }
      root = await store.node([]);
    } catch (err) {
      if (err instanceof ReaderError) return "";
      throw err;
    }
    const titles = new Map((root.children ?? []).map((c) => [c.name, String(c.title || c.name)]));
    const tops = unique(pointers.filter((p) => p.path?.length).map((p) => titles.get(p.path[0]) ?? p.path[0]));
    return tops.length ? "Spans " + tops.slice(0, 4).join(", ") : "";
  }
  async function namespaceHeads(store, namespaces) {
    const index = store.manifest.namespace_index;
    const refs = isObject(index) ? (await store.fetchJson(index)).namespaces : null;
    const out = /* @__PURE__ */ new Map();
    if (!isObject(refs) || store.pointersLoaded) {
      const [groups] = await store.namespaceTree();
      const everything = await store.allPointers();
      for (const n of namespaces) out.set(n, [[...everything].filter(([i]) => i.split(".", 1)[0] === n).map(([, p]) => p), groups.get(n)?.count ?? 0]);
      return out;
    }
    await store.prefetch(namespaces.filter((n) => isObject(refs[n])).map((n) => refs[n]));
    for (const name of namespaces) {
      const shard = isObject(refs[name]) ? await store.fetchJson(refs[name]) : {};
      const tools = (shard.tools ?? []).filter(isObject);
      out.set(name, [tools, Number(shard.tool_count ?? tools.length)]);
    }
    return out;
  }
  async function helpRoot(store, format) {
    const namespaces = (store.manifest.namespaces ?? []).map(String);
    const heads = await namespaceHeads(store, namespaces);
    const groups = [];
    for (const n of namespaces) groups.push(dropEmpty({ name: n, summary: await nodeSummary(store, heads.get(n)?.[0] ?? []), op_count: heads.get(n)?.[1] }));
    const out = {
      path: "root",
      level: "root",
      title: store.manifest.title ?? "",
      summary: store.manifest.summary ?? "",
      groups,
      usage: "tool_help(path) for a group or an operation; tool_help(query) to search by purpose; tool_exec(op, args) to run an operation."
    };
    if (format === "full") Object.assign(out, { registry_version: store.registry_version, counts: store.manifest.counts ?? {} });
    return ok(dropEmpty(out), { help_path: "root", next_action: namespaces.length ? { op: "help", args: { path: namespaces[0] } } : null });
  }
  async function helpGroup(store, group, groups, ops, format) {
    const entry = groups.get(group);
    const opLine = (toolId) => {
      const pointer = ops.get(toolId);
      const line = { op: toolId, summary: pointer.summary ?? null, kind: pointer.kind ?? null };
      if (format === "full") Object.assign(line, { type: pointer.type !== "tool" ? pointer.type ?? null : null, tags: [...pointer.tags ?? []], deprecated: pointer.deprecated || null });
      return dropEmpty(line);
    };
    const below = (prefix) => [...ops].filter(([i]) => i.startsWith(prefix + ".")).map(([, p]) => p);
    const subgroups = [];
    for (const g of [...entry.groups].sort(cmp)) {
      const sub = groups.get(g);
      subgroups.push(dropEmpty({ path: g, summary: await nodeSummary(store, below(g)), op_count: sub.count, sample_ops: sub.ops.map((i) => i.split(".").pop()).sort(cmp).slice(0, 8) }));
    }
    const operations = [...entry.ops].sort(cmp).map(opLine);
    const out = { path: group, level: "group", summary: await nodeSummary(store, below(group)), op_count: entry.count, groups: subgroups, operations };
    const first = operations.length ? operations[0]?.op : subgroups[0]?.path;
    return ok(dropEmpty(out), { help_path: group, next_action: { op: "help", args: { path: first } } });
  }
  async function helpSearch(store, group, query, limit) {
    const found = await store.searcherRequired().findTool(query, group ? 50 : limit);
    if (isError(found)) {
      const e = found.error;
      throw new ReaderError(String(e.code), String(e.message), { details: e.details, hints: e.hints, help_path: e.help_path });
    }
    let matches = (found.matches ?? []).filter((m) => isObject(m) && typeof m.name === "string");
    if (group) matches = matches.filter((m) => m.name.startsWith(group + "."));
    const operations = matches.slice(0, limit).map((m) => dropEmpty({ op: m.name, summary: m.summary ?? null, relevance: m.relevance ?? null }));
    const out = { path: group || "root", level: "search", query, operations };
    if (!operations.length) {
      const where = group ? ` under ${group}` : "";
      return ok(out, { help_path: group || "root", hints: [`No operation${where} matches ${pyQuote(query)}; try other words, or browse the groups.`], next_action: { op: "help", args: { path: group || "root" } } });
    }
    return ok(out, { help_path: group || "root", next_action: { op: "help", args: { path: operations[0]?.op } } });
  }
  function arg(name, raw, root, required) {
    const sub = isObject(raw) ? raw : {};
    const out = { name, type: typeText(sub, root) };
    if (required) out.required = true;
    const rules = schemaRules(sub, root);
    if (rules.length) out.rules = rules.join("; ");
    if (sub.description) out.description = sub.description;
    const examples = examplesText(sub);
    if (examples.length) out.examples = examples;
    return out;
  }
  async function helpOp(store, runs, toolId, format, examples, schemas) {
    const spec2 = (await store.spec(toolId))[1];
    const schema = spec2.args_schema || {};
    const props = schema.properties || {};
    const required = new Set(schema.required || []);
    const args = Object.entries(props).map(([name, raw]) => arg(name, raw, schema, required.has(name)));
    const usageArgs = args.filter((a) => a.required).map((a) => `"${a.name}": <${a.type}>`).join(", ");
    const policy = spec2.policy || {};
    let notes = unique([spec2.when_to_use || "", ...policy.edge_cases ?? []]).filter(Boolean);
    if (notes.length && (notes[0] === spec2.summary || notes[0] === spec2.description)) notes = notes.slice(1);
    if (spec2.deprecated) notes.unshift(deprecationNote(spec2));
    let out = {
      path: toolId,
      level: "operation",
      op: toolId,
      type: spec2.type !== "tool" ? spec2.type ?? null : null,
      summary: spec2.summary ?? null,
      kind: spec2.kind ?? null,
      usage: `tool_exec(op="${toolId}", args={${usageArgs}})`,
      args,
      notes,
      policy: format === "full" ? clone(policy) : { dont: [...policy.dont ?? []] }
    };
    if (examples) out.examples = clone(spec2.examples ?? []);
    if (format === "full") {
      Object.assign(out, { description: spec2.description !== spec2.summary ? spec2.description ?? null : null, errors: clone(spec2.errors ?? []), tags: [...spec2.tags ?? []] });
      if (isObject(spec2.skill)) out.resources = (spec2.skill.resources ?? []).map((r) => r.path ?? null);
    }
    if (schemas) Object.assign(out, { args_schema: clone(schema), result_schema: clone(spec2.result_schema ?? null) });
    out = dropEmpty(out, ["args"]);
    if (isObject(out.policy)) {
      out.policy = dropEmpty(out.policy);
      if (!Object.keys(out.policy).length) delete out.policy;
    }
    const example = (spec2.examples ?? []).find(isObject)?.args;
    const canRun = runs(toolId, isObject(spec2.handler) ? spec2.handler : null);
    return ok(out, {
      help_path: toolId,
      hints: canRun ? [] : ["This reader cannot run this operation here: the host application runs it."],
      next_action: canRun ? { op: "call", args: { tool_id: toolId, args: clone(example || {}) } } : null
    });
  }
  async function namedSection(store, name) {
    const entry = store.manifest.prompts;
    if (!isObject(entry) || !isObject(entry.index)) {
      throw new ReaderError("UNAVAILABLE", "this build has no prompt sections (manifest.prompts)", { hints: ["Rebuild the catalogue with a toolcat that writes the prompts stage."] });
    }
    const index = await store.fetchJson(entry.index);
    if (!isObject(index) || !isObject(index.sections)) throw new ReaderError("INTEGRITY", "the prompts index has no 'sections' table");
    const sections = index.sections;
    const known = Object.keys(sections).sort(cmp);
    if (name === null || name === void 0) return { ok: true, sections: known.map((n) => ({ name: n, media_type: sections[n].media_type ?? null, tokens: sections[n].tokens ?? null })) };
    if (typeof name !== "string" || !name.trim()) {
      throw new ReaderError("BAD_REQUEST", `a prompt section name must be a non-empty string, got ${pyTypeName(name)}`, {
        details: { sections: known },
        hints: ["Pass one of the names in details.sections, e.g. 'system.gateway'."]
      });
    }
    const wanted = name.trim();
    if (!Object.hasOwn(sections, wanted)) {
      const close = closeMatches(wanted, known, 3, 0.5);
      const hints = close.length ? [`Did you mean ${close.join(", ")}?`] : [];
      hints.push("Known sections: " + known.join(", "));
      throw new ReaderError("NOT_FOUND", `no prompt section named ${pyQuote(Array.from(wanted).slice(0, 120).join(""))}`, { details: { name: Array.from(wanted).slice(0, 120).join(""), sections: known }, hints });
    }
    const section = sections[wanted];
    const text = new TextDecoder().decode(await store.fetchBytes(section.ref));
    return { ok: true, name: wanted, media_type: section.media_type ?? null, tokens: section.tokens ?? null, text };
  }
  function pyTypeName(value) {
    if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
    if (typeof value === "boolean") return "bool";
    if (typeof value === "string") return "str";
    return Array.isArray(value) ? "list" : isObject(value) ? "dict" : "NoneType";
  }
  async function alwaysLoaded(store) {
    const entries = store.manifest.always_load;
    const out = [];
    for (const entry of Array.isArray(entries) ? entries : []) {
      if (!isObject(entry) || typeof entry.tool_id !== "string") continue;
      let spec2;
      try {
        spec2 = isObject(entry.ref) ? await store.fetchJson(entry.ref) : (await store.spec(entry.tool_id))[1];
      } catch (err) {
        if (err instanceof ReaderError) continue;
        throw err;
      }
      if (!isObject(spec2)) continue;
      out.push(dropEmpty({
        tool_id: entry.tool_id,
        alias: String(entry.alias || entry.tool_id.replaceAll(".", "_")),
        summary: spec2.summary ?? null,
        description: spec2.description !== spec2.summary ? spec2.description ?? null : null,
        args_schema: isObject(spec2.args_schema) ? spec2.args_schema : { type: "object" },
        kind: spec2.kind ?? null,
        annotations: spec2.annotations ?? null
      }));
    }
    return out.sort((a, b) => cmp(a.tool_id, b.tool_id));
  }

  // src/catalog.ts
  function checkPin(pin) {
    if (pin === null || pin === void 0) return null;
    const text = typeof pin === "string" ? pin.trim().toLowerCase() : "";
    const digest = text.startsWith("sha256:") ? text.slice(7) : "";
    if (!/^[0-9a-f]{64}$/.test(digest)) {
      throw new ReaderError("BAD_REQUEST", `pin must be 'sha256:' and 64 hex digits, got ${shown(pin, 100)}`, {
        hints: ["pin is the sha256 of the manifest file: the 'sha256' of the 'manifest' ref in catalog.json, e.g. pin='sha256:' + entry['manifest']['sha256']."]
      });
    }
    return digest;
  }
  var Catalog = class _Catalog {
    constructor(store, runs) {
      this.store = store;
      this.runs = runs;
    }
    /** Open the catalogue at an http(s) base URL (the folder holding catalog.json). */
    static async open(url, options = {}) {
      const text = String(url);
      if (!/^https?:\/\//i.test(text)) throw new ReaderError("BAD_REQUEST", `open() takes an http(s) base URL, got ${shown(text)}`, { hints: ["Serve the build folder over http(s), or pass a fetch that reads it."] });
      if (options.version !== void 0 && options.version !== null && typeof options.version !== "string") {
        throw new ReaderError("BAD_REQUEST", `version must be a registry_version string, got ${shown(options.version)}`);
      }
      const maxParallel = options.maxParallel ?? 8;
      if (!Number.isInteger(maxParallel) || maxParallel < 1) throw new ReaderError("BAD_REQUEST", `max_parallel must be a positive integer, got ${shown(maxParallel, 40)}`);
      const digest = checkPin(options.pin);
      const base = text.replace(/catalog\.json$/, "");
      const source = new HttpSource(base, {
        timeout: options.timeout ?? 10,
        retries: options.retries ?? 2,
        maxParallel,
        maxFileBytes: options.maxFileBytes ?? MAX_FILE_BYTES,
        ...options.fetch ? { fetch: options.fetch } : {}
      });
      const store = new Store(source, options.version ?? null, digest);
      store.searcherFactory = (s) => new Searcher(s);
      await store.load(await store.readEntry());
      return new _Catalog(store, options.runs ?? (() => false));
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
        return lean(await render(result, dialect, this.store));
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
    // == gateway dialect =====================================================================
    toolHelp(options = {}) {
      const { path = "root", format = "short", includeExamples = true, includeSchemas = false, query = null, limit = null } = options;
      return this.run(() => toolHelp(this.store, this.runs, path, format, includeExamples, includeSchemas, query, limit), "gateway");
    }
    // == namespaced dialect ==================================================================
    toolList(options = {}) {
      const { namespace = null, tags = null, capability = null } = options;
      return this.run(() => toolList(this.store, namespace, tags, capability), "namespaced");
    }
    toolDescribe(name) {
      return this.run(() => describe(this.store, this.runs, name), "namespaced");
    }
    findTool(purpose, limit = 5) {
      return this.run(() => findTool(this.store, purpose, limit), "namespaced");
    }
    // == prompts, always-loaded tools, dialect tool definitions ===============================
    /** A named prompt section (``system.gateway``, ``tools.short`` ...) as text; without a name, the list. */
    prompt(name = null) {
      return this.run(() => namedSection(this.store, name), null);
    }
    /** Lean specs of the tools marked ``always_load: true``, for a host to expose beside the discovery tools. */
    alwaysLoaded() {
      return alwaysLoaded(this.store);
    }
    /** A dialect's discovery tools in a provider's format, as the build wrote them (``providers/<p>/<dialect>``). */
    async dialectTools(dialect, provider = "openai") {
      const providers = this.store.manifest.providers;
      const ref = isObject(providers) && isObject(providers[provider]) && isObject(providers[provider].dialects) ? providers[provider].dialects[dialect] : null;
      if (!isObject(ref)) {
        throw new ReaderError("UNAVAILABLE", `this build has no ${provider} definitions of the ${dialect} dialect (manifest.providers)`, { hints: ["Rebuild the catalogue with a toolcat that writes the exports stage."] });
      }
      const artifact = await this.store.fetchJson(ref);
      return Array.isArray(artifact.tools) ? artifact.tools : [];
    }
  };

  // src/site.ts
  var Reader = class {
    constructor(entryUrl) {
      __publicField(this, "entryUrl");
      __publicField(this, "catalog", null);
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
