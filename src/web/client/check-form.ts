/**
 * The "New check" form: the list (pasted or uploaded, counted as typing
 * stops), type (auto too), region (from /regions; on one machine a hint
 * says every region probes from it), timeout, samples per proxy and the
 * custom URLs (custom-urls.ts). `read()` checks it all in the page and
 * gives the check's request, or marks what is wrong.
 */
import { apiGet } from './api';
import { option, type ButtonEl, type Elem, type InputEl, type SelectEl, type TextAreaEl } from './browser';
import { customUrlsHtml, mountCustomUrls } from './custom-urls';
import { byId, setText, show } from './dom';
import { buildCustomUrls, parseProxyList, parseSamples, proxyCountText } from './format';
import type { ServiceInfo } from './service-info';
import type { CheckType } from '../../proxy/types';

export const CHECK_FORM_IDS = Object.freeze({
  form: 'check-form',
  proxies: 'proxies',
  count: 'proxies-count',
  file: 'file',
  type: 'type',
  region: 'region',
  regionHint: 'region-hint',
  timeout: 'timeout',
  samples: 'samples',
  error: 'check-error',
  start: 'start',
});

export function checkFormHtml(): string {
  return [`  <form id="check-form" class="panel" novalidate>
    <div class="field">
      <label for="proxies">Proxies</label>
      <p id="proxies-hint" class="hint">One per line: <code>host:port</code>, <code>user:pass@host:port</code> or <code>host:port:user:pass</code>. Lines starting with # are ignored.</p>
      <textarea id="proxies" name="proxies" rows="9" spellcheck="false" autocomplete="off" aria-describedby="proxies-hint proxies-count" placeholder="203.0.113.7:8080&#10;user:pass@198.51.100.2:3128"></textarea>
      <p id="proxies-count" class="hint">0 proxies</p>
    </div>
    <div class="field">
      <label for="file">Or upload a list</label>
      <input id="file" name="file" type="file" accept=".txt,.csv,.list,text/plain">
    </div>
    <div class="row">
      <div class="field">
        <label for="type">Type</label>
        <select id="type" name="type">
          <option value="http">HTTP</option>
          <option value="socks4">SOCKS4</option>
          <option value="socks5">SOCKS5</option>
          <option value="auto">Auto (try all three)</option>
        </select>
      </div>
      <div class="field">
        <label for="region">Region</label>
        <select id="region" name="region" aria-describedby="region-hint"><option value="us1">Washington DC, USA</option></select>
        <p id="region-hint" class="hint" hidden>This service runs on one machine: every region probes from it.</p>
      </div>
      <div class="field">
        <label for="timeout">Timeout (ms)</label>
        <input id="timeout" name="timeout" type="number" inputmode="numeric" min="1000" max="20000" step="500" value="2000" required aria-describedby="timeout-hint">
        <p id="timeout-hint" class="hint">1000 to 20000</p>
      </div>
      <div class="field">
        <label for="samples">Samples per proxy</label>
        <input id="samples" name="samples" type="number" inputmode="numeric" min="1" max="10" step="1" value="1" required aria-describedby="samples-hint">
        <p id="samples-hint" class="hint">1 to 10, one check each; more than 1 shows rotating exits</p>
      </div>
    </div>`, customUrlsHtml(), `    <p id="check-error" class="error" role="alert"></p>
    <button type="submit" class="primary" id="start">Start check</button>
  </form>`].join('\n');
}

/** What the form asks for, checked. */
export interface CheckInput {
  proxies: string[];
  type: string;
  region: string;
  timeout: number;
  samples: number;
  customUrls: unknown[];
}

export type CheckForm = ReturnType<typeof mountCheckForm>;

/** Counts the list as typing stops (a big paste is parsed once), and on a new type or file. */
function wireCount(text: TextAreaEl, type: SelectEl, file: InputEl, count: Elem): void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const update = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    setText(count, proxyCountText(text.value, type.value as CheckType));
  };
  type.addEventListener('change', update);
  text.addEventListener('input', () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(update, 150);
  });
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    if (!f) return;
    text.value = await f.text();
    update();
  });
  update();
}

/** `onSubmit`: the form was submitted (read() says what it holds). */
export function mountCheckForm(onSubmit: () => void) {
  const ids = CHECK_FORM_IDS;
  const text = byId<TextAreaEl>(ids.proxies);
  const type = byId<SelectEl>(ids.type);
  const region = byId<SelectEl>(ids.region);
  const timeout = byId<InputEl>(ids.timeout);
  const samplesInput = byId<InputEl>(ids.samples);
  const start = byId<ButtonEl>(ids.start);
  const custom = mountCustomUrls();
  wireCount(text, type, byId<InputEl>(ids.file), byId(ids.count));
  byId(ids.form).addEventListener('submit', (e) => {
    e.preventDefault();
    onSubmit();
  });

  const fail = (msg: string, focus?: Elem | null): null => {
    setText(byId(ids.error), msg);
    if (focus) focus.focus();
    return null;
  };

  return {
    fail,
    clearError: () => setText(byId(ids.error), ''),
    /** The checked request, or null after showing what is wrong. */
    read(): CheckInput | null {
      const proxies = parseProxyList(text.value);
      if (proxies.length === 0) return fail('Paste or upload at least one proxy.', text);
      const t = Number(timeout.value);
      if (!Number.isInteger(t) || t < 1000 || t > 20000) return fail('The timeout must be a whole number of milliseconds from 1000 to 20000.', timeout);
      const samples = parseSamples(samplesInput.value);
      if (typeof samples !== 'number') return fail(samples.error, samplesInput);
      const urls = buildCustomUrls(custom.inputs());
      if ('error' in urls) return fail(urls.error, custom.firstInputOf(urls.row));
      return { proxies, type: type.value, region: region.value, timeout: t, samples, customUrls: urls.rules };
    },
    /** The start button while a check runs. */
    busy(running: boolean): void {
      start.disabled = running;
      setText(start, running ? 'Checking…' : 'Start check');
    },
    setService(info: ServiceInfo): void {
      show(byId(ids.regionHint), !info.cluster);
    },
    async loadRegions(): Promise<void> {
      const r = await apiGet('/regions');
      if (!r.ok) return;
      const body = r.body as { regions?: { code: string; name: string }[]; default?: string };
      const list = (body.regions ?? []).filter((x) => x.code !== 'test1');
      if (list.length === 0) return;
      const chosen = region.value;
      region.replaceChildren(...list.map((x) => option(`${x.name} (${x.code})`, x.code)));
      region.value = list.some((x) => x.code === chosen) && chosen !== 'us1' ? chosen : (body.default ?? list[0]!.code);
    },
  };
}
