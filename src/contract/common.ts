/**
 * The contract's building blocks: the small schemas every area reuses
 * (counts, nullable values, date-times, the proxy types) and the error body
 * constructor. TypeBox (Elysia's `t`): each schema is JSON Schema for the
 * OpenAPI document and, through Static<>, the TypeScript type of the value.
 */
import { FormatRegistry, Kind, Type as t, TypeRegistry, type TLiteral, type TSchema, type TUnion, type TUnsafe } from '@sinclair/typebox';
import { CHECK_TYPES, PROXY_TYPES } from '../proxy/types';

// The compiled checks (src/http/check-request.ts) know the `uri` format whatever is imported first
// (Elysia registers its own when it loads; either is a syntax check: the validators judge the URL).
if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', (v) => URL.canParse(v));

/** One of a fixed list of strings (JSON Schema `enum`-like: an anyOf of consts). */
export const oneOf = <const T extends readonly string[]>(values: T, opts: { description?: string; default?: T[number] } = {}): TUnion<TLiteral<T[number]>[]> =>
  t.Union(values.map((v) => t.Literal(v)), opts) as TUnion<TLiteral<T[number]>[]>;
/**
 * One of a fixed list of strings in a query: JSON Schema `enum` (the kind
 * Elysia's t.UnionEnum has, checked the same way), so the OpenAPI plugin
 * keeps its description and default, where it writes a union of consts as
 * a bare `enum` without them.
 */
export const queryOneOf = <const T extends readonly string[]>(values: T, opts: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> =>
  t.Unsafe<T[number]>({ ...opts, [Kind]: 'UnionEnum', type: 'string', enum: [...values] });
// the same check as Elysia's (registered when it loads), for the contract's compiled checks whatever is imported first
if (!TypeRegistry.Has('UnionEnum')) TypeRegistry.Set('UnionEnum', (schema: { enum: unknown[] }, value) => typeof value === 'string' && schema.enum.includes(value));
/** The value or null. */
export const orNull = <T extends TSchema>(schema: T, opts: { description?: string } = {}) => t.Union([schema, t.Null()], opts);

export const int0 = (opts: { description?: string } = {}) => t.Integer({ minimum: 0, ...opts });
export const dateTime = (opts: { description?: string } = {}) => t.String({ format: 'date-time', ...opts });
export const dateTimeOrNull = (opts: { description?: string } = {}) => orNull(t.String({ format: 'date-time' }), opts);
/** A count per name (countries, ISPs, error codes...). */
export const counts = (opts: { description?: string; maxProperties?: number } = {}) => t.Record(t.String(), int0(), opts);
export const closed = { additionalProperties: false } as const;

/** The protocols a proxy is checked as. */
export const proxyType = (opts: { description?: string } = {}) => oneOf(PROXY_TYPES, opts);
/** What a check (or a pool) asks for: a protocol or `auto`. */
export const checkType = (opts: { description?: string; default?: (typeof CHECK_TYPES)[number] } = {}) => oneOf(CHECK_TYPES, opts);
/** The protocols in the order an `auto` check reports them. */
export const AUTO_ORDER = ['socks5', 'socks4', 'http'] as const;

/** `{error, message, ...extra}`: every error body of the contract (closed). */
export const errorBody = <E extends TSchema, P extends Record<string, TSchema> = {}>(error: E, extra?: P) =>
  t.Object({ error, message: t.String(), ...(extra ?? ({} as P)) }, closed);

/** A proxy's address as the answers show it. */
export const ProxyAddress = t.Object(
  {
    host: t.String(),
    port: t.Integer({ minimum: 1, maximum: 65535 }),
    hasAuth: t.Boolean(),
    username: t.Optional(t.String()),
    password: t.Optional(t.String()),
  },
  closed,
);
/** `{code, message}`: a failed proxy's error, a warning. */
export const CodeMessage = t.Object({ code: t.String(), message: t.String() }, closed);
/** Two decimals and " ms" (responseTime). */
export const RESPONSE_TIME_PATTERN = '^[0-9]+\\.[0-9]{2} ms$';
export const SECONDS_PATTERN = '^[0-9]+\\.[0-9]{2}s$';
export const PERCENT_PATTERN = '^[0-9]+\\.[0-9]{2}%$';

/** Where a working proxy exits (its last passing check's, on a pool proxy): the records' geo fields. */
export const exitFields = () => ({
  origin: orNull(t.String()),
  country: orNull(t.String()),
  country_name: orNull(t.String()),
  location: orNull(t.String()),
  isp: orNull(t.String()),
  asn: orNull(t.Integer()),
});

/** A query parameter that is `true` or `false` (the text on the wire). */
export const queryBoolean = (opts: { description?: string; default?: 'true' | 'false' } = {}) => queryOneOf(['true', 'false'] as const, opts);
