/**
 * Reads a request body as text with a hard byte limit, so a 16 MiB limit is
 * enforced on chunked uploads too (Content-Length is checked first when sent).
 *
 * Large bodies take a slot of a LargeBodyGate: a body known to be over
 * LARGE_BODY_BYTES (by its Content-Length before a byte is read, or by the
 * bytes counted so far when chunked) needs one of limits.maxLargeBodies slots (2; src/config.ts TUNING),
 * held while it is read and until the caller has parsed and validated it
 * (withBodyText). With every slot taken it is refused at once with 503 and
 * Retry-After: reading and JSON-parsing megabytes runs on the one event loop,
 * so a few of them at once would hold every other request (/health too).
 * The app has one gate for every route that reads a body (src/http/app.ts).
 *
 * Also the JSON routes' two checks: a JSON Content-Type (else 415) and a
 * body that parses (else 400 `body: malformed JSON`).
 */
import { invalidRequest, payloadTooLarge, tooManyLargeBodies } from './api-errors';

/** A body over this many bytes needs a slot of the gate. */
export const LARGE_BODY_BYTES = 1024 * 1024;
/** Seconds in the Retry-After of the 503 when every slot is taken. */
export const LARGE_BODY_RETRY_AFTER_S = 1;

/** At most `slots` large bodies read and parsed at once; one more is a 503 (never a wait). */
export class LargeBodyGate {
  #busy = 0;

  constructor(
    readonly slots: number,
    readonly largeBytes: number = LARGE_BODY_BYTES,
  ) {}

  /** Slots taken now. */
  get busy(): number {
    return this.#busy;
  }

  /** Takes a slot (or throws the 503); the returned function gives it back, once. */
  enter(): () => void {
    if (this.#busy >= this.slots) throw tooManyLargeBodies(LARGE_BODY_RETRY_AFTER_S);
    this.#busy++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#busy--;
    };
  }
}

/** Called once, when the body is known to be over `bytes`; may throw to refuse it (the stream is then cancelled). */
export interface LargeBodyHook {
  bytes: number;
  onLarge(): void;
}

export async function readBodyText(request: Request, maxBytes: number, large?: LargeBodyHook): Promise<string> {
  const declared = request.headers.get('content-length');
  const declaredBytes = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
  if (declaredBytes !== null && declaredBytes > maxBytes) throw payloadTooLarge(maxBytes);
  let isLarge = false;
  if (large !== undefined && declaredBytes !== null && declaredBytes > large.bytes) {
    large.onLarge();
    isLarge = true;
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw payloadTooLarge(maxBytes);
      }
      if (!isLarge && large !== undefined && total > large.bytes) {
        isLarge = true;
        try {
          large.onLarge();
        } catch (err) {
          await reader.cancel().catch(() => {});
          throw err;
        }
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/**
 * Reads the body (readBodyText) and hands it to `use` (parse + validate); a
 * large body holds a slot of `gate` until `use` has returned or thrown.
 */
export async function withBodyText<T>(
  request: Request,
  limits: { maxBytes: number; gate: LargeBodyGate },
  use: (text: string) => T | Promise<T>,
): Promise<T> {
  let release: (() => void) | null = null;
  try {
    const text = await readBodyText(request, limits.maxBytes, {
      bytes: limits.gate.largeBytes,
      onLarge: () => {
        release = limits.gate.enter();
      },
    });
    return await use(text);
  } finally {
    (release as (() => void) | null)?.();
  }
}

const heldSlots = new WeakMap<Request, () => void>();

/**
 * For a route's parse hook (the schema is checked after it, the handler's
 * ordered checks after that): reads the body like withBodyText, but the slot
 * of a large body stays held, for `request`, until releaseBody(request)
 * (the handler once it has validated it, or the app's onError).
 */
export async function readHeldBody(request: Request, limits: { maxBytes: number; gate: LargeBodyGate }): Promise<string> {
  try {
    return await readBodyText(request, limits.maxBytes, {
      bytes: limits.gate.largeBytes,
      onLarge: () => {
        heldSlots.set(request, limits.gate.enter());
      },
    });
  } catch (err) {
    releaseBody(request);
    throw err;
  }
}

/** Gives back the slot readHeldBody took for `request`, if any (once). */
export function releaseBody(request: Request): void {
  heldSlots.get(request)?.();
  heldSlots.delete(request);
}

/** application/json or any application/*+json, parameters ignored. */
export function isJsonContentType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const base = contentType.split(';')[0]!.trim().toLowerCase();
  return base === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(base);
}

/** The body's JSON, or the 400 `body: malformed JSON`. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest('body: malformed JSON');
  }
}
