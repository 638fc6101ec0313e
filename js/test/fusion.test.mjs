// The learned fusion's model choice (src/fusionModel.ts) as fusion_model.model_for makes it
// (tests/reader/test_fusion_model.py holds the Python side): a malformed entry left out alone, the weights sha256
// checked, a default model used unasked, an opt-in one only with learnedFusion "all", none with "off".
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { modelFor, parseModels } from "../dist/fusionModel.js";

const weights = JSON.parse(readFileSync(new URL("../../compiler/reader/search/fusion_weights.json", import.meta.url), "utf8"));

test("a malformed entry is left out alone, the others kept", () => {
  const broken = { ...weights, models: { ...weights.models, "minilm-tools": { ...weights.models["minilm-tools"], features: ["cos"] } } };
  const models = parseModels(broken);
  assert.equal(models.has("minilm-tools"), false);
  assert.equal(models.has("minilm-onnx"), true);
  assert.equal(parseModels({ ...weights, format: "toolcat-fusion-0" }).size, 0);
});

test("minilm-tools' model is the default, the others opt-in (used with 'all' only), each for its own weights", () => {
  const tools = weights.models["minilm-tools"];
  const base = weights.models["minilm-onnx"];
  assert.equal(tools.default, true);
  assert.equal(base.default, false);
  assert.ok(modelFor("minilm-tools", tools.weights_sha256, undefined)?.idfCoverage); // the default embedder's model
  assert.equal(modelFor("minilm-onnx", base.weights_sha256, undefined), null);
  assert.ok(modelFor("minilm-onnx", base.weights_sha256, "all"));
  assert.equal(modelFor("minilm-tools", tools.weights_sha256, "off"), null);
  const model = modelFor("minilm-tools", tools.weights_sha256, "all");
  assert.ok(model?.idfCoverage);
  assert.equal(model.weak, tools.weak_relevance);
  assert.equal(modelFor("minilm-tools", "0".repeat(64), "all"), null); // other weights: the hand fusion
  assert.equal(modelFor("minilm-onnx-f32", null, "all"), null); // no model for that embedder
  assert.equal(modelFor("lexical", null, "all")?.semantic, false);
});
