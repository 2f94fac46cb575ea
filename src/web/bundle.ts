/**
 * The dashboard's script: src/web/client/main.ts and its imports bundled for
 * the browser by Bun's bundler (Bun.build, minified, one ES module), once per
 * process on first request, then served from memory. A failed build is not
 * cached: the next request tries again.
 */
import { join } from 'node:path';
import { errorText, ServiceError } from '../errors';
import { HTTP_ERROR_CODES } from '../error-codes';

export const CLIENT_ENTRY = join(import.meta.dir, 'client', 'main.ts');

export interface Bundle {
  js: string;
  /** A strong ETag of the script (sha-256, 16 hex digits). */
  etag: string;
}

/** Builds the client bundle (no caching). */
export async function buildClient(entry = CLIENT_ENTRY): Promise<Bundle> {
  let out: Awaited<ReturnType<typeof Bun.build>>;
  try {
    out = await Bun.build({ entrypoints: [entry], target: 'browser', format: 'esm', minify: true, sourcemap: 'none' });
  } catch (err) {
    throw new ServiceError(HTTP_ERROR_CODES.BUNDLE_FAILED, `dashboard bundle failed: ${errorText(err)}`, { cause: err });
  }
  const file = out.outputs.find((o) => o.kind === 'entry-point');
  if (!out.success || file === undefined) {
    throw new ServiceError(HTTP_ERROR_CODES.BUNDLE_FAILED, `dashboard bundle failed: ${out.logs.map((l) => String(l.message ?? l)).join('; ') || 'no output'}`);
  }
  const js = await file.text();
  const etag = `"${new Bun.CryptoHasher('sha256').update(js).digest('hex').slice(0, 16)}"`;
  return { js, etag };
}

/** A memoised builder: the first call builds, later calls share the result; a failure is retried next time. */
export function cachedClient(build: () => Promise<Bundle> = () => buildClient()): () => Promise<Bundle> {
  let pending: Promise<Bundle> | null = null;
  return () => {
    if (pending === null) {
      const p = build();
      pending = p;
      p.catch(() => {
        if (pending === p) pending = null;
      });
    }
    return pending;
  };
}
