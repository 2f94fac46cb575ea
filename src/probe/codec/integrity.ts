/**
 * Integrity of the judge's answer (pure, no I/O): the judge signs the exact
 * bytes of its body, the probe verifies them and, when they do not verify,
 * says what changed (DECISIONS "Extensions": a lying proxy is never working).
 *
 * The signed body is the judge's JSON (judge-body.ts, ASCII only) with one
 * more member, always the last:
 *
 *   {"judge":"proxycheck/1","nonce":"…",…,"headers":[…],"sig":"v1:<L>:<hex>"}
 *
 * `<hex>` is HMAC-SHA256(key, the body's first L bytes), 64 lower-case hex
 * digits, and those L bytes are everything before `,"sig":"`: the whole answer,
 * the nonce inside, minus the signature member and the closing brace. The
 * body is verified as the HTTP parser hands it over: after the transfer
 * encoding (chunked) is removed, so a proxy may re-chunk or de-chunk, add or
 * rewrite headers (Via, X-Forwarded-For, ...), but not change one body byte.
 * L is part of the signed body's bytes too (a change of it is a change), and
 * it says how long the signed part was, so a failure can say what changed.
 *
 * `judgeIntegrity` classifies a 200's body against the probe's nonce:
 * - intact: the signature verifies over the exact body;
 * - foreign: our nonce is nowhere, not even after undoing a Content-Encoding
 *   or UTF-16: not the judge's answer to this probe (judge_mismatch);
 * - tampered: our nonce arrived but the bytes are not what the judge signed:
 *   `re-encoded` (a Content-Encoding or Transfer-Encoding coding the judge
 *   never sends, or UTF-16), `injected` (the signed body inside a larger one,
 *   or more bytes inside it than were signed), `length` (bytes appended, the
 *   body cut short, fewer bytes than signed), `replaced` (the nonce is there,
 *   the rest differs: a stale copy, a rewrite, an unsigned copy).
 * Only the fast path (one HMAC) runs for an intact answer; the rest runs on
 * failures only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { JUDGE_MARK } from './judge-body';

export const SIGNATURE_VERSION = 'v1';
/** What precedes the signature member's value; the signed bytes end right before it. */
const SIG_MARK = `,"sig":"${SIGNATURE_VERSION}:`;
/** How a judge body starts (judge-body.ts renders `judge` first). */
const BODY_START = `{"judge":"${JUDGE_MARK}"`;
const MAC_HEX = 64;
const MAX_LEN_DIGITS = 9;
/** A decoded (decompressed) body is read up to this many bytes. */
const DECODE_CAP = 256 * 1024;

export type Change = 'injected' | 'replaced' | 'length' | 're-encoded';

export type IntegrityVerdict =
  | { kind: 'intact' }
  | { kind: 'foreign' }
  | { kind: 'tampered'; change: Change; message: string };

const INTACT: IntegrityVerdict = Object.freeze({ kind: 'intact' });
const FOREIGN: IntegrityVerdict = Object.freeze({ kind: 'foreign' });

// the key as bytes, for the last key seen (a thread verifies with one key): a Buffer key is cheaper than a string one
let lastKey = '';
let lastKeyBytes = Buffer.alloc(0);

function mac(key: string, bytes: Buffer | string): Buffer {
  if (key !== lastKey) {
    lastKeyBytes = Buffer.from(key, 'utf8');
    lastKey = key;
  }
  return createHmac('sha256', lastKeyBytes).update(bytes).digest();
}

/**
 * Signs a judge JSON body (an object ending in `}`, ASCII): the same JSON with
 * the signature member appended as its last member.
 */
export function signJudgeBody(json: string, key: string): string {
  const prefix = json.slice(0, json.lastIndexOf('}'));
  const signed = `${prefix}${SIG_MARK}${Buffer.byteLength(prefix)}:`;
  return `${signed}${mac(key, prefix).toString('hex')}"}`;
}

interface Trailer {
  /** where `,"sig":"` starts: the signed bytes end here */
  at: number;
  /** L as written */
  signedLength: number;
  mac: Buffer;
  /** the index after the closing `"}` */
  end: number;
}

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 48 && c <= 57;
const isHex = (c: number | undefined): boolean => c !== undefined && ((c >= 48 && c <= 57) || (c >= 97 && c <= 102));

/** The signature member starting at `at` (`,"sig":"v1:<L>:<hex>"}`), or null when malformed. */
function trailerAt(body: Buffer, at: number): Trailer | null {
  let i = at + SIG_MARK.length;
  const digitsFrom = i;
  while (i - digitsFrom <= MAX_LEN_DIGITS && isDigit(body[i])) i++;
  if (i === digitsFrom || i - digitsFrom > MAX_LEN_DIGITS || body[i] !== 58 /* : */) return null;
  const signedLength = Number(body.toString('latin1', digitsFrom, i));
  const hexFrom = i + 1;
  for (i = hexFrom; i < hexFrom + MAC_HEX; i++) if (!isHex(body[i])) return null;
  if (body[i] !== 34 /* " */ || body[i + 1] !== 125 /* } */) return null;
  return { at, signedLength, mac: Buffer.from(body.toString('latin1', hexFrom, hexFrom + MAC_HEX), 'hex'), end: i + 2 };
}

/** The signed span [start, t.at) verifies: its length is L and the HMAC matches. */
function spanVerifies(body: Buffer, start: number, t: Trailer, key: string): boolean {
  if (t.at - start !== t.signedLength) return false;
  return timingSafeEqual(mac(key, body.subarray(start, t.at)), t.mac);
}

/** True when `body` is exactly a body the judge signed with `key`. One HMAC. */
export function verifyJudgeBody(body: Buffer, key: string): boolean {
  const at = body.lastIndexOf(SIG_MARK);
  if (at === -1) return false;
  const t = trailerAt(body, at);
  return t !== null && t.end === body.length && spanVerifies(body, 0, t, key);
}

const plural = (n: number): string => (n === 1 ? '1 byte' : `${n} bytes`);

function tampered(change: Change, what: string): IntegrityVerdict {
  const label = change === 'injected' ? 'bytes injected' : change === 'replaced' ? 'body replaced' : change === 'length' ? 'length differs' : 're-encoded';
  return { kind: 'tampered', change, message: `${label}: ${what}` };
}

/** What changed in a body that carries the nonce but does not verify (the slow path). */
export function describeChange(body: Buffer, key: string): IntegrityVerdict {
  const start = body.indexOf(BODY_START);
  const at = body.lastIndexOf(SIG_MARK);
  const t = at === -1 ? null : trailerAt(body, at);
  if (t === null || start === -1 || start > t.at) {
    if (start === -1) return tampered('replaced', 'the nonce arrived in a body that is not the judge\'s (no judge answer, no signature)');
    const last = body[body.length - 1];
    return last === 125 /* } */
      ? tampered('replaced', 'the judge\'s signature is missing: an unsigned copy of the answer')
      : tampered('length', `the body ends after ${plural(body.length)}, before the judge's signature (cut short)`);
  }
  const before = start;
  const after = body.length - t.end;
  const around = [before > 0 ? `${plural(before)} before it` : '', after > 0 ? `${plural(after)} after it` : ''].filter((s) => s !== '').join(' and ');
  if (spanVerifies(body, start, t, key)) {
    if (before > 0) return tampered('injected', `the judge's signed body arrived intact inside a larger one (${around})`);
    return tampered('length', `${plural(after)} appended after the judge's signed body`);
  }
  const span = t.at - start;
  const extra = around === '' ? '' : `; besides, ${around}`;
  if (span > t.signedLength) return tampered('injected', `${plural(span - t.signedLength)} more inside the body than the judge signed${extra}`);
  if (span < t.signedLength) return tampered('length', `the body is ${plural(t.signedLength - span)} shorter than the judge signed${extra}`);
  return tampered('replaced', `same length as the judge signed, different bytes (a stale or rewritten copy)${extra}`);
}

/** The content and transfer codings of an answer, lower-cased, without identity and chunked. */
export function bodyCodings(headers: readonly [string, string][]): string[] {
  const out: string[] = [];
  for (const [name, value] of headers) {
    if (name.length !== 16 && name.length !== 17) continue; // content-encoding, transfer-encoding
    const n = name.toLowerCase();
    if (n !== 'content-encoding' && n !== 'transfer-encoding') continue;
    for (const part of value.split(',')) {
      const c = part.trim().toLowerCase();
      if (c !== '' && c !== 'identity' && c !== 'chunked') out.push(c);
    }
  }
  return out;
}

/** Undoes codings (applied in order, undone in reverse); null when one is unknown or the bytes do not decode. */
export function decodeBody(body: Buffer, codings: readonly string[]): Buffer | null {
  let b = body;
  const opts = { maxOutputLength: DECODE_CAP };
  try {
    for (let i = codings.length - 1; i >= 0; i--) {
      const c = codings[i];
      if (c === 'gzip' || c === 'x-gzip') b = gunzipSync(b, opts);
      else if (c === 'br') b = brotliDecompressSync(b, opts);
      else if (c === 'deflate') {
        try {
          b = inflateSync(b, opts);
        } catch {
          b = inflateRawSync(b, opts); // "deflate" without the zlib wrapper, as some servers send it
        }
      } else return null;
    }
  } catch {
    return null;
  }
  return b;
}

function utf16(text: string, bigEndian: boolean): Buffer {
  const b = Buffer.from(text, 'utf16le');
  return bigEndian ? b.swap16() : b;
}

export interface IntegrityInput {
  /** the answer's headers as received */
  headers: readonly [string, string][];
  /** the body after the transfer encoding (chunked) was removed */
  body: Buffer;
  /** more body arrived than the probe keeps */
  truncated: boolean;
  key: string;
  nonce: string;
}

/** Classifies a 200's body (see the header comment). Never throws. */
export function judgeIntegrity(a: IntegrityInput): IntegrityVerdict {
  const codings = bodyCodings(a.headers);
  const hasNonce = a.body.indexOf(a.nonce) !== -1;
  if (codings.length > 0) {
    const decoded = hasNonce ? null : decodeBody(a.body, codings);
    if (!hasNonce && (decoded === null || decoded.indexOf(a.nonce) === -1)) return FOREIGN;
    const inside = decoded === null ? '' : verifyJudgeBody(decoded, a.key) ? '; the judge\'s body inside is intact' : '; the body inside differs too';
    return tampered('re-encoded', `the proxy sent the body with ${codings.join(', ')} coding, which the judge never uses${inside}`);
  }
  if (!hasNonce) {
    if (a.body.indexOf(utf16(a.nonce, false)) !== -1 || a.body.indexOf(utf16(a.nonce, true)) !== -1) {
      return tampered('re-encoded', 'the body arrived converted to UTF-16; the judge sends ASCII');
    }
    return FOREIGN;
  }
  if (a.truncated) return tampered('length', `more than ${plural(a.body.length)} arrived, far more than the judge's answer`);
  if (verifyJudgeBody(a.body, a.key)) return INTACT;
  return describeChange(a.body, a.key);
}
