/**
 * The built-in judge's TLS certificate: self-signed, made at first start and
 * kept in DATA_DIR, so its fingerprint (what every probe pins: src/probe/
 * codec/cert-pin.ts) stays the same across restarts.
 *
 *   DATA_DIR/judge-tls.pem   the private key (PKCS#8) and the certificate,
 *                            mode 0600, created atomically (src/secrets.ts
 *                            writeFileOnce: two processes starting at once
 *                            end up with the same certificate)
 *
 * EC P-256 with SHA-256 (selfsigned, pure JS): a handshake costs the judge
 * an ECDSA signature instead of an RSA one. CN "proxycheck judge", valid 20
 * years from its creation; nobody checks the validity (the pin is the whole
 * trust). Delete the file to get a new certificate (the next start makes
 * one; an external checker's JUDGE_TLS_FINGERPRINT must then change too).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { errorText, ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { writeFileOnce } from '../secrets';
import { fingerprintOfDer, pemCertificateDer } from '../probe/codec/cert-pin';

export const JUDGE_CERT_FILE = 'judge-tls.pem';
export const JUDGE_CERT_SUBJECT = 'CN=proxycheck judge';

export interface JudgeCertificate {
  /** PEM */
  key: string;
  /** PEM */
  cert: string;
  /** SHA-256 of the certificate's DER (codec/cert-pin.ts form) */
  fingerprint: string;
  /** the file it came from */
  path: string;
}

const KEY_BLOCK = /-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[A-Za-z0-9+/=\s]+-----END (?:EC |RSA )?PRIVATE KEY-----\s*/;
const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----\s*/;

/** The key and certificate of a judge-tls.pem text; throws a ServiceError naming `path` when either is missing. */
export function parseJudgeCertificate(text: string, path: string): JudgeCertificate {
  const key = KEY_BLOCK.exec(text)?.[0];
  const cert = CERT_BLOCK.exec(text)?.[0];
  const der = cert === undefined ? null : pemCertificateDer(cert);
  if (key === undefined || cert === undefined || der === null) {
    throw new ServiceError(DOMAIN_ERROR_CODES.JUDGE_CERT_INVALID, `${path} must hold a PEM private key and certificate; delete it to make a new one`);
  }
  return { key: key.trim() + '\n', cert: cert.trim() + '\n', fingerprint: fingerprintOfDer(der), path };
}

function readCertificate(path: string): JudgeCertificate | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ServiceError(DOMAIN_ERROR_CODES.JUDGE_CERT_INVALID, `cannot read ${path}: ${errorText(err)}`, { cause: err });
  }
  return parseJudgeCertificate(text, path);
}

/** A new self-signed judge certificate, as the PEM text of judge-tls.pem (key first). */
export async function newJudgeCertificatePem(now = new Date()): Promise<string> {
  const notAfterDate = new Date(now.getTime());
  notAfterDate.setUTCFullYear(notAfterDate.getUTCFullYear() + 20);
  const g = await generate([{ name: 'commonName', value: 'proxycheck judge' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 86_400_000),
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
    ],
  });
  return `${g.private.trim()}\n${g.cert.trim()}\n`;
}

/** DATA_DIR's judge certificate, made (and written, 0600) when there is none yet. */
export async function readOrCreateJudgeCertificate(dataDir: string): Promise<JudgeCertificate & { created: boolean }> {
  const path = join(dataDir, JUDGE_CERT_FILE);
  const existing = readCertificate(path);
  if (existing !== undefined) return { ...existing, created: false };
  const pem = await newJudgeCertificatePem();
  mkdirSync(dataDir, { recursive: true });
  writeFileOnce(path, pem);
  const stored = readCertificate(path);
  if (stored === undefined) throw new ServiceError(DOMAIN_ERROR_CODES.JUDGE_CERT_INVALID, `${path} vanished while being created`);
  return { ...stored, created: true };
}
