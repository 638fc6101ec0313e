/* toolcat search in the browser: a small reader of the catalogue's own TF-IDF index.
 *
 * It reads the published artifacts (artifacts/catalog.json -> manifest -> manifest.index ->
 * only the term shards the query needs -> doc shards of the top hits), checks every file
 * against the sha256 held by the file that pointed to it, and scores exactly as the Python
 * reader does (compiler/reader/search.py): same analyzers, sum over spaces of
 * weight * cosine(query, doc). No dependencies, no network beyond this site.
 */
(function () {
  "use strict";

  var WORD = /[\p{L}\p{N}]+/gu;
  var CAMEL = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|(?:(?![A-Za-z0-9_])[\p{L}\p{N}])+/gu;
  var SHORT_ALNUM = /^(?=[\p{L}\p{N}]*\p{L})(?=[\p{L}\p{N}]*\p{Nd})[\p{L}\p{N}]+$/u;
  var SHORT_TOKEN_CHARS = 4;
  var ANALYZER_VERSION = "toolcat-analyzer-3";
  var MIN_CHAR_ONLY_SCORE = 0.1;
  var MIN_RELEVANCE = 0.06, MIN_RELATIVE = 0.25;  // search.py: hits under these are not shown

  function isAlpha(word) { return /^\p{L}+$/u.test(word); }

  function stem(word) {
    if (word.length <= 3 || !isAlpha(word)) return word;
    if (word.endsWith("sses")) return word.slice(0, -2);
    if (word.endsWith("ies") && word.length > 4) return word.slice(0, -3) + "y";
    var base = word;
    if (word.endsWith("s") && !(word.endsWith("ss") || word.endsWith("us") || word.endsWith("is"))) base = word.slice(0, -1);
    var suffixes = ["ing", "ed"];
    for (var i = 0; i < suffixes.length; i++) {
      var suffix = suffixes[i];
      if (base.endsWith(suffix) && base.length - suffix.length >= 3) {
        var root = base.slice(0, -suffix.length);
        if (root[root.length - 1] === root[root.length - 2] && "lsz".indexOf(root[root.length - 1]) < 0) root = root.slice(0, -1);
        return root;
      }
    }
    if (base.endsWith("e") && base.length > 4) base = base.slice(0, -1);
    return base;
  }

  // synonyms: the index meta's thesaurus table (stemmed word -> its term(s)), as analyzer.py applies it
  function analyzeWords(text, stopWords, synonyms) {
    var out = [];
    (text.match(WORD) || []).forEach(function (token) {
      var parts = token.match(CAMEL) || [];
      // s3, ec2, v2: a short token of letters and digits is also kept whole, before its parts.
      if (parts.length > 1 && token.length <= SHORT_TOKEN_CHARS && SHORT_ALNUM.test(token)) out.push(token.toLowerCase());
      parts.forEach(function (part) {
        var lowered = part.toLowerCase();
        if (stopWords.has(lowered)) return;
        var stemmed = stem(lowered);
        var terms = synonyms && Object.prototype.hasOwnProperty.call(synonyms, stemmed) ? synonyms[stemmed] : [stemmed];
        terms.forEach(function (t) { out.push(t); });
      });
    });
    return out;
  }

  function analyzeChars(text, stopWords, range, synonyms) {
    var out = [];
    analyzeWords(text, stopWords, synonyms).forEach(function (word) {
      var padded = " " + word + " ";
      for (var size = range[0]; size <= range[1]; size++) {
        if (padded.length < size) break;
        for (var i = 0; i + size <= padded.length; i++) out.push(padded.slice(i, i + size));
      }
    });
    return out;
  }

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  function Reader(entryUrl) {
    this.base = new URL(".", new URL(entryUrl, document.baseURI)).href;
    this.entryUrl = new URL(entryUrl, document.baseURI).href;
    this.cache = new Map();
    this.raw = new Map();
    this.verified = !!(window.crypto && window.crypto.subtle);
  }

  function download(url, path) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error(path + ": HTTP " + response.status);
      return response.arrayBuffer();
    });
  }

  // `body` (optional): the file's bytes, already fetched by path; they are checked against the ref all the same.
  Reader.prototype.fetchRef = function (ref, body) {
    var self = this;
    if (self.cache.has(ref.sha256)) return self.cache.get(ref.sha256);
    var promise = (body || download(new URL(ref.path, self.base).href, ref.path)).then(function (bytes) {
      var check = self.verified ? window.crypto.subtle.digest("SHA-256", bytes).then(hex) : Promise.resolve(ref.sha256);
      return check.then(function (digest) {
        if (digest !== ref.sha256) throw new Error(ref.path + ": integrity check failed (sha256 " + digest.slice(0, 16) + "…)");
        return JSON.parse(new TextDecoder("utf-8").decode(bytes));
      });
    });
    self.cache.set(ref.sha256, promise);
    return promise;
  };

  Reader.prototype.open = function () {
    var self = this;
    if (self.ready) return self.ready;
    self.ready = fetch(self.entryUrl).then(function (r) {
      if (!r.ok) throw new Error("catalog.json: HTTP " + r.status);
      return r.json();
    }).then(function (entry) {
      if (entry.artifact !== "catalog" || entry.format_version !== 1) throw new Error("catalog.json: unsupported format_version " + entry.format_version);
      return self.fetchRef(entry.manifest);
    }).then(function (manifest) {
      if (!manifest.index) throw new Error("this catalogue has no search index (manifest key 'index')");
      return self.fetchRef(manifest.index);
    }).then(function (meta) {
      if (meta.analyzer.version !== ANALYZER_VERSION) throw new Error("index analyzer " + meta.analyzer.version + ", this page reads " + ANALYZER_VERSION);
      self.meta = meta;
      self.stopWords = new Set(meta.analyzer.stop_words);
      self.synonyms = (meta.analyzer.thesaurus && meta.analyzer.thesaurus.table) || {};
      return meta;
    });
    return self.ready;
  };

  function decode(entry) {
    var ids = [], last = 0;
    entry.docs.forEach(function (gap) { last += gap; ids.push(last); });
    return { idf: entry.idf, ids: ids, w: entry.w };
  }

  function bisect(firsts, term) {  // last shard whose first term <= term (the Python reader bisects the same way)
    var lo = 0, hi = firsts.length - 1, found = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (firsts[mid] <= term) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found;
  }

  // File `number` of a paged table (docs/search.md, "Paged tables"): fetched by path beside its page, then
  // checked against the page's sha256 before use. Resolves to [parsed file, page].
  Reader.prototype.paged = function (pages, number) {
    var self = this, path = pages.folder + "/" + pages.prefix + number + ".json";
    if (!self.raw.has(path)) self.raw.set(path, download(new URL(path, self.base).href, path));
    return self.fetchRef(pages.pages[Math.floor(number / pages.per_page)]).then(function (page) {
      var entry = page.files[number - page.first];
      return self.fetchRef({ path: path, sha256: entry[0], bytes: entry[1] }, self.raw.get(path)).then(function (file) {
        return [file, page];
      });
    });
  };

  Reader.prototype.entry = function (space, term) {
    var firsts = space.firsts || space.shards.map(function (s) { return s.first; });
    var found = bisect(firsts, term);
    if (found < 0) return Promise.resolve(null);
    if (space.term_pages) {
      return this.paged(space.term_pages, found).then(function (got) {
        var page = got[1];
        return term > page.last[found - page.first] ? null : got[0].terms[term] || null;
      });
    }
    if (term > space.shards[found].last) return Promise.resolve(null);
    return this.fetchRef(space.shards[found].ref).then(function (shard) { return shard.terms[term] || null; });
  };

  // A term's postings: the base segment's, without the docs a delta segment voids, plus the delta's own
  // (docs/search.md, "Segments"; ranking.py _with_delta does the same).
  Reader.prototype.posting = function (part, space, term) {
    var delta = part.delta, deltaSpace = null;
    if (delta) delta.spaces.forEach(function (s) { if (s.name === space.name) deltaSpace = s; });
    return Promise.all([
      this.entry(space, term),
      deltaSpace ? this.entry(deltaSpace, term) : Promise.resolve(null),
    ]).then(function (found) {
      var base = found[0] ? decode(found[0]) : null;
      if (!delta) return base;
      var masked = new Set(delta.masked), pairs = [];
      if (base) base.ids.forEach(function (id, i) { if (!masked.has(id)) pairs.push([id, base.w[i]]); });
      if (found[1]) { var add = decode(found[1]); add.ids.forEach(function (id, i) { pairs.push([id, add.w[i]]); }); }
      if (!pairs.length) return null;
      pairs.sort(function (a, b) { return a[0] - b[0]; });
      return { idf: base ? base.idf : found[1].idf, ids: pairs.map(function (p) { return p[0]; }), w: pairs.map(function (p) { return p[1]; }) };
    });
  };

  Reader.prototype.doc = function (part, id) {
    var files = part.delta ? part.delta.docs : [];
    for (var i = 0; i < files.length; i++) {
      var at = files[i].ids.indexOf(id);
      if (at >= 0) return this.fetchRef(files[i].ref).then(function (shard) { return shard.docs[shard.ids.indexOf(id)]; });
    }
    var self = this, shardNo = Math.floor(id / part.doc_shard_size), pages = part.doc_pages;
    if (!pages) {
      return self.fetchRef(part.doc_shards[shardNo].ref).then(function (shard) { return shard.docs[id - shard.first]; });
    }
    return self.paged(pages, shardNo).then(function (got) { return got[0].docs[id - got[0].first]; });
  };

  Reader.prototype.search = function (query, limit) {
    var self = this;
    return self.open().then(function (meta) {
      var part = meta.tools, total = new Map(), wordHit = new Set();
      var range = meta.analyzer.char_ngrams.range;
      return Promise.all(part.spaces.map(function (space) {
        var tokens = space.name === "words" ? analyzeWords(query, self.stopWords, self.synonyms) : analyzeChars(query, self.stopWords, range, self.synonyms);
        var unique = Array.from(new Set(tokens));
        return Promise.all(unique.map(function (t) { return self.posting(part, space, t); })).then(function (postings) {
          var counts = new Map(), found = new Map();
          unique.forEach(function (t, i) { if (postings[i]) found.set(t, postings[i]); });
          tokens.forEach(function (t) { if (found.has(t)) counts.set(t, (counts.get(t) || 0) + 1); });
          var raw = new Map(), norm = 0;
          counts.forEach(function (c, t) { var v = (1 + Math.log(c)) * found.get(t).idf; raw.set(t, v); norm += v * v; });
          norm = Math.sqrt(norm);
          if (norm === 0) return;
          raw.forEach(function (v, t) {
            var p = found.get(t), factor = space.weight * v / norm;
            for (var i = 0; i < p.ids.length; i++) {
              total.set(p.ids[i], (total.get(p.ids[i]) || 0) + factor * p.w[i]);
              if (space.name === "words") wordHit.add(p.ids[i]);
            }
          });
        });
      })).then(function () {
        var hits = [];
        total.forEach(function (score, id) { if (wordHit.has(id) || score >= MIN_CHAR_ONLY_SCORE) hits.push([id, score]); });
        hits.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; });
        // no filler: the Python reader's cut (search.py MIN_RELEVANCE, MIN_RELATIVE of the best hit)
        var floor = hits.length ? Math.max(MIN_RELEVANCE, MIN_RELATIVE * hits[0][1]) : 0;
        hits = hits.filter(function (hit) { return hit[1] >= floor; }).slice(0, limit);
        return Promise.all(hits.map(function (hit) {
          return self.doc(part, hit[0]).then(function (doc) { return { pointer: doc.pointer, score: hit[1] }; });
        }));
      });
    });
  };

  // Catalogue text only ever reaches the DOM as textContent or as a percent-encoded relative URL.
  function pageOf(pointer) {
    var path = Array.isArray(pointer.path) ? pointer.path.map(String) : [];
    var page = path.length ? "nodes/" + encodeURIComponent(path.join(".")) + ".html" : "index.html";
    return page + "#" + encodeURIComponent(String(pointer.tool_id));
  }

  function attach(box) {
    var input = box.querySelector("input"), list = box.querySelector("ol"), status = box.querySelector(".tc-status");
    var entry = new URL(box.getAttribute("data-catalog") || "", document.baseURI);
    if (entry.origin !== location.origin || !input || !list || !status) return;  // only this site's own artifacts
    var reader = new Reader(entry.href), timer = null, generation = 0;
    function run() {
      var query = input.value.trim(), mine = ++generation;
      if (!query) { list.replaceChildren(); status.textContent = ""; return; }
      var started = performance.now();
      reader.search(query, 10).then(function (results) {
        if (mine !== generation) return;
        list.replaceChildren();
        results.forEach(function (r) {
          var li = document.createElement("li"), a = document.createElement("a"), score = document.createElement("span");
          a.href = pageOf(r.pointer);
          a.textContent = String(r.pointer.tool_id);
          a.className = "tc-hit";
          score.className = "tc-score";
          score.textContent = r.score.toFixed(3);
          li.appendChild(a);
          li.appendChild(document.createTextNode(" — " + String(r.pointer.summary)));
          li.appendChild(score);
          list.appendChild(li);
        });
        var files = reader.cache.size;
        status.textContent = results.length + " result(s) in " + Math.round(performance.now() - started) + " ms from " + files +
          " index file(s)" + (reader.verified ? ", each checked against its sha256." : " (sha256 not checked: this page is not a secure context).");
      }).catch(function (error) {
        if (mine !== generation) return;
        list.replaceChildren();
        status.textContent = "Search unavailable: " + error.message;
      });
    }
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 120); });
    input.addEventListener("keydown", function (event) { if (event.key === "Enter") { clearTimeout(timer); run(); } });
  }

  function init() {
    var box = document.getElementById("toolcat-search");
    if (box) attach(box);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
  window.toolcatSearch = { Reader: Reader, analyzeWords: analyzeWords, stem: stem };
})();
