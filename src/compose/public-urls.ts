/**
 * The service's public URLs: BASE_URL (the API, and the own judge's default
 * host) and CONTENT_URL (result links). Set, or derived from HOST and PORT;
 * derived from PORT=0 (tests) they carry the port the public listener is
 * given, which is known once it is bound.
 *
 * States: made --bound(port)--> bound. Reading before bound() throws: the
 * parts that read them (result links, the judge) are used only once the
 * start bound the listener.
 */
import { withBoundPort, type HttpConfig } from '../config';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';
import { linkExpiry, signResultLink } from '../results/links';

export class PublicUrls {
  readonly #http: Pick<HttpConfig, 'port' | 'baseUrl' | 'contentUrl'>;
  #bound: { base: string; content: string } | null = null;

  constructor(http: Pick<HttpConfig, 'port' | 'baseUrl' | 'contentUrl'>) {
    this.#http = http;
  }

  /** The public listener's port: fills it into the URLs derived from PORT=0. */
  bound(port: number): void {
    const c = withBoundPort(this.#http, port);
    this.#bound = { base: c.baseUrl, content: c.contentUrl };
  }

  #urls(): { base: string; content: string } {
    if (this.#bound === null) throw new ServiceError(ENTRY_ERROR_CODES.URLS_NOT_BOUND, 'the public URLs are read before the listener is bound');
    return this.#bound;
  }

  /** BASE_URL, no trailing slash. */
  get base(): string {
    return this.#urls().base;
  }

  /** CONTENT_URL, no trailing slash. */
  get content(): string {
    return this.#urls().content;
  }
}

/** Signs a result id's download link at CONTENT_URL (read when a job ends, after the start). */
export function linkSigner(urls: PublicUrls, secret: string): (resultId: string) => string {
  return (resultId) => signResultLink({ contentUrl: urls.content, resultId, secret, expiresAt: linkExpiry(Math.floor(Date.now() / 1000)), ext: 'json' });
}
