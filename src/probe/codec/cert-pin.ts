/**
 * Certificate pinning for the judge's TLS listener (pure: strings and bytes
 * in, strings out; no sockets).
 *
 * The judge's certificate is self-signed (the built-in judge makes one at
 * first start: src/judge/tls-cert.ts), so a probe does not ask whether a CA
 * vouches for it: it compares the SHA-256 fingerprint of the certificate the
 * tunnel presented (its DER bytes) with the pinned one. Another certificate
 * means something between the checker and the judge terminated TLS itself:
 * the proxy is `failed` with `tls_intercepted`, naming what it presented.
 *
 * One form everywhere (records, logs, comparisons): upper-case hex pairs
 * joined by ":" (`AB:01:...`, 32 pairs), what `openssl x509 -fingerprint
 * -sha256` and node's `fingerprint256` print. JUDGE_TLS_FINGERPRINT may also
 * be given as 64 hex digits without colons, in either case, with an optional
 * `sha256:` / `SHA256 Fingerprint=` prefix.
 */
import { createHash } from 'node:crypto';
import type { PresentedCertificate, ProbeError } from '../types';

const HEX64 = /^[0-9a-f]{64}$/;

/** A SHA-256 fingerprint in the one form, or null when `text` is not one. */
export function normalizeFingerprint(text: string): string | null {
  let t = text.trim().toLowerCase();
  for (const prefix of ['sha256 fingerprint=', 'sha256:', 'sha-256:']) if (t.startsWith(prefix)) t = t.slice(prefix.length).trim();
  const bare = /^([0-9a-f]{2}:){31}[0-9a-f]{2}$/.test(t) ? t.replaceAll(':', '') : t;
  if (!HEX64.test(bare)) return null;
  return bare.toUpperCase().match(/../g)!.join(':');
}

/** The fingerprint of a certificate's DER bytes. */
export function fingerprintOfDer(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
}

/** The DER bytes of the first certificate in a PEM text, or null when there is none. */
export function pemCertificateDer(pem: string): Buffer | null {
  const m = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
  if (m === null) return null;
  const der = Buffer.from((m[1] as string).replace(/\s+/g, ''), 'base64');
  return der.length === 0 ? null : der;
}

/** Two fingerprints (any accepted form) name the same certificate. */
export function sameFingerprint(a: string, b: string): boolean {
  const x = normalizeFingerprint(a);
  return x !== null && x === normalizeFingerprint(b);
}

/**
 * A certificate subject as node:tls gives it (`{CN: 'a', O: ['x', 'y']}`)
 * -> `CN=a, O=x, O=y`. Values are kept to printable ASCII (others -> `?`)
 * and the whole to 256 characters: it is text the proxy chose.
 */
export function formatSubject(subject: unknown): string {
  if (typeof subject !== 'object' || subject === null) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(subject as Record<string, unknown>)) {
    for (const one of Array.isArray(v) ? v : [v]) if (typeof one === 'string') parts.push(`${k}=${one}`);
  }
  const s = parts.join(', ').replace(/[^\x20-\x7e]/g, '?');
  return s.length > 256 ? `${s.slice(0, 253)}...` : s;
}

/** The failure of a tunnel that presented `cert` instead of the judge's pinned certificate. */
export function interceptedError(cert: PresentedCertificate): ProbeError {
  const who = cert.subject === '' ? 'a certificate without a subject' : `"${cert.subject}"`;
  return {
    code: 'tls_intercepted',
    message: `the tunnel to the judge presented ${who} (SHA-256 ${cert.fingerprint}), not the judge's pinned certificate: TLS was intercepted`,
    certificate: { subject: cert.subject, fingerprint: cert.fingerprint },
  };
}
