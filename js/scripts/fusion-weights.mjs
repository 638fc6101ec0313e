// Writes src/fusionWeights.ts: the learned fusion's weights (compiler/reader/search/fusion_weights.json) for the
// semantic chunk (src/fusionModel.ts), run by `npm run build` before it compiles (and alone: `npm run fusion-weights`);
// tests/js/test_js_semantic.py checks the copy equals the file and records the sha256 of its bytes.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("..", import.meta.url);
const bytes = readFileSync(new URL("../compiler/reader/search/fusion_weights.json", root));
const data = JSON.parse(bytes.toString("utf8"));
writeFileSync(
  new URL("src/fusionWeights.ts", root),
  "/** The learned fusion's weights: a copy of compiler/reader/search/fusion_weights.json (``toolcat-fusion-1``), written by\n" +
    " * `npm run build` (or `npm run fusion-weights`) in js/; tests/js/test_js_semantic.py checks it equals that file. */\n" +
    `export const WEIGHTS: unknown = ${JSON.stringify(data)};\n` +
    "/** The sha256 of the fusion_weights.json bytes it was written from. */\n" +
    `export const WEIGHTS_SHA256 = "${createHash("sha256").update(bytes).digest("hex")}";\n`,
);
// Whether the lexical tier's learned model is used by default: a constant of the main entry (esbuild drops the
// branch it guards while it is false), the model itself in the semantic chunk.
const lexical = data?.models?.lexical;
writeFileSync(
  new URL("src/fusionDefault.ts", root),
  "/** Whether fusion_weights.json's lexical model is used by default (``fusion_model.model_for(\"lexical\")``), written by\n" +
    " * `npm run fusion-weights` with src/fusionWeights.ts; tests/js/test_js_semantic.py checks it. */\n" +
    `export const LEXICAL_LEARNED: boolean = ${(lexical?.default ?? true) === true && Array.isArray(lexical?.features)};\n`,
);
