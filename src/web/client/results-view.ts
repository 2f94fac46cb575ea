/**
 * The "Results" view: the check's warnings, summary cards, JSON/CSV/TXT
 * downloads, the world map of working proxies, the anonymity donut, country
 * and ISP bars, the response-time histogram, why proxies failed (a bar per
 * error code with a note each: failures.ts), custom-URL results and the
 * sortable, filterable, paged table. The full result file is fetched through its signed link on
 * this origin (format.ts sameOriginResultUrl); the charts come from charts.ts
 * and geo.ts, the cards from summary-cards.ts, the table model from table.ts
 * and its markup from row-cells.ts. The optional columns (protocols, https,
 * rotation, integrity) and their filters (elements marked `data-col`) are
 * shown only when the job's records have them.
 */
import { option, win, type AnchorEl, type ButtonEl, type Elem, type InputEl, type SelectEl, type TableEl } from './browser';
import { tableBodyHtml } from './row-cells';
import { summaryCards, type CardSource } from './summary-cards';
import { byId, setText, show } from './dom';
import { barChart, donutChart, histogramBins, histogramChart, legendHtml, topWithOther, type Slice } from './charts';
import { errorText, resultLinks, sameOriginResultUrl, type ResultLinks } from './format';
import { clusterPoints, MAP, mapSvg, type Clustered, type WorldShapes } from './geo';
import { failureBars, failureNotesHtml } from './failures';
import { checkWarnings, UNKNOWN_SERVICE, type ServiceInfo } from './service-info';
import { escapeXml, formatCount } from './svg';
import { countryOptions, extraColumns, filterRows, paginate, sortRows, SORT_KEYS, toRow, type ExtraColumns, type ResultRecord, type Row, type SortDir, type SortKey } from './table';

const PAGE_SIZE = 50;

interface ResultFile {
  summary?: {
    total_working?: number;
    countries?: Record<string, number>;
    anonymity_levels?: Record<string, number>;
    top_isps?: Record<string, number>;
    protocols?: Record<string, number>;
    rotating?: number;
    errors?: Record<string, number>;
  };
  metadata?: Record<string, unknown>;
  proxies?: ResultRecord[];
  custom_url_validation?: { per_url_summary?: { url: string; success_count: number; failed_count: number; success_rate: string }[] };
}

let worldPromise: Promise<WorldShapes | null> | null = null;
function world(): Promise<WorldShapes | null> {
  worldPromise ??= fetch('/app/world.json')
    .then((r) => (r.ok ? (r.json() as Promise<WorldShapes>) : null))
    .catch(() => null);
  return worldPromise;
}

export function setupResultsView() {
  const empty = byId('results-empty');
  const body = byId('results-body');
  const err = byId('results-error');
  const cards = byId('r-cards');
  const table = byId<TableEl>('r-table');
  const tbody = table.tBodies[0]!;
  const fText = byId<InputEl>('f-text');
  const fStatus = byId<SelectEl>('f-status');
  const fAnon = byId<SelectEl>('f-anon');
  const fCountry = byId<SelectEl>('f-country');
  const fProto = byId<SelectEl>('f-proto');
  const fHttps = byId<SelectEl>('f-https');
  const fLying = byId<InputEl>('f-lying');
  const fRotating = byId<InputEl>('f-rotating');
  const section = byId('table-h').closest('section')!;
  const tCount = byId('t-count');
  const prev = byId<ButtonEl>('pg-prev');
  const next = byId<ButtonEl>('pg-next');
  const info = byId('pg-info');

  let all: Row[] = [];
  let view: Row[] = [];
  let cols: ExtraColumns = { protocols: false, https: false, integrity: false, rotation: false };
  let sortKey: SortKey | null = null;
  let sortDir: SortDir = 'ascending';
  let pageIndex = 0;
  let loadSeq = 0;
  let service: ServiceInfo = UNKNOWN_SERVICE;
  let lastCards: { file: ResultFile; lying: number | null } | null = null;

  const renderTable = () => {
    const page = paginate(view, pageIndex, PAGE_SIZE);
    pageIndex = page.index;
    tbody.innerHTML = tableBodyHtml(page.items, cols);
    setText(tCount, page.total === all.length ? `${formatCount(all.length)} proxies` : `${formatCount(page.total)} of ${formatCount(all.length)} proxies match`);
    setText(info, page.total === 0 ? 'Page 1 of 1' : `Rows ${formatCount(page.first)}–${formatCount(page.last)}, page ${page.index + 1} of ${page.pages}`);
    prev.disabled = page.index === 0;
    next.disabled = page.index >= page.pages - 1;
  };

  const refilter = () => {
    const filtered = filterRows(all, {
      text: fText.value,
      status: fStatus.value,
      anonymity: fAnon.value,
      country: fCountry.value,
      protocol: cols.protocols ? fProto.value : '',
      https: cols.https ? fHttps.value : '',
      lying: cols.integrity && fLying.checked,
      rotating: cols.rotation && fRotating.checked,
    });
    view = sortKey === null ? filtered : sortRows(filtered, sortKey, sortDir);
    pageIndex = 0;
    renderTable();
  };

  let debounce: ReturnType<typeof setTimeout> | null = null;
  fText.addEventListener('input', () => {
    if (debounce !== null) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = null;
      refilter();
    }, 150);
  });
  for (const s of [fStatus, fAnon, fCountry, fProto, fHttps, fLying, fRotating]) s.addEventListener('change', refilter);
  prev.addEventListener('click', () => {
    pageIndex--;
    renderTable();
  });
  next.addEventListener('click', () => {
    pageIndex++;
    renderTable();
  });
  table.tHead!.addEventListener('click', (e) => {
    const btn = (e.target as Elem).closest<ButtonEl>('button[data-sort]');
    if (!btn) return;
    const key = btn.dataset.sort as SortKey;
    if (!SORT_KEYS.includes(key)) return;
    sortDir = sortKey === key && sortDir === 'ascending' ? 'descending' : 'ascending';
    sortKey = key;
    for (const th of table.tHead!.querySelectorAll('th')) {
      if (th.dataset.key === key) th.setAttribute('aria-sort', sortDir);
      else th.removeAttribute('aria-sort');
    }
    view = sortRows(view, key, sortDir);
    pageIndex = 0;
    renderTable();
  });

  /** `lying`: null when the records could not be read. */
  const renderCards = (file: ResultFile, lying: number | null) => {
    lastCards = { file, lying };
    cards.innerHTML = summaryCards(file as CardSource, lying, service)
      .map((c) => `<div class="card${c.cls ? ` ${c.cls}` : ''}"><dt>${escapeXml(c.label)}</dt><dd>${escapeXml(c.value)}</dd></div>`)
      .join('');
  };

  /** Inner width of a panel's chart box in CSS pixels (its padding excluded by clientWidth of the box itself). */
  const widthOf = (id: string) => byId(id).clientWidth;
  let shown: { file: ResultFile; clustered: Clustered; world: WorldShapes | null } | null = null;

  /** Draws what depends on the drawn width: bars, histogram, map. Called again on resize. */
  const drawSized = () => {
    if (shown === null || body.hidden) return;
    const s = shown.file.summary ?? {};
    const bars = (o: Record<string, number> | undefined) => topWithOther(Object.entries(o ?? {}).map(([label, value]) => ({ label, value })), 10);
    byId('r-countries').innerHTML = barChart(bars(s.countries), 'Working proxies by country', widthOf('r-countries'));
    byId('r-isps').innerHTML = barChart(bars(s.top_isps), 'Working proxies by ISP (top 10)', widthOf('r-isps'));
    const ms = (shown.file.proxies ?? []).filter((p) => p.status === 'working').map((p) => toRow(p).ms).filter((x): x is number => x !== null);
    byId('r-hist').innerHTML = histogramChart(histogramBins(ms, 10), 'Response time of the working proxies (ms)', 'ms', widthOf('r-hist'));
    const failures = failureBars(s.errors, all);
    show(byId('r-fail'), failures.length > 0);
    if (failures.length > 0) {
      byId('r-failures').innerHTML = barChart(topWithOther(failures, 10), 'Failed proxies by error code', widthOf('r-failures'));
      byId('r-fail-notes').innerHTML = failureNotesHtml(failures.slice(0, 10));
    }
    const mapEl = byId('r-map');
    mapEl.innerHTML = mapSvg(shown.world, shown.clustered, MAP.width / Math.max(1, mapEl.clientWidth || MAP.width));
  };
  let resizeTimer: ReturnType<typeof setTimeout> | null = null;
  let lastWidth = 0;
  /** Redraws the sized charts when the drawn width changed (resize, or the view just became visible). */
  const redraw = () => {
    const w = byId('r-map').clientWidth;
    if (w > 0 && w !== lastWidth) {
      lastWidth = w;
      drawSized();
    }
  };
  win().addEventListener('resize', () => {
    if (resizeTimer !== null) clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      resizeTimer = null;
      redraw();
    }, 150);
  });

  const renderCharts = async (file: ResultFile, seq: number) => {
    const s = file.summary ?? {};
    const levels = s.anonymity_levels ?? {};
    const slices: Slice[] = [
      { label: 'Elite', value: levels.elite ?? 0, cls: 'c-elite' },
      { label: 'Anonymous', value: levels.anonymous ?? 0, cls: 'c-anonymous' },
      { label: 'Transparent', value: levels.transparent ?? 0, cls: 'c-transparent' },
    ];
    byId('r-anon').innerHTML = donutChart(slices, 'Anonymity of the working proxies', 'working') + legendHtml(slices);
    const clustered = clusterPoints((file.proxies ?? []).filter((p) => p.status === 'working'));
    shown = { file, clustered, world: null };
    lastWidth = byId('r-map').clientWidth;
    drawSized();
    const note =
      clustered.unplaced === 0
        ? `${formatCount(clustered.placed)} working ${clustered.placed === 1 ? 'proxy' : 'proxies'} on the map.`
        : `${formatCount(clustered.placed)} working ${clustered.placed === 1 ? 'proxy' : 'proxies'} on the map; ${formatCount(clustered.unplaced)} without a known location (for example addresses on a private network).`;
    setText(byId('r-map-note'), note);
    const w = await world();
    if (seq === loadSeq && w !== null && shown !== null) {
      shown.world = w;
      drawSized();
    }
  };

  const renderCustom = (file: ResultFile) => {
    const per = file.custom_url_validation?.per_url_summary ?? [];
    const section = byId('r-custom');
    show(section, per.length > 0);
    const tb = byId<TableEl>('r-custom-table').tBodies[0]!;
    tb.innerHTML = per
      .map((u) => `<tr><td class="mono">${escapeXml(u.url)}</td><td class="num">${formatCount(u.success_count)}</td><td class="num">${formatCount(u.failed_count)}</td><td class="num">${escapeXml(u.success_rate)}</td></tr>`)
      .join('');
  };

  const setLinks = (links: ResultLinks) => {
    for (const ext of ['json', 'csv', 'txt'] as const) {
      const a = byId<AnchorEl>(`dl-${ext}`);
      a.href = links[ext];
    }
  };

  /** Shows a result from its links; `fallback` (the check response) fills the cards when the file cannot be read. */
  const load = async (links: ResultLinks, fallback: ResultFile | null): Promise<boolean> => {
    const seq = ++loadSeq;
    setText(err, '');
    const local = sameOriginResultUrl(links.json, win().location.origin);
    let file: ResultFile | null = null;
    let recordsRead = true;
    let status = 0;
    let problem: unknown = null;
    for (const url of local !== null && local !== links.json ? [local, links.json] : [links.json]) {
      try {
        const r = await fetch(url);
        status = r.status;
        if (r.ok) {
          file = (await r.json()) as ResultFile;
          break;
        }
        problem = await r.json().catch(() => null);
      } catch {
        status = 0;
      }
    }
    if (seq !== loadSeq) return false;
    if (file === null) {
      setText(err, `The full result could not be loaded. ${errorText(status, problem)}`);
      if (fallback === null) return false;
      file = { ...fallback, proxies: [] };
      recordsRead = false;
    }
    show(empty, false);
    show(body, true);
    setLinks(links);
    const warnings = checkWarnings(file.metadata);
    const wl = byId('r-warnings');
    wl.innerHTML = warnings.map((w) => `<li>${escapeXml(w)}</li>`).join('');
    show(wl, warnings.length > 0);
    all = (file.proxies ?? []).map(toRow);
    cols = extraColumns(all);
    for (const el of section.querySelectorAll('[data-col]')) show(el, cols[el.dataset.col as keyof ExtraColumns] === true);
    renderCards(file, recordsRead ? all.filter((r) => r.integrity !== '').length : null);
    renderCustom(file);
    fCountry.replaceChildren(
      option('All', ''),
      ...countryOptions(all).map((c) => option(`${c.name} (${formatCount(c.count)})`, c.code)),
      option('Unknown', '-'),
    );
    fText.value = '';
    fStatus.value = '';
    fAnon.value = '';
    fProto.value = '';
    fHttps.value = '';
    fLying.checked = false;
    fRotating.checked = false;
    sortKey = null;
    for (const th of table.tHead!.querySelectorAll('th')) th.removeAttribute('aria-sort');
    refilter();
    await renderCharts(file, seq);
    return true;
  };

  return {
    /** After a check: the response's links (result_urls or result_url). */
    async showResponse(res: Record<string, unknown>): Promise<boolean> {
      const links = resultLinks(res.result_url, res.result_urls);
      if (links === null) {
        setText(err, 'The check finished but no result link came back.');
        return false;
      }
      return load(links, res as ResultFile);
    },
    /** From the account history: one result link. */
    async showLink(link: string): Promise<boolean> {
      const links = resultLinks(link);
      if (links === null) return false;
      return load(links, null);
    },
    hasResult: () => !body.hidden,
    /** What /health said (one machine or a cluster): the region card follows it. */
    setService(info: ServiceInfo) {
      service = info;
      if (lastCards !== null) renderCards(lastCards.file, lastCards.lying);
    },
    redraw,
    clear() {
      loadSeq++;
      shown = null;
      all = [];
      view = [];
      tbody.innerHTML = '';
      show(body, false);
      show(empty, true);
      setText(err, '');
    },
  };
}
