/** The catalogue's namespace view (``toolcat.reader.store``): tool ids as dotted groups, for the namespaced and
 * gateway dialects and the rendering of next_actions; loaded with them (protocol.ts, gateway.ts, full.ts), not by
 * the main entry's operations. */
import { ReaderError } from "./errors.js";
import { cmp, isObject } from "./py.js";
import { nodePath, type Artifact, type Store } from "./store.js";

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
  if (!store.pointersLoaded && isObject(store.manifest.namespace_index)) refs = (await store.fetchJson(store.manifest.namespace_index)).namespaces;
  if (!isObject(refs)) {
    const all = await store.allPointers();
    return new Map([...all].filter(([k]) => k.split(".", 1)[0] === namespace));
  }
  const ref = Object.hasOwn(refs, namespace) ? refs[namespace] : null;
  if (!isObject(ref)) return new Map();
  const tools = await store.nodeTools(await store.fetchJson(ref));
  return new Map(tools.sort((a, b) => cmp(a.tool_id, b.tool_id)).map((p) => [p.tool_id, p]));
}

/** The groups (dotted prefixes) of a namespace, or of every namespace, and its operations by tool_id. */
export async function namespaceTree(store: Store, namespace?: string): Promise<[Map<string, Group>, Map<string, Artifact>]> {
  const ops = namespace !== undefined ? await namespacePointers(store, namespace) : await store.allPointers();
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
