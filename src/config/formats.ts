/**
 * Convict formats shared by the schemas. Each validates strictly and coerces env strings strictly
 * (convict's own `nat` would read "12abc" as 12; these refuse it).
 */
import convict from 'convict';
import { parseBaseUnits } from '../util/token-amounts';
import { parseUsd } from '../util/usd-amounts';
import { decodeAddress } from '../util/base58';
import { normalizeFeedId } from '../util/feed-id';
import { isRecord } from '../util/is-record';
import { TOKEN_OPS, type TokenOp } from './sections/token-ops';

/** A listener's address, parsed from `host:port`. */
export interface ListenAddress {
  host: string;
  port: number;
}

export function parseListen(text: string): ListenAddress | null {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 0 || port > 65535) return null;
  const host = m[1] ?? m[2];
  return host === undefined ? null : { host, port };
}

/**
 * The value each format lets through: what a setting of that format holds once convict has validated it. The
 * section types are derived from it (src/config/setting.ts), so a format and its type are stated together.
 */
export interface FormatValue {
  'nat-strict': number;
  'nat-or-null': number | null;
  'positive-int': number;
  'bool-strict': boolean;
  'listen-address': string;
  'listen-address-or-off': string | null;
  'string-list': string[];
  'address-list': string[];
  'address-list-or-null': string[] | null;
  'base-units': string | number;
  'base-units-or-null': string | number | null;
  'usd-or-null': string | null;
  'feed-id': string;
  'price-asset': string;
  'token-ops': TokenOp[];
  address: string;
  'address-or-null': string | null;
  'non-empty-string': string;
  'string-or-null': string | null;
  'http-url-or-null': string | null;
  'http-url-list': string[];
  'ws-url-or-null': string | null;
  'ws-url-list': string[];
  'object-map': Record<string, unknown>;
  'object-list': unknown[];
}

export type FormatName = keyof FormatValue;

let registered = false;

const HTTP_URL = /^https?:\/\/[^\s]+$/;
const WS_URL = /^wss?:\/\/[^\s]+$/;

/** A comma-separated env var read as a list; a value already a list passes as it is. */
function commaList(v: unknown): unknown {
  return typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : v;
}

/** A whole number from `min` up; an env string must be digits only (convict's `nat` reads "12abc" as 12). */
function wholeNumber(min: number) {
  return {
    validate(v: unknown) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
        throw new Error(`must be a whole number, ${min} or more`);
    },
    coerce: (v: unknown) => (typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : v),
  };
}

/** A list of base58 addresses; with `orNull`, null turns the setting off. */
function addressList(orNull: boolean) {
  return {
    validate(v: unknown) {
      if (orNull && v === null) return;
      if (!Array.isArray(v)) throw new Error(`must be a list of base58 addresses${orNull ? ', or null' : ''}`);
      for (const s of v)
        if (typeof s !== 'string' || decodeAddress(s) === null)
          throw new Error(`${JSON.stringify(s)} is not a base58 address`);
    },
  };
}

/** A URL of one scheme, or null (an empty string from an env var is null). */
function urlOrNull(pattern: RegExp, what: string) {
  return {
    validate(v: unknown) {
      if (v === null) return;
      if (typeof v !== 'string' || !pattern.test(v)) throw new Error(`must be ${what} or null`);
    },
    coerce: (v: unknown) => (typeof v === 'string' && v.trim() === '' ? null : v),
  };
}

/** A list of URLs of one scheme, comma-separated in an env var. The message never repeats a URL: providers put API
 * keys in them. */
function urlList(pattern: RegExp, one: string, many: string) {
  return {
    validate(v: unknown) {
      if (!Array.isArray(v)) throw new Error(`must be a list of ${many}`);
      v.forEach((u: unknown, i) => {
        if (typeof u !== 'string' || !pattern.test(u)) throw new Error(`entry ${i} is not ${one}`);
      });
    },
    coerce: commaList,
  };
}

/** Registers the formats once per process (convict keeps a global registry). */
export function registerFormats(): void {
  if (registered) return;
  registered = true;
  const formats: Record<FormatName, convict.Format> = {
    'nat-strict': wholeNumber(0),
    'nat-or-null': {
      validate(v: unknown) {
        if (v !== null && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0))
          throw new Error('must be a whole number (>= 0) or null');
      },
      coerce: (v: unknown) => {
        if (typeof v !== 'string') return v;
        const t = v.trim();
        if (['', 'null', 'none'].includes(t.toLowerCase())) return null;
        return /^\d+$/.test(t) ? Number(t) : v;
      },
    },
    'positive-int': wholeNumber(1),
    'bool-strict': {
      validate(v: unknown) {
        if (typeof v !== 'boolean') throw new Error('must be true or false');
      },
      coerce: (v: unknown) => {
        if (typeof v !== 'string') return v;
        const t = v.trim().toLowerCase();
        if (t === 'true' || t === '1' || t === 'yes') return true;
        if (t === 'false' || t === '0' || t === 'no') return false;
        return v;
      },
    },
    'listen-address': {
      validate(v: unknown) {
        if (typeof v !== 'string' || parseListen(v) === null)
          throw new Error('must be host:port, e.g. 127.0.0.1:8790 or [::1]:8790');
      },
    },
    'listen-address-or-off': {
      validate(v: unknown) {
        if (v === null) return;
        if (typeof v !== 'string' || parseListen(v) === null)
          throw new Error('must be host:port, or null to turn it off');
      },
      coerce: (v: unknown) =>
        typeof v === 'string' && ['', 'off', 'null', 'none'].includes(v.trim().toLowerCase()) ? null : v,
    },
    'string-list': {
      validate(v: unknown) {
        if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s.trim() === ''))
          throw new Error('must be a list of non-empty strings');
      },
      coerce: commaList,
    },
    'address-list': addressList(false),
    'address-list-or-null': addressList(true),
    'base-units': {
      validate(v: unknown) {
        if (parseBaseUnits(v) === null)
          throw new Error('must be a whole number of base units (0 to 18446744073709551615), a number or a string');
      },
    },
    'base-units-or-null': {
      validate(v: unknown) {
        if (v !== null && parseBaseUnits(v) === null)
          throw new Error('must be a whole number of base units (0 to 18446744073709551615), or null');
      },
    },
    'usd-or-null': {
      validate(v: unknown) {
        if (v === null) return;
        const r = parseUsd(v);
        if (!r.ok) throw new Error(r.message);
      },
    },
    'feed-id': {
      validate(v: unknown) {
        if (typeof v !== 'string' || normalizeFeedId(v) === null)
          throw new Error('must be a Pyth feed id: 64 hex digits, with or without 0x');
      },
    },
    'price-asset': {
      validate(v: unknown) {
        if (v !== 'SOL' && (typeof v !== 'string' || decodeAddress(v) === null))
          throw new Error('must be SOL or a mint address (base58)');
      },
    },
    'token-ops': {
      validate(v: unknown) {
        if (!Array.isArray(v)) throw new Error(`must be a list of: ${TOKEN_OPS.join(', ')}`);
        for (const s of v)
          if (!(TOKEN_OPS as readonly unknown[]).includes(s))
            throw new Error(`${JSON.stringify(s)} is not one of: ${TOKEN_OPS.join(', ')}`);
      },
    },
    address: {
      validate(v: unknown) {
        if (typeof v !== 'string' || decodeAddress(v) === null)
          throw new Error(`${JSON.stringify(v)} is not a base58 address`);
      },
    },
    'address-or-null': {
      validate(v: unknown) {
        if (v !== null && (typeof v !== 'string' || decodeAddress(v) === null))
          throw new Error(`${JSON.stringify(v)} is not a base58 address`);
      },
    },
    'non-empty-string': {
      validate(v: unknown) {
        if (typeof v !== 'string' || v.trim() === '') throw new Error('must be a non-empty string');
      },
    },
    'string-or-null': {
      validate(v: unknown) {
        if (v !== null && (typeof v !== 'string' || v.trim() === ''))
          throw new Error('must be a non-empty string or null');
      },
      coerce: (v: unknown) => (typeof v === 'string' && v.trim() === '' ? null : v),
    },
    'http-url-or-null': urlOrNull(HTTP_URL, 'an http(s) URL'),
    'http-url-list': urlList(HTTP_URL, 'an http(s) URL', 'http(s) URLs'),
    'ws-url-or-null': urlOrNull(WS_URL, 'a ws(s) URL'),
    'ws-url-list': urlList(WS_URL, 'a ws(s) URL', 'ws(s) URLs'),
    'object-map': {
      validate(v: unknown) {
        if (!isRecord(v)) throw new Error('must be a mapping (name: settings)');
      },
    },
    'object-list': {
      validate(v: unknown) {
        if (!Array.isArray(v) || v.some((e) => !isRecord(e))) throw new Error('must be a list of mappings');
      },
    },
  };
  convict.addFormats(formats);
}
