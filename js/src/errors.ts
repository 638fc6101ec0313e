/** Envelopes (docs/reader.md, "Errors"): a bad call is answered with data an agent can act on; a success is lean. */
import { isObject, type Json } from "./py.js";

export interface Action {
  op: string;
  args: Json;
}

export interface ErrorOptions {
  details?: Json;
  hints?: string[];
  next_action?: Action | null;
  help_path?: string;
}

/** Thrown inside the reader; operations turn it into an envelope. Only ``Catalog.open`` lets it out. */
export class ReaderError extends Error {
  readonly code: string;
  readonly details: Json;
  readonly hints: string[];
  next_action: Action | null;
  readonly help_path: string;

  constructor(code: string, message: string, options: ErrorOptions = {}) {
    super(message);
    this.name = "ReaderError";
    this.code = code;
    this.details = options.details ?? {};
    this.hints = options.hints ?? [];
    this.next_action = options.next_action ?? null;
    this.help_path = options.help_path ?? "root";
  }

  envelope(): Json {
    return errorEnvelope(this.code, this.message, this);
  }
}

export function errorEnvelope(code: string, message: string, options: ErrorOptions = {}): Json {
  return {
    ok: false,
    error: {
      code,
      message,
      details: options.details ?? {},
      hints: [...(options.hints ?? [])],
      next_action: options.next_action ?? null,
      help_path: options.help_path ?? "root",
    },
  };
}

export function isError(result: unknown): result is { ok: false; error: Json } {
  const r = result as Json | null;
  return typeof r === "object" && r !== null && r.ok === false && typeof r.error === "object" && r.error !== null;
}

/** A success envelope: ``ok: true``, the data, and where to go next. */
export function ok(data: Json, options: { help_path?: string; hints?: string[]; next_action?: Action | null } = {}): Json {
  return { ok: true, ...data, help_path: options.help_path ?? "root", hints: [...(options.hints ?? [])], next_action: options.next_action ?? null };
}

/** BAD_REQUEST pointing the agent at the help of ``help_path``. */
export function bad(message: string, options: { help_path?: string; hints?: string[]; details?: Json } = {}): ReaderError {
  const help_path = options.help_path ?? "root";
  return new ReaderError("BAD_REQUEST", message, { ...options, help_path, next_action: { op: "help", args: { path: help_path } } });
}

function empty(value: unknown): boolean {
  return value === null || value === undefined || ((typeof value === "string" || Array.isArray(value)) && !value.length) || (isObject(value) && !Object.keys(value).length);
}

/** ``data`` without its null and empty keys (``keep`` names keys always kept). */
export function dropEmpty(data: Json, keep: string[] = []): Json {
  return Object.fromEntries(Object.entries(data).filter(([k, v]) => keep.includes(k) || !empty(v)));
}

const KEEP = ["ok", "path", "next_cursor", "results", "matches", "tools", "nodes", "count", "help_path", "result", "args"];

/** A success answer without null/empty top-level fields; an error envelope keeps its documented shape. */
export function lean(envelope: Json): Json {
  return envelope.ok === true ? dropEmpty(envelope, KEEP) : { ...envelope };
}
