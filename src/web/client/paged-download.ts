/**
 * A listing downloaded whole, page after page of its cursor (pure over a
 * port that reads one page): TXT pages are joined as they are, CSV pages
 * keep only the first page's header row, JSON pages' `proxies` are joined
 * into one `{ "proxies": [...] }` document. The first failed page ends it.
 */

export type DownloadFormat = 'txt' | 'csv' | 'json';

/** One page as the API gave it: text (txt, csv) or a parsed JSON body, and the next page's cursor. */
export type DownloadPage = { ok: true; text?: string; json?: { proxies?: unknown[] }; next: string | null } | { ok: false; status: number; body: unknown };

/** Reads the page at `cursor` (null: the first). */
export type PageReader = (cursor: string | null) => Promise<DownloadPage>;

export type Downloaded = { ok: true; text: string; type: string } | { ok: false; status: number; body: unknown };

export const DOWNLOAD_TYPES: Readonly<Record<DownloadFormat, string>> = Object.freeze({ txt: 'text/plain', csv: 'text/csv', json: 'application/json' });

/** A CSV page after the first, without its header row. */
export function csvWithoutHeader(text: string): string {
  const eol = text.indexOf('\r\n');
  return eol < 0 ? '' : text.slice(eol + 2);
}

/** Every page of the listing in `format`, joined; at most `maxPages` reads (a cursor that never ends is a bug). */
export async function downloadAll(format: DownloadFormat, read: PageReader, maxPages = 10_000): Promise<Downloaded> {
  const parts: string[] = [];
  const proxies: unknown[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < maxPages; n++) {
    const page = await read(cursor);
    if (!page.ok) return page;
    if (format === 'json') proxies.push(...(page.json?.proxies ?? []));
    else {
      const text = page.text ?? '';
      parts.push(format === 'csv' && parts.length > 0 ? csvWithoutHeader(text) : text);
    }
    cursor = page.next;
    if (cursor === null) break;
  }
  const text = format === 'json' ? JSON.stringify({ proxies }, null, 2) : parts.join('');
  return { ok: true, text, type: DOWNLOAD_TYPES[format] };
}
