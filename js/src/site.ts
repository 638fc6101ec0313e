/** The docs site's search box, in the header of every page (templates/site/overrides/partials/header.html): the
 * toolcat reader package over the site's own artifacts. Catalogue text reaches the DOM only as textContent or as a
 * percent-encoded URL on the site's own origin. */
import { analyzeWords, stem } from "./analyzer.js";
import { Catalog } from "./catalog.js";
import type { Artifact } from "./store.js";

/** The reader the page (and its browser tests) use: ``new Reader(entryUrl).search(query, limit)``. */
class Reader {
  readonly entryUrl: string;
  private catalog: Promise<Catalog> | null = null;

  constructor(entryUrl: string) {
    this.entryUrl = new URL(entryUrl, document.baseURI).href;
  }

  open(): Promise<Catalog> {
    if (this.catalog === null) {
      this.catalog = Catalog.open(new URL(".", this.entryUrl).href);
      this.catalog.catch(() => (this.catalog = null));
    }
    return this.catalog;
  }

  /** What find_tool shows (exact names first, no filler), as ``[{pointer, score}]``. */
  async search(query: string, limit: number): Promise<{ pointer: Artifact; score: number }[]> {
    const catalog = await this.open();
    const [page] = await catalog.searcher().answerTools(query.trim(), limit);
    return page.map(([pointer, score]) => ({ pointer, score }));
  }

  async files(): Promise<number> {
    return Number((await this.open()).stats().memory_files);
  }
}

/** The page of a tool, relative to the site's root (the folder above ``artifacts/``). */
function pageOf(pointer: Artifact): string {
  const path: string[] = Array.isArray(pointer.path) ? pointer.path.map(String) : [];
  const page = path.length ? "nodes/" + encodeURIComponent(path.join(".")) + ".html" : "index.html";
  return page + "#" + encodeURIComponent(String(pointer.tool_id));
}

function attach(box: HTMLElement): void {
  const input = box.querySelector("input");
  const list = box.querySelector("ol");
  const status = box.querySelector(".tc-status");
  const entry = new URL(box.getAttribute("data-catalog") || "", document.baseURI);
  if (entry.origin !== location.origin || !input || !list || !status) return; // only this site's own artifacts
  const reader = new Reader(entry.href);
  const siteRoot = new URL("..", new URL(".", entry.href)); // artifacts/catalog.json → the site's root, from any page
  let timer: ReturnType<typeof setTimeout> | undefined;
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
          li.append(a, document.createTextNode(" — " + String(r.pointer.summary)), score);
          return li;
        }),
      );
      status.textContent = `${results.length} result(s) in ${Math.round(performance.now() - started)} ms from ${files} file(s), each checked against its sha256.`;
    } catch (error) {
      if (mine !== generation) return;
      list.replaceChildren();
      status.textContent = "Search unavailable: " + (error as Error).message;
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

function init(): void {
  const box = document.getElementById("toolcat-search");
  if (box) attach(box);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
(window as unknown as { toolcatSearch: unknown }).toolcatSearch = { Reader, Catalog, analyzeWords: (text: string) => analyzeWords(text), stem };
