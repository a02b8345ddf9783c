/**
 * Argument validation against a tool's inputSchema, for the subset of JSON Schema our tools use (an object of
 * string/object/integer/boolean properties with length bounds and string enums, `required`, `additionalProperties: false`).
 * Compiled once per tool; a failure becomes a tool result with isError so the model can correct itself.
 * A null optional argument counts as omitted.
 */
type Json = Record<string, unknown>;

export type ArgsResult = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };
export type ArgsValidator = (args: unknown) => ArgsResult;

function typeOk(type: unknown, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

export function compileArgsValidator(schema: Json): ArgsValidator {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const closed = schema.additionalProperties === false;
  const names = Object.keys(props);
  return (raw) => {
    const args = raw === undefined || raw === null ? {} : raw;
    if (typeof args !== 'object' || Array.isArray(args)) return { ok: false, message: 'arguments must be an object' };
    const a = args as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    if (closed) {
      for (const k of Object.keys(a)) {
        if (!(k in props))
          return { ok: false, message: `unknown argument ${JSON.stringify(k)} (expected ${names.join(', ')})` };
      }
    }
    for (const [name, spec] of Object.entries(props)) {
      const v = a[name];
      if (v === undefined || (v === null && !required.has(name))) {
        if (required.has(name))
          return {
            ok: false,
            message: `${name} is required: ${typeof spec.description === 'string' ? spec.description : ''}`.trim(),
          };
        continue;
      }
      if (!typeOk(spec.type, v))
        return {
          ok: false,
          message: `${name} must be ${spec.type === 'object' ? 'an object' : `a ${String(spec.type)}`}`,
        };
      if (typeof v === 'string') {
        if (typeof spec.minLength === 'number' && v.length < spec.minLength)
          return { ok: false, message: `${name} must not be empty` };
        if (typeof spec.maxLength === 'number' && v.length > spec.maxLength)
          return { ok: false, message: `${name} is longer than ${spec.maxLength} characters` };
        if (Array.isArray(spec.enum) && !spec.enum.includes(v))
          return { ok: false, message: `${name} must be one of ${spec.enum.map((e) => JSON.stringify(e)).join(', ')}` };
      }
      out[name] = v;
    }
    return { ok: true, args: out };
  };
}
