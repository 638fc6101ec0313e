// Node's own test runner: the pieces that must behave as Python's, against values Python computed
// (python-golden.json: analyzer, stemmer, round(), difflib), and the ref checks and sha256.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { analyzeWords, stem } from "../dist/analyzer.js";
import { closeMatches } from "../dist/difflib.js";
import { pyRound } from "../dist/py.js";
import { hex, sha256 } from "../dist/sha256.js";
import { sha256Sync } from "../dist/sha256sync.js";
import { checkRef } from "../dist/source.js";
import { ReaderError } from "../dist/errors.js";
import { WordFilter } from "../dist/wordfilter.js";

const golden = JSON.parse(readFileSync(new URL("./python-golden.json", import.meta.url), "utf-8"));

test("analyzeWords gives Python's word terms", () => {
  for (const [text, words] of golden.words) assert.deepEqual(analyzeWords(text), words, text);
});

test("stem is Python's stemmer", () => {
  for (const [word, stemmed] of golden.stems) assert.equal(stem(word), stemmed, word);
});

test("pyRound rounds the exact binary value, ties to even, as round() does", () => {
  for (const [x, rounded] of golden.rounds) assert.equal(pyRound(x, 4), rounded, String(x));
});

test("WordFilter reads Python's word filter bit for bit (toolcat.format.index_format)", () => {
  const filter = new WordFilter(golden.word_filter.filter);
  for (const [word, held] of golden.word_filter.probes) assert.equal(filter.mayHold(word), held, word);
  assert.throws(() => new WordFilter({ ...golden.word_filter.filter, bits: 8 }), TypeError);
});

test("closeMatches is difflib.get_close_matches", () => {
  for (const [word, names, expected] of golden.close) assert.deepEqual(closeMatches(word, names, 3, 0.5), expected, word);
});

test("the fallback sha256 equals Web Crypto's", async () => {
  for (const size of [0, 1, 55, 56, 63, 64, 65, 1000, 100_000]) {
    const data = new Uint8Array(size).map((_, i) => (i * 31 + 7) & 0xff);
    assert.equal(hex(sha256Sync(data)), await sha256(data), `size ${size}`);
  }
});

test("a ref whose path leaves the catalogue is INTEGRITY", () => {
  for (const path of ["../x.json", "/etc/passwd", "//evil/x", "http://evil/x", "a//b", "a/./b", "a\\b", "x\u0000y", "", "a".repeat(2000)]) {
    assert.throws(() => checkRef({ path, sha256: "0".repeat(64), bytes: 1 }), (err) => err instanceof ReaderError && err.code === "INTEGRITY", JSON.stringify(path));
  }
  assert.deepEqual(checkRef({ path: "tools/a.json", sha256: "a".repeat(64), bytes: 3 }), ["tools/a.json", "a".repeat(64), 3]);
});
