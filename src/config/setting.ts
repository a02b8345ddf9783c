/**
 * What a convict schema is made of, and the type it gives. A setting (a leaf) carries doc, format, default and,
 * at the top level, env; its value's type is read from its format (FormatValue), so a section's type is derived
 * from its schema and never written beside it. `section` keeps the literal formats the derivation needs.
 */
import type { FormatName, FormatValue } from './formats';

/** A convict format: one of ours, a list of allowed values, or `Object` (a mapping checked entry by entry). */
type Format = FormatName | readonly unknown[] | ObjectConstructor;

export interface Leaf {
  doc: string;
  format: Format;
  /** null with a format that refuses null: the setting is required. */
  default: unknown;
  env?: string;
  nullable?: boolean;
  /** An error never shows the value (URLs carry API keys, passwords). */
  sensitive?: boolean;
}

export interface Group {
  readonly [name: string]: Node;
}

export type Node = Leaf | Group;

export const isLeaf = (n: Node): n is Leaf => typeof n.doc === 'string' && 'format' in n;

type ValueOf<F> = F extends FormatName
  ? FormatValue[F]
  : F extends readonly (infer E)[]
    ? E
    : F extends ObjectConstructor
      ? Record<string, unknown>
      : never;

/** The value convict returns for a schema (before the loader's cross-checks and conversions). */
export type Infer<S> = S extends Leaf ? ValueOf<S['format']> : { -readonly [K in keyof S]: Infer<S[K]> };

/** A section's schema as written, its formats kept literal so `Infer` can read them. */
export const section = <const S extends Group>(schema: S): S => schema;

/** A group's defaults as a value: for groups whose every setting has one (timings, socket limits, delivery). */
export function defaultsOf<S extends Group>(schema: S): Infer<S> {
  const out: Record<string, unknown> = {};
  for (const [name, node] of Object.entries(schema)) out[name] = isLeaf(node) ? node.default : defaultsOf(node);
  return out as Infer<S>;
}
