// For tests/js/test_js_parity.py: reads {url, options, calls: [[method, ...args]]} as JSON on stdin; prints the answers as JSON (tests/js/test_js_parity.py).
// An answer is the operation's result, or {"thrown": code} when the call threw a ReaderError.
import { Catalog, ReaderError } from "../dist/full.js";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

const thrown = (err) => {
  if (err instanceof ReaderError) return { thrown: err.code, message: err.message };
  throw err;
};

const out = { answers: [] };
let catalog = null;
try {
  catalog = await Catalog.open(input.url, input.options ?? {});
} catch (err) {
  out.open = thrown(err);
}
if (catalog) {
  for (const [method, ...args] of input.calls ?? []) {
    try {
      // "$ranked": the searcher's raw ranking ([doc id, unrounded score, matched terms]), for the parity tests' score check.
      out.answers.push(method === "$ranked" ? await catalog.searcher().ranked(...args) : await catalog[method](...args));
    } catch (err) {
      out.answers.push(thrown(err));
    }
  }
  out.stats = catalog.stats();
}
process.stdout.write(JSON.stringify(out));
