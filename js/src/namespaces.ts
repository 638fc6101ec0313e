/** Whole-tree views of the catalogue (``toolcat.reader.store``): walks of the node tree, every pointer, and tool
 * ids as dotted namespace groups, for list's filters, the namespaced and gateway dialects and the rendering of
 * next_actions; loaded with them (deferred.ts, gateway.ts, full.ts), not before the main entry's first call. */
import { ReaderError } from "./errors.js";
import { treeTooBig } from "./failures.js";
import { cmp, isObject } from "./py.js";
import { nodePath, type Artifact, type Store } from "./store.js";

const MAX_NODE_DEPTH = 64;
const MAX_WALK_NODES = 1_000_000;

export interface Group {
  groups: Set<string>;
  ops: string[];
  count: number;
}

export async function isNode(store: Store, path: string): Promise<boolean> {
  try {
    await store.node(nodePath(path));
    return true;
  } catch (err) {
    if (err instanceof ReaderError) return false;
    throw err;
  }
}

export async function isGroup(store: Store, path: string): Promise<boolean> {
  const namespace = path.split(".", 1)[0] as string;
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

export async function aliasOf(store: Store, toolId: string): Promise<string> {
  let spec: Artifact;
  try {
    [, spec] = await store.spec(toolId);
  } catch (err) {
    if (err instanceof ReaderError) return toolId.replaceAll(".", "_");
    throw err;
  }
  const aliases = isObject(spec.aliases) ? spec.aliases : {};
  return String(aliases.anthropic || aliases.openai || toolId.replaceAll(".", "_"));
}

/** The pointers of one namespace by tool_id (its shard in the namespace index, or a walk of every node). */
export async function namespacePointers(store: Store, namespace: string): Promise<Map<string, Artifact>> {
  let refs: Artifact = null;
  if (store.pointers === null && isObject(store.manifest.namespace_index)) refs = (await store.fetchJson(store.manifest.namespace_index)).namespaces;
  if (!isObject(refs)) {
    const all = await allPointers(store);
    return new Map([...all].filter(([k]) => k.split(".", 1)[0] === namespace));
  }
  const ref = Object.hasOwn(refs, namespace) ? refs[namespace] : null;
  if (!isObject(ref)) return new Map();
  const tools = await store.nodeTools(await store.fetchJson(ref));
  return new Map(tools.sort((a, b) => cmp(a.tool_id, b.tool_id)).map((p) => [p.tool_id, p]));
}

/** The groups (dotted prefixes) of a namespace, or of every namespace, and its operations by tool_id. */
export async function namespaceTree(store: Store, namespace?: string): Promise<[Map<string, Group>, Map<string, Artifact>]> {
  const ops = namespace !== undefined ? await namespacePointers(store, namespace) : await allPointers(store);
  const groups = new Map<string, Group>();
  for (const toolId of ops.keys()) {
    const parts = toolId.split(".");
    for (let depth = 1; depth < parts.length; depth++) {
      const group = parts.slice(0, depth).join(".");
      let entry = groups.get(group);
      if (!entry) groups.set(group, (entry = { groups: new Set(), ops: [], count: 0 }));
      entry.count += 1;
      if (depth === parts.length - 1) entry.ops.push(toolId);
      else entry.groups.add(parts.slice(0, depth + 1).join("."));
    }
  }
  return [groups, ops];
}

async function prefetchSubtree(store: Store, path: string[]): Promise<void> {
  if (!store.source.concurrent) return;
  let level: Artifact[] = [await store.node(path)];
  const seen = new Set<string>();
  for (let depth = 0; depth < MAX_NODE_DEPTH && level.length; depth++) {
    const children: Artifact[] = level.flatMap((shard) => (shard.children ?? []).filter((c: Artifact) => isObject(c) && isObject(c.ref) && !seen.has(String(c.ref.sha256))).map((c: Artifact) => c.ref));
    children.forEach((ref) => seen.add(String(ref.sha256)));
    await store.prefetch([...children, ...level.flatMap((shard) => shard.pages ?? [])]);
    const next: Artifact[] = [];
    for (const ref of children) {
      const shard = await store.fetchJson(ref);
      if (isObject(shard)) next.push(shard);
    }
    level = next;
  }
}

/** Every node shard under ``path``, depth first (fetched a level at a time). */
export async function walk(store: Store, path: string[]): Promise<[string[], Artifact][]> {
  await prefetchSubtree(store, path);
  const out: [string[], Artifact][] = [];
  const stack = [path];
  while (stack.length) {
    const current = stack.pop() as string[];
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

export async function subtreePointers(store: Store, path: string[]): Promise<Map<string, Artifact>> {
  const out = new Map<string, Artifact>();
  for (const [, shard] of await walk(store, path)) {
    for (const pointer of await store.nodeTools(shard)) if (!out.has(pointer.tool_id)) out.set(pointer.tool_id, pointer);
  }
  return out;
}

/** Every pointer of the catalogue by tool_id, sorted (kept in ``store.pointers``). */
export async function allPointers(store: Store): Promise<Map<string, Artifact>> {
  if (store.pointers === null) {
    const pointers = await subtreePointers(store, []);
    store.pointers = new Map([...pointers].sort((a, b) => cmp(a[0], b[0])));
  }
  return store.pointers;
}
