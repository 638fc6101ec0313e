/** JSON Schema as an agent reads it (``toolcat.reader.schema_text``): ``string | null; one of: "a", "b"; 1 ≤ value ≤ 10``. */
import { isObject, pyJson, unique, type Json } from "./py.js";

const MAX_DEPTH = 8;

export function resolve(schema: unknown, root: unknown, depth = 0): Json {
  let node = schema;
  while (isObject(node) && typeof node.$ref === "string" && depth < MAX_DEPTH) {
    const ref = node.$ref;
    if (!ref.startsWith("#/")) break;
    let target: unknown = root;
    for (const part of ref.slice(2).split("/")) {
      const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
      target = isObject(target) && Object.hasOwn(target, key) ? target[key] : null;
    }
    if (!isObject(target)) break;
    node = { ...target, ...Object.fromEntries(Object.entries(node).filter(([k]) => k !== "$ref")) };
    depth += 1;
  }
  return isObject(node) ? node : {};
}

function valueType(value: unknown): string {
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "string") return "string";
  if (Array.isArray(value)) return "array";
  return value === null ? "null" : "object";
}

const union = (parts: string[]) => unique(parts).join(" | ") || "any";

export function typeText(schema: unknown, root?: unknown, depth = 0): string {
  root = root === undefined ? schema : root;
  const node = resolve(schema, root, depth);
  if (depth >= MAX_DEPTH) return "any";
  const raw = node.type;
  let names: string[];
  if (Array.isArray(raw)) names = raw.map(String);
  else if (typeof raw === "string") names = [raw];
  else {
    for (const key of ["anyOf", "oneOf"]) {
      const branches = node[key];
      if (Array.isArray(branches)) return union(branches.filter(isObject).map((b) => typeText(b, root, depth + 1)));
    }
    if (Array.isArray(node.enum)) names = node.enum.map(valueType);
    else if ("const" in node) names = [valueType(node.const)];
    else names = "properties" in node ? ["object"] : ["any"];
  }
  if (names.includes("array")) {
    const items = resolve(node.items, root, depth + 1);
    if (Object.keys(items).length) {
      const inner = typeText(items, root, depth + 1);
      names = names.map((n) => (n === "array" ? (inner.includes(" | ") ? `array of (${inner})` : `array of ${inner}`) : n));
    }
  }
  return union(names);
}

const num = (v: unknown) => (typeof v === "number" ? String(v) : typeof v === "string" ? v : v === null ? "None" : v === true ? "True" : v === false ? "False" : pyJson(v));

function range(low: unknown, high: unknown, what: string): string | null {
  const has = (v: unknown) => v !== null && v !== undefined;
  if (has(low) && has(high)) return `${what} ${num(low)}..${num(high)}`;
  if (has(low)) return `${what} ≥ ${num(low)}`;
  if (has(high)) return `${what} ≤ ${num(high)}`;
  return null;
}

function bounds(node: Json): string[] {
  const out: string[] = [];
  const low = "minimum" in node ? `${num(node.minimum)} ≤ ` : "exclusiveMinimum" in node ? `${num(node.exclusiveMinimum)} < ` : "";
  const high = "maximum" in node ? ` ≤ ${num(node.maximum)}` : "exclusiveMaximum" in node ? ` < ${num(node.exclusiveMaximum)}` : "";
  if (low || high) out.push(`${low}value${high}`);
  for (const [what, lo, hi] of [["length", "minLength", "maxLength"], ["items", "minItems", "maxItems"], ["keys", "minProperties", "maxProperties"]] as const) {
    const text = range(node[lo], node[hi], what);
    if (text) out.push(text);
  }
  if ("multipleOf" in node) out.push(`multiple of ${num(node.multipleOf)}`);
  if (node.uniqueItems === true) out.push("unique items");
  return out;
}

export function schemaRules(schema: unknown, root?: unknown): string[] {
  root = root === undefined ? schema : root;
  const node = resolve(schema, root);
  const parts: string[] = [];
  if (Array.isArray(node.enum)) parts.push("one of: " + node.enum.map(pyJson).join(", "));
  else if ("const" in node) parts.push(`exactly ${pyJson(node.const)}`);
  if ("default" in node) parts.push(`default: ${pyJson(node.default)}`);
  parts.push(...bounds(node));
  if (typeof node.format === "string") parts.push(`format: ${node.format}`);
  if (typeof node.pattern === "string") parts.push(`pattern: ${node.pattern}`);
  return parts;
}

export function examplesText(schema: unknown): string[] {
  const node = isObject(schema) ? schema : {};
  const values = Array.isArray(node.examples) ? [...node.examples] : [];
  if ("example" in node) values.push(node.example);
  return values.map(pyJson);
}
