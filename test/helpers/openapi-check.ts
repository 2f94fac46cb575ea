/**
 * Real responses against the OpenAPI document the service serves
 * (/docs/json), with openapi-backend doing the routing and the JSON Schema
 * work. A response passes only when:
 *
 * - its (method, path) is an operation of the document; a known path called
 *   with another method must be a 405 that the path's operation declares; a
 *   path the document does not know must be the router's 404
 *   (`components.schemas.NotFound`);
 * - its status is declared by the operation (an undeclared status fails even
 *   when the body looks fine);
 * - its media type (Content-Type without parameters) is declared for that
 *   status; a response declared without content must have an empty body;
 * - a JSON body parses and matches the declared schema (a JSON media type
 *   with no schema fails: nothing would be checked).
 *
 * `checkedCall` / `checkedFetch` are drop-in replacements of the e2e tests'
 * `call` (test/helpers/service.ts) and `fetch` that throw on the first
 * mismatch; the document is fetched once per origin.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import OpenAPIBackend from 'openapi-backend';
import { ValidationContext, type Document, type Operation } from 'openapi-backend';
import { call, type CallResult } from './service';

export interface ResponseSample {
  method: string;
  /** Absolute URL or a path with optional query. */
  url: string;
  status: number;
  /** The Content-Type header, or null. */
  contentType: string | null;
  /** The raw body. */
  text: string;
}

type ResponseObj = { content?: Record<string, { schema?: unknown }> };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The formats the document uses (ajv knows none by itself). */
const FORMATS: Record<string, (s: string) => boolean> = {
  'date-time': (s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
  uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
  uri: (s) => URL.canParse(s),
};

const mediaType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
const isJsonType = (t: string) => t === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(t);

export class OpenApiResponseChecker {
  private constructor(private readonly api: OpenAPIBackend) {}

  /**
   * A checker for one document, which must itself be valid OpenAPI
   * (@seriousme/openapi-schema-validator: openapi-backend's own definition
   * check knows 3.0 only, so it is skipped with `quick`). A deep copy is
   * taken: openapi-backend dereferences in place.
   */
  static async create(document: unknown): Promise<OpenApiResponseChecker> {
    const validity = await new Validator().validate(structuredClone(document) as never);
    if (!validity.valid) throw new Error(`not a valid OpenAPI document: ${JSON.stringify(validity.errors).slice(0, 2000)}`);
    const api = new OpenAPIBackend({
      definition: structuredClone(document) as Document,
      validate: true,
      strict: true,
      quick: true,
      ignoreTrailingSlashes: false,
      customizeAjv: (ajv) => {
        for (const [name, test] of Object.entries(FORMATS)) ajv.addFormat(name, test);
        return ajv;
      },
    });
    await api.init();
    return new OpenApiResponseChecker(api);
  }

  /** Everything wrong with one response; empty when it matches the document. */
  problems(sample: ResponseSample): string[] {
    const url = new URL(sample.url, 'http://openapi-check.invalid');
    const method = sample.method.toLowerCase();
    const where = `${sample.method.toUpperCase()} ${url.pathname} -> ${sample.status}`;
    const req = { method, path: url.pathname, headers: {}, query: Object.fromEntries(url.searchParams) };
    const op = this.api.router.matchOperation(req);
    if (op === undefined) {
      const other = METHODS.map((m) => this.api.router.matchOperation({ ...req, method: m })).find((o) => o !== undefined);
      if (other !== undefined) {
        // a known path, another method: the router's 405, as the path's operation declares it
        if (sample.status !== 405) return [`${where}: ${sample.method.toUpperCase()} is not an operation of ${other.path}, yet the status is not 405`];
        return this.responseProblems(other, sample, where);
      }
      if (sample.status !== 404) return [`${where}: the path is not in the OpenAPI document, yet the status is not 404`];
      return this.schemaProblems(this.componentSchema('NotFound'), sample, where);
    }
    return this.responseProblems(op, sample, where);
  }

  /** Throws an Error listing the problems, if any. */
  assert(sample: ResponseSample): void {
    const p = this.problems(sample);
    if (p.length > 0) throw new Error(`response does not match the OpenAPI document:\n  ${p.join('\n  ')}\n  body: ${sample.text.slice(0, 500)}`);
  }

  private responseProblems(op: Operation, sample: ResponseSample, where: string): string[] {
    const responses = (op.responses ?? {}) as Record<string, ResponseObj>;
    const declared = responses[String(sample.status)];
    if (declared === undefined) {
      return [`${where}: status ${sample.status} is not declared by ${op.operationId} (declared: ${Object.keys(responses).join(', ') || 'none'})`];
    }
    const content = declared.content;
    if (content === undefined || Object.keys(content).length === 0) {
      return sample.text === '' ? [] : [`${where}: the document declares no body for this status, but one came`];
    }
    const type = mediaType(sample.contentType);
    const media = content[type];
    if (media === undefined) return [`${where}: media type "${type}" is not declared (declared: ${Object.keys(content).join(', ')})`];
    if (!isJsonType(type)) return [];
    if (media.schema === undefined) return [`${where}: ${type} is declared without a schema, so nothing can be checked`];
    const body = parse(sample.text);
    if (!body.ok) return [`${where}: the body is not JSON although the media type is ${type}`];
    // openapi-backend only knows 'application/json' schemas
    const result = this.api.validator.validateResponse(body.value, op, sample.status);
    return (result.errors ?? []).map((e) => `${where}: ${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /**
   * Everything wrong with a webhook delivery's body (`{type, timestamp,
   * data}`) against the document's OpenAPI 3.1 `webhooks` entry of its type;
   * empty when it matches.
   */
  webhookProblems(body: unknown): string[] {
    const type = (body as { type?: unknown })?.type;
    const hooks = (this.api.definition as { webhooks?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: unknown }> } } }> }).webhooks;
    const schema = typeof type === 'string' ? hooks?.[type]?.post?.requestBody?.content?.['application/json']?.schema : undefined;
    if (schema === undefined) return [`webhook ${String(type)}: no such event in the document's webhooks`];
    const validate = this.api.validator.getAjv(ValidationContext.RequestBody).compile(schema as object);
    validate(body);
    return (validate.errors ?? []).map((e) => `webhook ${type}: ${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  private componentSchema(name: string): unknown {
    const schema = (this.api.definition.components?.schemas as Record<string, unknown> | undefined)?.[name];
    if (schema === undefined) throw new Error(`components.schemas.${name} is missing from the OpenAPI document`);
    return schema;
  }

  private schemaProblems(schema: unknown, sample: ResponseSample, where: string): string[] {
    if (!isJsonType(mediaType(sample.contentType))) return [`${where}: expected a JSON body, got "${sample.contentType}"`];
    const body = parse(sample.text);
    if (!body.ok) return [`${where}: the body is not JSON`];
    const validate = this.api.validator.getAjv(ValidationContext.Response).compile(schema as object);
    validate(body.value);
    return (validate.errors ?? []).map((e) => `${where}: ${e.instancePath || '(body)'} ${e.message}`);
  }
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const checkers = new Map<string, Promise<OpenApiResponseChecker>>();

/** The checker of the document a running service serves at /docs/json (once per origin). */
export function checkerFor(origin: string): Promise<OpenApiResponseChecker> {
  let c = checkers.get(origin);
  if (c === undefined) {
    c = (async () => {
      const res = await fetch(`${origin}/docs/json`);
      if (res.status !== 200) throw new Error(`GET ${origin}/docs/json answered ${res.status}`);
      return OpenApiResponseChecker.create(await res.json());
    })();
    checkers.set(origin, c);
  }
  return c;
}

async function checkResponse(method: string, url: string, res: Response, text: string): Promise<void> {
  const checker = await checkerFor(new URL(url).origin);
  checker.assert({ method, url, status: res.status, contentType: res.headers.get('content-type'), text });
}

/** `fetch`, then the response is checked against the served document (the body is read from a clone). */
export async function checkedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  await checkResponse(init.method ?? 'GET', url, res, await res.clone().text());
  return res;
}

/** test/helpers/service.ts `call`, with the response checked against the served document. */
export async function checkedCall(url: string, init: RequestInit & { json?: unknown } = {}): Promise<CallResult> {
  const r = await call(url, init);
  await checkResponse(init.method ?? 'GET', url, r.response, r.text);
  return r;
}
