/**
 * The Results view's charts: the world map of the working proxies (geo.ts;
 * its outlines /app/world.json read once), the anonymity donut, the country
 * and ISP bars, the response-time histogram, and why proxies failed (a bar
 * per error code with a note each: failures.ts). What depends on the drawn
 * width is drawn again when the width changes (resize, or the view shown).
 */
import { win } from './browser';
import { barChart, donutChart, histogramBins, histogramChart, legendHtml, topWithOther, type Slice } from './charts';
import { byId, setText, show } from './dom';
import { failureBars, failureNotesHtml } from './failures';
import { clusterPoints, MAP, mapSvg, type Clustered, type WorldShapes } from './geo';
import type { ResultFile } from './results-file';
import { formatCount } from './svg';
import { toRow, type Row } from './table';

export const RESULTS_CHARTS_IDS = Object.freeze({
  map: 'r-map',
  mapNote: 'r-map-note',
  anonymity: 'r-anon',
  countries: 'r-countries',
  histogram: 'r-hist',
  isps: 'r-isps',
  fail: 'r-fail',
  failures: 'r-failures',
  failNotes: 'r-fail-notes',
});

export function resultsChartsHtml(): string {
  return `    <section class="panel" aria-labelledby="map-h">
      <h2 id="map-h">Where the working proxies exit</h2>
      <div id="r-map" class="map-wrap"></div>
      <p id="r-map-note" class="hint"></p>
    </section>
    <div class="grid">
      <section class="panel" aria-labelledby="anon-h"><h2 id="anon-h">Anonymity</h2><div id="r-anon" class="donut-wrap"></div></section>
      <section class="panel" aria-labelledby="countries-h"><h2 id="countries-h">Countries</h2><div id="r-countries"></div></section>
      <section class="panel" aria-labelledby="hist-h"><h2 id="hist-h">Response time</h2><div id="r-hist"></div></section>
      <section class="panel" aria-labelledby="isp-h"><h2 id="isp-h">Top ISPs</h2><div id="r-isps"></div></section>
    </div>
    <section id="r-fail" class="panel" aria-labelledby="fail-h" hidden>
      <h2 id="fail-h">Why proxies failed</h2>
      <div class="fail-grid"><div id="r-failures"></div><div id="r-fail-notes"></div></div>
    </section>`;
}

let worldPromise: Promise<WorldShapes | null> | null = null;
function world(): Promise<WorldShapes | null> {
  worldPromise ??= fetch('/app/world.json')
    .then((r) => (r.ok ? (r.json() as Promise<WorldShapes>) : null))
    .catch(() => null);
  return worldPromise;
}

interface Shown {
  file: ResultFile;
  rows: readonly Row[];
  clustered: Clustered;
  world: WorldShapes | null;
}

/** Draws what depends on the drawn width: bars, histogram, failures, map. */
function drawSized(shown: Shown): void {
  const ids = RESULTS_CHARTS_IDS;
  const widthOf = (id: string) => byId(id).clientWidth;
  const s = shown.file.summary ?? {};
  const bars = (o: Record<string, number> | undefined) => topWithOther(Object.entries(o ?? {}).map(([label, value]) => ({ label, value })), 10);
  byId(ids.countries).innerHTML = barChart(bars(s.countries), 'Working proxies by country', widthOf(ids.countries));
  byId(ids.isps).innerHTML = barChart(bars(s.top_isps), 'Working proxies by ISP (top 10)', widthOf(ids.isps));
  const ms = (shown.file.proxies ?? []).filter((p) => p.status === 'working').map((p) => toRow(p).ms).filter((x): x is number => x !== null);
  byId(ids.histogram).innerHTML = histogramChart(histogramBins(ms, 10), 'Response time of the working proxies (ms)', 'ms', widthOf(ids.histogram));
  const failures = failureBars(s.errors, shown.rows);
  show(byId(ids.fail), failures.length > 0);
  if (failures.length > 0) {
    byId(ids.failures).innerHTML = barChart(topWithOther(failures, 10), 'Failed proxies by error code', widthOf(ids.failures));
    byId(ids.failNotes).innerHTML = failureNotesHtml(failures.slice(0, 10));
  }
  const mapEl = byId(ids.map);
  mapEl.innerHTML = mapSvg(shown.world, shown.clustered, MAP.width / Math.max(1, mapEl.clientWidth || MAP.width));
}

function anonymityHtml(file: ResultFile): string {
  const levels = file.summary?.anonymity_levels ?? {};
  const slices: Slice[] = [
    { label: 'Elite', value: levels.elite ?? 0, cls: 'c-elite' },
    { label: 'Anonymous', value: levels.anonymous ?? 0, cls: 'c-anonymous' },
    { label: 'Transparent', value: levels.transparent ?? 0, cls: 'c-transparent' },
  ];
  return donutChart(slices, 'Anonymity of the working proxies', 'working') + legendHtml(slices);
}

function mapNote(c: Clustered): string {
  const on = `${formatCount(c.placed)} working ${c.placed === 1 ? 'proxy' : 'proxies'} on the map`;
  return c.unplaced === 0 ? `${on}.` : `${on}; ${formatCount(c.unplaced)} without a known location (for example addresses on a private network).`;
}

/** `visible()`: whether the charts are on screen (hidden ones are drawn when shown). */
export function mountResultsCharts(visible: () => boolean) {
  let shown: Shown | null = null;
  let lastWidth = 0;
  let seq = 0;
  const draw = () => {
    if (shown !== null && visible()) drawSized(shown);
  };
  /** Redraws the sized charts when the drawn width changed (resize, or the view just became visible). */
  const redraw = () => {
    const w = byId(RESULTS_CHARTS_IDS.map).clientWidth;
    if (w > 0 && w !== lastWidth) {
      lastWidth = w;
      draw();
    }
  };
  let resizeTimer: ReturnType<typeof setTimeout> | null = null;
  win().addEventListener('resize', () => {
    if (resizeTimer !== null) clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      resizeTimer = null;
      redraw();
    }, 150);
  });
  return {
    redraw,
    async show(file: ResultFile, rows: readonly Row[]): Promise<void> {
      const mine = ++seq;
      byId(RESULTS_CHARTS_IDS.anonymity).innerHTML = anonymityHtml(file);
      const clustered = clusterPoints((file.proxies ?? []).filter((p) => p.status === 'working'));
      shown = { file, rows, clustered, world: null };
      lastWidth = byId(RESULTS_CHARTS_IDS.map).clientWidth;
      draw();
      setText(byId(RESULTS_CHARTS_IDS.mapNote), mapNote(clustered));
      const w = await world();
      if (mine === seq && w !== null && shown !== null) {
        shown.world = w;
        draw();
      }
    },
    clear(): void {
      seq++;
      shown = null;
    },
  };
}
