/**
 * The Results view's table of every proxy: the filters (text, status,
 * anonymity, country, and the optional columns' protocol / HTTPS / lying /
 * rotating, elements marked `data-col`, shown only when the job's records
 * have them), sorting by a column's header, and pages of PAGE_SIZE. The
 * model is table.ts, the rows' markup row-cells.ts.
 */
import { option, type ButtonEl, type Elem, type InputEl, type SelectEl, type TableEl } from './browser';
import { byId, setText, show } from './dom';
import { tableBodyHtml } from './row-cells';
import { formatCount } from './svg';
import { countryOptions, filterRows, paginate, sortRows, SORT_KEYS, type ExtraColumns, type Row, type SortDir, type SortKey } from './table';

export const RESULTS_TABLE_IDS = Object.freeze({
  heading: 'table-h',
  text: 'f-text',
  status: 'f-status',
  anonymity: 'f-anon',
  country: 'f-country',
  protocol: 'f-proto',
  https: 'f-https',
  lying: 'f-lying',
  rotating: 'f-rotating',
  count: 't-count',
  table: 'r-table',
  prev: 'pg-prev',
  info: 'pg-info',
  next: 'pg-next',
});

const PAGE_SIZE = 50;

export function resultsTableHtml(): string {
  return `    <section class="panel" aria-labelledby="table-h">
      <h2 id="table-h">All proxies</h2>
      <div class="filters" role="search" aria-label="Filter proxies">
        <div class="field"><label for="f-text">Search</label><input id="f-text" type="search" autocomplete="off" spellcheck="false" placeholder="address, ISP, city, error…"></div>
        <div class="field"><label for="f-status">Status</label><select id="f-status"><option value="">All</option><option value="working">Working</option><option value="failed">Failed</option></select></div>
        <div class="field"><label for="f-anon">Anonymity</label><select id="f-anon"><option value="">All</option><option value="elite">Elite</option><option value="anonymous">Anonymous</option><option value="transparent">Transparent</option></select></div>
        <div class="field"><label for="f-country">Country</label><select id="f-country"><option value="">All</option></select></div>
        <div class="field" data-col="protocols" hidden><label for="f-proto">Protocol</label><select id="f-proto"><option value="">All</option><option value="http">HTTP</option><option value="socks4">SOCKS4</option><option value="socks5">SOCKS5</option><option value="none">None passed</option></select></div>
        <div class="field" data-col="https" hidden><label for="f-https">HTTPS</label><select id="f-https"><option value="">All</option><option value="yes">Yes</option><option value="no">No</option></select></div>
        <div class="checkbox" data-col="integrity" hidden><input id="f-lying" type="checkbox"><label for="f-lying">Lying proxies only</label></div>
        <div class="checkbox" data-col="rotation" hidden><input id="f-rotating" type="checkbox"><label for="f-rotating">Rotating only</label></div>
      </div>
      <p id="t-count" class="hint" aria-live="polite"></p>
      <div class="table-wrap" role="region" aria-labelledby="table-h" tabindex="0">
        <table id="r-table">
          <thead><tr>
            <th scope="col" data-key="address"><button type="button" data-sort="address">Proxy</button></th>
            <th scope="col" data-key="status"><button type="button" data-sort="status">Status</button></th>
            <th scope="col" data-key="integrity" data-col="integrity" hidden><button type="button" data-sort="integrity">Integrity</button></th>
            <th scope="col" data-key="protocols" data-col="protocols" hidden><button type="button" data-sort="protocols">Protocols</button></th>
            <th scope="col" data-key="https" data-col="https" hidden><button type="button" data-sort="https">HTTPS</button></th>
            <th scope="col" data-key="exits" data-col="rotation" hidden><button type="button" data-sort="exits">Exits / samples</button></th>
            <th scope="col" data-key="ms"><button type="button" data-sort="ms">Response</button></th>
            <th scope="col" data-key="anonymity"><button type="button" data-sort="anonymity">Anonymity</button></th>
            <th scope="col" data-key="countryName"><button type="button" data-sort="countryName">Country</button></th>
            <th scope="col" data-key="city"><button type="button" data-sort="city">City</button></th>
            <th scope="col" data-key="isp"><button type="button" data-sort="isp">ISP</button></th>
            <th scope="col" data-key="origin"><button type="button" data-sort="origin">Exit IP</button></th>
            <th scope="col" data-key="error"><button type="button" data-sort="error">Error</button></th>
          </tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" id="pg-prev" class="secondary">Previous<span class="visually-hidden"> page</span></button>
        <span id="pg-info"></span>
        <button type="button" id="pg-next" class="secondary">Next<span class="visually-hidden"> page</span></button>
      </div>
    </section>`;
}

/** The filter elements. */
function filterInputs() {
  const ids = RESULTS_TABLE_IDS;
  return {
    text: byId<InputEl>(ids.text),
    status: byId<SelectEl>(ids.status),
    anonymity: byId<SelectEl>(ids.anonymity),
    country: byId<SelectEl>(ids.country),
    protocol: byId<SelectEl>(ids.protocol),
    https: byId<SelectEl>(ids.https),
    lying: byId<InputEl>(ids.lying),
    rotating: byId<InputEl>(ids.rotating),
  };
}

class ResultsTable {
  readonly f = filterInputs();
  readonly table = byId<TableEl>(RESULTS_TABLE_IDS.table);
  readonly section = byId(RESULTS_TABLE_IDS.heading).closest('section')!;
  all: Row[] = [];
  view: Row[] = [];
  cols: ExtraColumns = { protocols: false, https: false, integrity: false, rotation: false };
  sortKey: SortKey | null = null;
  sortDir: SortDir = 'ascending';
  pageIndex = 0;

  render(): void {
    const ids = RESULTS_TABLE_IDS;
    const page = paginate(this.view, this.pageIndex, PAGE_SIZE);
    this.pageIndex = page.index;
    this.table.tBodies[0]!.innerHTML = tableBodyHtml(page.items, this.cols);
    const all = this.all.length;
    setText(byId(ids.count), page.total === all ? `${formatCount(all)} proxies` : `${formatCount(page.total)} of ${formatCount(all)} proxies match`);
    setText(byId(ids.info), page.total === 0 ? 'Page 1 of 1' : `Rows ${formatCount(page.first)}–${formatCount(page.last)}, page ${page.index + 1} of ${page.pages}`);
    byId<ButtonEl>(ids.prev).disabled = page.index === 0;
    byId<ButtonEl>(ids.next).disabled = page.index >= page.pages - 1;
  }

  refilter(): void {
    const { f, cols } = this;
    const filtered = filterRows(this.all, {
      text: f.text.value,
      status: f.status.value,
      anonymity: f.anonymity.value,
      country: f.country.value,
      protocol: cols.protocols ? f.protocol.value : '',
      https: cols.https ? f.https.value : '',
      lying: cols.integrity && f.lying.checked,
      rotating: cols.rotation && f.rotating.checked,
    });
    this.view = this.sortKey === null ? filtered : sortRows(filtered, this.sortKey, this.sortDir);
    this.pageIndex = 0;
    this.render();
  }

  sortBy(key: SortKey): void {
    this.sortDir = this.sortKey === key && this.sortDir === 'ascending' ? 'descending' : 'ascending';
    this.sortKey = key;
    for (const th of this.table.tHead!.querySelectorAll('th')) {
      if (th.dataset.key === key) th.setAttribute('aria-sort', this.sortDir);
      else th.removeAttribute('aria-sort');
    }
    this.view = sortRows(this.view, key, this.sortDir);
    this.pageIndex = 0;
    this.render();
  }

  /** New rows: the optional columns they have, the country list, the filters and the sort cleared. */
  show(rows: Row[], cols: ExtraColumns): void {
    this.all = rows;
    this.cols = cols;
    for (const el of this.section.querySelectorAll('[data-col]')) show(el, cols[el.dataset.col as keyof ExtraColumns] === true);
    const f = this.f;
    f.country.replaceChildren(option('All', ''), ...countryOptions(rows).map((c) => option(`${c.name} (${formatCount(c.count)})`, c.code)), option('Unknown', '-'));
    for (const s of [f.text, f.status, f.anonymity, f.protocol, f.https]) s.value = '';
    f.lying.checked = false;
    f.rotating.checked = false;
    this.sortKey = null;
    for (const th of this.table.tHead!.querySelectorAll('th')) th.removeAttribute('aria-sort');
    this.refilter();
  }

  clear(): void {
    this.all = [];
    this.view = [];
    this.table.tBodies[0]!.innerHTML = '';
  }
}

/** The search box refilters as typing stops; the other filters at once; the headers sort. */
function wire(t: ResultsTable): void {
  let debounce: ReturnType<typeof setTimeout> | null = null;
  t.f.text.addEventListener('input', () => {
    if (debounce !== null) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = null;
      t.refilter();
    }, 150);
  });
  const { status, anonymity, country, protocol, https, lying, rotating } = t.f;
  for (const s of [status, anonymity, country, protocol, https, lying, rotating]) s.addEventListener('change', () => t.refilter());
  const page = (by: number) => () => {
    t.pageIndex += by;
    t.render();
  };
  byId(RESULTS_TABLE_IDS.prev).addEventListener('click', page(-1));
  byId(RESULTS_TABLE_IDS.next).addEventListener('click', page(1));
  t.table.tHead!.addEventListener('click', (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-sort]');
    const key = btn?.dataset.sort as SortKey | undefined;
    if (key !== undefined && SORT_KEYS.includes(key)) t.sortBy(key);
  });
}

export function mountResultsTable(): { show(rows: Row[], cols: ExtraColumns): void; clear(): void } {
  const t = new ResultsTable();
  wire(t);
  return { show: (rows, cols) => t.show(rows, cols), clear: () => t.clear() };
}
