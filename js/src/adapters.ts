/** Progressive disclosure for agent hosts: a catalogue as tool definitions for OpenAI's function format and the
 * Vercel AI SDK, with a ``find_tool`` → ``expand_tool`` loop. The reader runs no tool: a catalogue tool the model
 * calls is handed to the host's ``execute``, once the model has expanded it (its schema was in front of it). */
import type { Catalog } from "./catalog.js";
import { errorEnvelope } from "./errors.js";
import { isObject, type Json } from "./py.js";

/** The host runs a catalogue tool: the canonical id, the model's arguments and the expanded spec. */
export type Execute = (toolId: string, args: Json, spec: Json) => Promise<unknown> | unknown;

export interface OpenAIFunction {
  type: "function";
  function: { name: string; description: string; parameters: Json; strict?: boolean };
}

const FIND = "Find tools for a purpose in plain words (0-1 relevance). Then expand_tool one of them before calling it.";
const EXPAND = "Get a tool's full definition (arguments schema, examples) by name or alias.";
const CALL = "Run a tool you expanded, with arguments matching its args_schema.";
const obj = (properties: Json, required: string[]): Json => ({ type: "object", properties, required, additionalProperties: false });
const FIND_SCHEMA = obj({ purpose: { type: "string", description: "Action, object, domain: 'upload a file to an S3 bucket'" }, limit: { type: "integer", minimum: 1, maximum: 50 } }, ["purpose"]);
const EXPAND_SCHEMA = obj({ tool_id: { type: "string", description: 'Name ("file.read") or alias ("file_read").' } }, ["tool_id"]);
const CALL_SCHEMA = obj({ tool_id: { type: "string" }, args: { type: "object" } }, ["tool_id", "args"]);

/** The discovery loop's state: which tools the model has expanded (by canonical id, with their alias and spec). */
export class Discovery {
  readonly expanded = new Map<string, Json>();
  private readonly aliases = new Map<string, string>();

  constructor(readonly catalog: Catalog, private readonly execute?: Execute) {}

  /** OpenAI function definitions: find_tool and expand_tool, then every expanded tool under its own alias. */
  openaiTools(): OpenAIFunction[] {
    const fn = (name: string, description: string, parameters: Json): OpenAIFunction => ({ type: "function", function: { name, description, parameters } });
    return [
      fn("find_tool", FIND, FIND_SCHEMA),
      fn("expand_tool", EXPAND, EXPAND_SCHEMA),
      ...[...this.expanded.values()].map((spec) => fn(String(spec.alias), String(spec.summary ?? ""), isObject(spec.args_schema) ? spec.args_schema : { type: "object" })),
    ];
  }

  /** Answer one tool call of the model (OpenAI's ``name`` and parsed ``arguments``), as a JSON-able value. */
  async handle(name: string, args: unknown): Promise<unknown> {
    const input: Json = isObject(args) ? args : {};
    if (name === "find_tool") return this.catalog.findTool(input.purpose, input.limit ?? 5);
    if (name === "expand_tool") return this.expand(input.tool_id);
    if (name === "call_tool") return this.call(input.tool_id, input.args);
    const toolId = this.aliases.get(name);
    return toolId === undefined ? this.notExpanded(name) : this.call(toolId, input);
  }

  /** expand_tool, remembering the tool so that it can be called next. */
  async expand(name: unknown): Promise<Json> {
    const answer = await this.catalog.expandTool(name);
    if (answer.ok === true && typeof answer.tool_id === "string") {
      this.expanded.set(answer.tool_id, answer);
      this.aliases.set(String(answer.alias), answer.tool_id);
    }
    return answer;
  }

  /** Hand a call of an expanded tool to the host's ``execute``; an envelope says why when it cannot run. */
  async call(name: unknown, args: unknown): Promise<unknown> {
    const toolId = typeof name === "string" ? ((await this.catalog.resolve(name)) ?? name) : "";
    const spec = this.expanded.get(toolId);
    if (!spec) return this.notExpanded(String(name));
    if (!this.execute) {
      return errorEnvelope("NOT_EXECUTABLE", `${toolId} is run by the host application, which gave this adapter no execute function`, { help_path: toolId });
    }
    return this.execute(toolId, isObject(args) ? args : {}, spec);
  }

  private notExpanded(name: string): Json {
    return errorEnvelope("NOT_AUTHORIZED", `${name} has not been expanded in this conversation`, {
      hints: ["Expand a tool (its arguments and examples) before calling it."],
      next_action: { op: "expand_tool", args: { tool_id: name } },
      help_path: name,
    });
  }

  /** Vercel AI SDK tools (``generateText({ tools })``): find_tool, expand_tool and call_tool, a fixed set.
   * Pass the SDK's ``jsonSchema`` helper (``import { jsonSchema } from "ai"``): the reader depends on nothing. */
  aiSdkTools(jsonSchema: (schema: Json) => unknown): Record<string, { description: string; parameters: unknown; inputSchema: unknown; execute: (args: Json) => Promise<unknown> }> {
    const tool = (description: string, schema: Json, run: (args: Json) => Promise<unknown>) => {
      const parameters = jsonSchema(schema);
      return { description, parameters, inputSchema: parameters, execute: run };
    };
    return {
      find_tool: tool(FIND, FIND_SCHEMA, (a) => this.catalog.findTool(a.purpose, a.limit ?? 5)),
      expand_tool: tool(EXPAND, EXPAND_SCHEMA, (a) => this.expand(a.tool_id)),
      call_tool: tool(CALL, CALL_SCHEMA, (a) => this.call(a.tool_id, a.args)),
    };
  }
}

/** A discovery loop over ``catalog``; ``execute`` runs the catalogue tools the model calls (the host's part). */
export function discovery(catalog: Catalog, execute?: Execute): Discovery {
  return new Discovery(catalog, execute);
}
