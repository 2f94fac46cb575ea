/**
 * Is this process out of file descriptors? Bun (1.4) reports a connect whose
 * socket could not even be created (EMFILE) as ECONNREFUSED, indistinguishable
 * from a proxy that refused: a refused connect is therefore checked here, by
 * opening and closing /dev/null (only on refused connects; its cost:
 * bench/RESULTS.md "Session 4"). EMFILE /
 * ENFILE there means the refusal was ours (probe code checker_overloaded), not
 * the proxy's. A descriptor freed between the failed connect and this check
 * can still hide one; the retry of checker_overloaded probes (src/jobs/
 * retries.ts) is what makes the common case right.
 */
import { closeSync, openSync } from 'node:fs';

/** The errno code when no descriptor can be opened now (EMFILE, ENFILE), else null. */
export function fdsExhausted(): string | null {
  try {
    closeSync(openSync('/dev/null', 'r'));
    return null;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return code === 'EMFILE' || code === 'ENFILE' ? code : null;
  }
}
