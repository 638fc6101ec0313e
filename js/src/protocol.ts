/** Each dialect's protocol (``toolcat.reader.protocol``): abstract next_actions rendered as calls of the dialect's own tools.
 * Catalog.run loads this module when an answer first has a next_action or hints to render. */
import type { Action } from "./errors.js";
import { isObject, type Json } from "./py.js";
import { aliasOf, isGroup, isNode } from "./namespaces.js";
import type { Store } from "./store.js";

export type Dialect = "spec" | "gateway" | "namespaced";

/** A dialect's protocol: which of its tools each abstract op names (hints), and its next_action for an op. */
export interface Protocol {
  names: Record<string, string>;
  action(op: string, args: Json, world: Store): Promise<Action>;
}
const OPS = ["list", "search", "search_nodes", "search_in", "describe", "call", "help", "read_resource"];
const TOOL_OPS: Record<string, string> = {
  tool_help: "help", tool_exec: "call", tool_batch: "call", tool_describe: "describe", tool_list: "list", find_tool: "search",
  expand_tool: "describe", call_tool: "call", search_tool_by_category: "search_in", search_nodes: "search_nodes", read_skill_resource: "read_resource",
};
const HINT_WORDS = new RegExp("\\b(" + Object.keys(TOOL_OPS).sort((a, b) => b.length - a.length).join("|") + ")\\b|\\blist(?=\\()", "g");

export function pathText(path: unknown): string {
  if (Array.isArray(path)) return path.map(String).join("/");
  if (typeof path !== "string" || ["root", "/", "."].includes(path.trim())) return "";
  return path.trim();
}

function abstract(action: unknown): [string, Json] | null {
  if (!isObject(action) || typeof action.op !== "string") return null;
  const op = action.op;
  const args: Json = isObject(action.args) ? action.args : {};
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

const words = (path: string) => path.replace(/[./_\s-]+/g, " ").trim() || "tools";
const dotted = (args: Json) => pathText(args.path ?? "").replaceAll("/", ".").replace(/^\.+|\.+$/g, "");

async function specAction(op: string, args: Json, world: Store): Promise<Action> {
  switch (op) {
    case "list": return { op: "list", args: { path: pathText(args.path ?? "") } };
    case "search": return { op: "search_tool_by_category", args: { query: args.query, category_path: "" } };
    case "search_nodes": return { op: "search_nodes", args: { query: args.query } };
    case "search_in": return { op: "search_tool_by_category", args: { query: args.query, category_path: pathText(args.path ?? "") } };
    case "describe": return { op: "expand_tool", args: { tool_id: args.tool_id } };
    case "call": return { op: "call_tool", args: { tool_id: args.tool_id, args: args.args || {} } };
    case "read_resource": return { op: "call_tool", args: { tool_id: args.tool_id, args: { resource: args.path } } };
  }
  const path = pathText(args.path ?? "");
  if (!path) return { op: "list", args: { path: "" } };
  const toolId = await world.resolve(path);
  if (toolId !== null) return { op: "expand_tool", args: { tool_id: toolId } };
  if (await isNode(world, path)) return { op: "list", args: { path } };
  return { op: "search_tool_by_category", args: { query: words(path), category_path: "" } };
}

async function namespacedAction(op: string, args: Json, world: Store): Promise<Action> {
  if (op === "search" || op === "search_nodes" || op === "search_in") return { op: "find_tool", args: { purpose: args.query } };
  if (op === "describe") return { op: "tool_describe", args: { name: args.tool_id } };
  if (op === "call" || op === "read_resource") {
    const toolId = (await world.resolve(args.tool_id)) ?? String(args.tool_id);
    return { op: await aliasOf(world, toolId), args: op === "call" ? (args.args as Json) || {} : { resource: args.path } };
  }
  const path = dotted(args);
  if (!path) return { op: "tool_list", args: {} };
  const found = await world.resolve(path);
  if (found !== null) return { op: "tool_describe", args: { name: found } };
  if (await isGroup(world, path)) return { op: "tool_list", args: { namespace: path } };
  return { op: "find_tool", args: { purpose: words(path) } };
}

const SPEC: Protocol = {
  names: { list: "list", search: "search_tool_by_category", search_nodes: "search_nodes", search_in: "search_tool_by_category", describe: "expand_tool", call: "call_tool", help: "expand_tool", read_resource: "call_tool" },
  action: specAction,
};

async function gatewayAction(op: string, args: Json, world: Store): Promise<Action> {
  if (op === "search" || op === "search_nodes" || op === "search_in") return { op: "tool_help", args: { query: args.query } };
  if (op === "describe") return { op: "tool_help", args: { path: args.tool_id } };
  if (op === "call") return { op: "tool_exec", args: { op: args.tool_id, args: args.args || {} } };
  if (op === "read_resource") return { op: "tool_exec", args: { op: args.tool_id, args: { resource: args.path } } };
  const path = dotted(args);
  if (!path) return { op: "tool_help", args: { path: "root" } };
  if ((await world.resolve(path)) !== null || (await isGroup(world, path))) return { op: "tool_help", args: { path } };
  return { op: "tool_help", args: { query: words(path) } };
}

const GATEWAY: Protocol = {
  names: { list: "tool_help", search: "tool_help", search_nodes: "tool_help", search_in: "tool_help", describe: "tool_help", call: "tool_exec", help: "tool_help", read_resource: "tool_exec" },
  action: gatewayAction,
};

const NAMESPACED: Protocol = {
  names: { list: "tool_list", search: "find_tool", search_nodes: "find_tool", search_in: "find_tool", describe: "tool_describe", call: "tool_describe", help: "tool_describe", read_resource: "tool_describe" },
  action: namespacedAction,
};

export async function renderAction(action: unknown, dialect: Protocol, world: Store): Promise<Action | null> {
  const found = abstract(action);
  if (found === null) return null;
  const [op, args] = found;
  for (const key of ["query", "tool_id"]) {
    if (key in args && (typeof args[key] !== "string" || !(args[key] as string).trim())) {
      return key === "query" ? dialect.action("help", { path: "" }, world) : null;
    }
  }
  if (op === "call" && !isObject(args.args ?? {})) args.args = {};
  if (op === "read_resource" && typeof args.path !== "string") return null;
  return dialect.action(op, args, world);
}

export function renderHint(text: unknown, dialect: Protocol): unknown {
  if (typeof text !== "string") return text;
  return text.replace(HINT_WORDS, (word) => dialect.names[TOOL_OPS[word] ?? "list"] as string);
}

/** ``envelope`` with its next_action and hints in ``dialect``'s own tool names (in place). */
export async function render(envelope: Json, name: Dialect, world: Store): Promise<Json> {
  const dialect = { spec: SPEC, gateway: GATEWAY, namespaced: NAMESPACED }[name];
  const holder = isObject(envelope.error) ? envelope.error : envelope;
  if ("next_action" in holder) holder.next_action = await renderAction(holder.next_action, dialect, world);
  if (Array.isArray(holder.hints)) holder.hints = holder.hints.map((h) => renderHint(h, dialect));
  if (holder !== envelope && Array.isArray(envelope.hints)) envelope.hints = envelope.hints.map((h) => renderHint(h, dialect));
  return envelope;
}
