/**
 * An open pool's downloads (TXT: the addresses as given; CSV; JSON), each
 * every page of the listing with the filters set now (paged-download.ts),
 * saved through a temporary link.
 */
import { apiGet, apiText } from './api';
import { create, type AnchorEl, type ButtonEl, type Elem } from './browser';
import { byId } from './dom';
import { downloadAll, type DownloadFormat, type DownloadPage } from './paged-download';
import { downloadName, proxiesQuery, type ProxyFilters } from './pool-format';
import type { ViewContext } from './view-context';

export const POOL_DOWNLOADS_IDS = Object.freeze({ txt: 'pd-txt', csv: 'pd-csv', json: 'pd-json' });

const DOWNLOAD_PAGE = 10_000;

export function poolDownloadsHtml(): string {
  return `    <div class="downloads" role="group" aria-labelledby="pd-h">
      <span id="pd-h" class="downloads-label">Download <span class="hint">(with the filters below)</span></span>
      <button type="button" id="pd-txt" class="secondary">TXT <span class="visually-hidden">(addresses)</span></button>
      <button type="button" id="pd-csv" class="secondary">CSV</button>
      <button type="button" id="pd-json" class="secondary">JSON</button>
    </div>`;
}

const jsonOrNull = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/** The browser's page reader: JSON pages through apiGet, text pages through apiText. */
function pageReader(format: DownloadFormat, path: (cursor: string | null) => string, key: string): (cursor: string | null) => Promise<DownloadPage> {
  return async (cursor) => {
    if (format === 'json') {
      const r = await apiGet(path(cursor), key);
      if (!r.ok) return { ok: false, status: r.status, body: r.body };
      const page = r.body as { proxies: unknown[]; next_cursor: string | null };
      return { ok: true, json: page, next: page.next_cursor };
    }
    const r = await apiText(path(cursor), key);
    if (!r.ok) return { ok: false, status: r.status, body: jsonOrNull(r.text) };
    return { ok: true, text: r.text, next: r.nextCursor };
  };
}

/** Saves `text` as a file named `name` (a hidden link in `parent`, clicked once). */
function save(parent: Elem, text: string, type: string, name: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = create<AnchorEl>('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  parent.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** `pool()`: the open pool (null: none); `filters()`: the filters set now; `parent`: where the link goes; `err`: where a failure shows. */
export function mountPoolDownloads(ctx: ViewContext, pool: () => { id: string; name: string } | null, filters: () => ProxyFilters, parent: Elem, err: Elem): void {
  const download = async (format: DownloadFormat, button: ButtonEl): Promise<void> => {
    const k = ctx.key();
    const p = pool();
    if (k === null || p === null) return;
    const f = filters();
    button.disabled = true;
    const path = (cursor: string | null) => `/pools/${p.id}/proxies?${proxiesQuery(f, { format, limit: DOWNLOAD_PAGE, cursor })}`;
    let got: Awaited<ReturnType<typeof downloadAll>>;
    try {
      got = await downloadAll(format, pageReader(format, path, k));
    } finally {
      button.disabled = false;
    }
    if (!got.ok) return ctx.failed(got.status, got.body, err);
    save(parent, got.text, got.type, downloadName(p.name, f.status, format));
  };
  for (const format of ['txt', 'csv', 'json'] as const) {
    const b = byId<ButtonEl>(POOL_DOWNLOADS_IDS[format]);
    b.addEventListener('click', () => void download(format, b));
  }
}
