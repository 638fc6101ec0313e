/** Whether fusion_weights.json's lexical model is used by default (``fusion_model.model_for("lexical")``), written by
 * `npm run fusion-weights` with src/fusionWeights.ts; tests/js/test_js_semantic.py checks it. */
export const LEXICAL_LEARNED: boolean = false;
