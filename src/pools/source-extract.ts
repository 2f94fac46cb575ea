/**
 * A pool source's body -> its addresses (DECISIONS "Pools": `sources`,
 * addresses "extracted from its text as /check-raw reads lines"). Pure: the
 * list parser of /check-raw (src/proxy/parse.ts parseProxyList on a text
 * body) reads it, line by line: blank and `#` lines are ignored, invalid
 * lines are skipped and counted, a repeated address is kept once.
 *
 * A list is a public text file, not a request: it is never refused for its
 * size in addresses here (the fetch's byte cap bounds it); the pool's
 * limits decide how many of its new addresses join (src/pools/store.ts
 * addSourceProxies).
 */
import { parseProxyList, type ParsedProxy } from '../proxy/parse';

export interface SourceAddresses {
  /** Unique valid addresses, in the order of their first line. */
  proxies: ParsedProxy[];
  /** Lines that are neither valid, blank nor comments (skipped). */
  invalid: number;
  /** Valid lines dropped because the same address came earlier. */
  duplicates: number;
}

export function extractSourceAddresses(body: string): SourceAddresses {
  const l = parseProxyList(body);
  return { proxies: l.proxies, invalid: l.invalid, duplicates: l.duplicates };
}
