/**
 * The "New check" view: the list (pasted or uploaded), type (auto too) /
 * region / timeout / samples per proxy, custom-URL rows, and the run itself: open the progress WebSocket
 * first, then POST /check?async=true with a fresh jobId (the check outlives
 * the page's connection: job-follow.ts), show the bar / counts / ETA as
 * messages arrive (with throttled screen-reader announcements), and hand the
 * check response to the results view when the job has completed. A reload
 * while it runs reattaches to it (`resume`). On one machine a hint under
 * the region says that every region probes from it.
 */
import { create, doc, option, type ButtonEl, type Elem, type InputEl, type LabelEl, type ProgressEl, type SelectEl, type TextAreaEl } from './browser';
import { apiGet, apiPost } from './api';
import { followJob, keepJob, keptJob, openSocket } from './job-follow';
import { announcer, byId, setText, show } from './dom';
import { buildCustomUrls, errorText, formatEta, jobIdFrom, parseProxyList, parseSamples, proxyCountText, type CustomUrlInput } from './format';
import type { ServiceInfo } from './service-info';
import type { CheckType } from '../../proxy/types';
import { formatCount } from './svg';

const MAX_CUSTOM_URLS = 10;

export interface CheckViewDeps {
  key: () => string | null;
  /** Called with the check response when a check succeeded. */
  onResult: (response: Record<string, unknown>) => void;
  /** Called on 401 (the key stopped working). */
  onUnauthorized: () => void;
}

interface ProgressMsg {
  status?: string;
  progress?: number;
  eta?: number | null;
  currentStep?: string;
  details?: { message?: string; working_so_far?: number; checked?: number; total?: number };
}

export function setupCheckView(deps: CheckViewDeps): { loadRegions(): Promise<void>; setService(info: ServiceInfo): void; resume(): Promise<boolean> } {
  const form = byId('check-form');
  const text = byId<TextAreaEl>('proxies');
  const count = byId('proxies-count');
  const file = byId<InputEl>('file');
  const type = byId<SelectEl>('type');
  const region = byId<SelectEl>('region');
  const timeout = byId<InputEl>('timeout');
  const samplesInput = byId<InputEl>('samples');
  const rows = byId('cu-rows');
  const add = byId<ButtonEl>('cu-add');
  const error = byId('check-error');
  const start = byId<ButtonEl>('start');
  const panel = byId('progress');
  const bar = byId<ProgressEl>('p-bar');
  const pChecked = byId('p-checked');
  const pWorking = byId('p-working');
  const pEta = byId('p-eta');
  const pPercent = byId('p-percent');
  const pMessage = byId('p-message');
  const live = announcer(byId('p-live'));
  let rowSeq = 0;
  let running = false;

  let countTimer: ReturnType<typeof setTimeout> | null = null;
  const updateCount = () => {
    if (countTimer !== null) clearTimeout(countTimer);
    countTimer = null;
    setText(count, proxyCountText(text.value, type.value as CheckType));
  };
  type.addEventListener('change', updateCount);
  text.addEventListener('input', () => {
    // a big paste is parsed once typing stops
    if (countTimer !== null) clearTimeout(countTimer);
    countTimer = setTimeout(updateCount, 150);
  });
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    if (!f) return;
    text.value = await f.text();
    updateCount();
  });

  const addRow = () => {
    if (rows.children.length >= MAX_CUSTOM_URLS) return;
    const n = ++rowSeq;
    const row = create('div');
    row.className = 'cu-row';
    row.setAttribute('role', 'group');
    row.setAttribute('aria-label', `Custom URL ${rows.children.length + 1}`);
    const field = (label: string, input: InputEl, cls = 'field') => {
      const wrap = create('div');
      wrap.className = cls;
      const l = create<LabelEl>('label');
      l.htmlFor = input.id;
      l.textContent = label;
      if (input.type === 'checkbox') wrap.append(input, l);
      else wrap.append(l, input);
      return wrap;
    };
    const input = (id: string, type: string, part: string) => {
      const i = create<InputEl>('input');
      i.id = id;
      i.type = type;
      i.spellcheck = false;
      i.dataset.part = part;
      return i;
    };
    const url = input(`cu-url-${n}`, 'url', 'url');
    url.placeholder = 'https://example.com/';
    const codes = input(`cu-codes-${n}`, 'text', 'codes');
    codes.placeholder = '200';
    codes.inputMode = 'numeric';
    const must = input(`cu-text-${n}`, 'text', 'text');
    const cs = input(`cu-case-${n}`, 'checkbox', 'case');
    const remove = create<ButtonEl>('button');
    remove.type = 'button';
    remove.className = 'secondary small';
    remove.textContent = 'Remove';
    remove.addEventListener('click', () => {
      row.remove();
      relabel();
      add.focus();
    });
    row.append(field('URL', url, 'field grow'), field('Status codes', codes), field('Required text', must), field('Case-sensitive', cs, 'checkbox'), remove);
    rows.append(row);
    relabel();
    url.focus();
  };
  const relabel = () => {
    [...rows.children].forEach((r, i) => {
      r.setAttribute('aria-label', `Custom URL ${i + 1}`);
      const btn = r.querySelector('button');
      if (btn) btn.setAttribute('aria-label', `Remove custom URL ${i + 1}`);
    });
    add.disabled = rows.children.length >= MAX_CUSTOM_URLS;
  };
  add.addEventListener('click', addRow);

  const customInputs = (): CustomUrlInput[] =>
    [...rows.children].map((r) => {
      const v = (part: string) => r.querySelector<InputEl>(`[data-part="${part}"]`);
      return { url: v('url')?.value ?? '', codes: v('codes')?.value ?? '', text: v('text')?.value ?? '', caseSensitive: v('case')?.checked ?? false };
    });

  const fail = (msg: string, focus?: Elem) => {
    setText(error, msg);
    if (focus) focus.focus();
  };

  const render = (m: ProgressMsg) => {
    const d = m.details ?? {};
    const total = d.total ?? 0;
    const checked = d.checked ?? 0;
    const pct = typeof m.progress === 'number' ? m.progress : 0;
    bar.value = pct;
    setText(pChecked, `${formatCount(checked)} of ${formatCount(total)}`);
    setText(pWorking, formatCount(d.working_so_far ?? 0));
    setText(pEta, m.status === 'completed' ? 'done' : m.status === 'failed' ? '—' : formatEta(m.eta));
    setText(pPercent, `${Math.floor(pct)}%`);
    setText(pMessage, d.message ?? '');
    if (m.status === 'in_progress') {
      live.say(`${Math.floor(pct)}% done: ${formatCount(checked)} of ${formatCount(total)} checked, ${formatCount(d.working_so_far ?? 0)} working.`);
    }
  };

  const run = async () => {
    if (running) return;
    setText(error, '');
    const key = deps.key();
    if (key === null) return deps.onUnauthorized();
    const proxies = parseProxyList(text.value);
    if (proxies.length === 0) return fail('Paste or upload at least one proxy.', text);
    const t = Number(timeout.value);
    if (!Number.isInteger(t) || t < 1000 || t > 20000) return fail('The timeout must be a whole number of milliseconds from 1000 to 20000.', timeout);
    const samples = parseSamples(samplesInput.value);
    if (typeof samples !== 'number') return fail(samples.error, samplesInput);
    const custom = buildCustomUrls(customInputs());
    if ('error' in custom) {
      const bad = rows.children[custom.row]?.querySelector<InputEl>('input');
      return fail(custom.error, bad ?? undefined);
    }
    const jobId = jobIdFrom(crypto.getRandomValues(new Uint8Array(12)));
    begin(proxies.length);
    live.now(`Check started: ${formatCount(proxies.length)} proxies.`);
    let sub: Awaited<ReturnType<typeof openSocket>> = null;
    try {
      sub = await openSocket(jobId, key, render);
      if (sub === null) setText(pMessage, 'Live progress is unavailable; waiting for the result…');
      const body: Record<string, unknown> = { proxies, type: type.value, region: region.value, timeout: t, jobId };
      if (samples > 1) body.samples = samples;
      if (custom.rules.length > 0) body.customUrls = custom.rules;
      // asynchronous: the job runs on if this page's connection drops (or the page reloads)
      const r = await apiPost('/check?async=true', key, body);
      if (r.status === 401) {
        deps.onUnauthorized();
        return;
      }
      if (!r.ok) {
        fail(errorText(r.status, r.body));
        setText(pMessage, 'The check did not run.');
        live.now(`The check did not run: ${errorText(r.status, r.body)}`);
        return;
      }
      keepJob(jobId);
      const following = sub;
      sub = null; // followJob closes it
      await follow(jobId, key, following);
    } finally {
      sub?.close();
      end();
    }
  };

  /** The progress panel for a run of `total` proxies (0: not known yet). */
  const begin = (total: number) => {
    running = true;
    start.disabled = true;
    setText(start, 'Checking…');
    show(panel, true);
    panel.setAttribute('aria-busy', 'true');
    bar.value = 0;
    render({ status: 'in_progress', progress: 0, eta: null, details: { message: 'Connecting…', total, checked: 0, working_so_far: 0 } });
    panel.scrollIntoView({ block: 'nearest' });
  };
  const end = () => {
    running = false;
    start.disabled = false;
    setText(start, 'Start check');
    panel.setAttribute('aria-busy', 'false');
  };

  /** Follows a submitted (or kept) job to its end and shows how it ended. */
  const follow = async (jobId: string, key: string, sub: Awaited<ReturnType<typeof openSocket>>) => {
    let finalSeen = false;
    const out = await followJob(
      jobId,
      key,
      (m) => {
        if (m.status === 'completed' || m.status === 'failed') finalSeen = true;
        render(m);
      },
      sub,
    );
    if (out.kind === 'unauthorized') return deps.onUnauthorized();
    keepJob(null);
    if (out.kind === 'gone') {
      fail('The service no longer knows this check.');
      setText(pMessage, '');
      return;
    }
    const job = out.job;
    const p = job.progress;
    if (job.status !== 'completed' || job.result === undefined) {
      const why = job.error ? ` (${job.error})` : '';
      const msg =
        job.status === 'cancelled'
          ? `The check was cancelled${why}; the checks not performed were refunded.`
          : `The check failed${why}; it delivered no result and every check it reserved was refunded.`;
      fail(msg);
      setText(pMessage, msg);
      live.now(msg);
      return;
    }
    if (!finalSeen) render({ status: 'completed', progress: 100, eta: 0, details: { message: 'Completed', total: p.total, checked: p.checked, working_so_far: p.working_so_far } });
    live.now(`Check complete: ${formatCount(p.working_so_far)} of ${formatCount(p.checked)} proxies working.`);
    deps.onResult(job.result);
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void run();
  });
  updateCount();

  return {
    /** Reattaches to the check this tab started before a reload, if one is kept; true when there was one. */
    async resume() {
      const jobId = keptJob();
      const key = deps.key();
      if (jobId === null || key === null || running) return false;
      begin(0);
      live.now('Following the check started before the page was reloaded.');
      try {
        await follow(jobId, key, null);
      } finally {
        end();
      }
      return true;
    },
    setService(info: ServiceInfo) {
      show(byId('region-hint'), !info.cluster);
    },
    async loadRegions() {
      const r = await apiGet('/regions');
      if (!r.ok) return;
      const body = r.body as { regions?: { code: string; name: string }[]; default?: string };
      const list = (body.regions ?? []).filter((x) => x.code !== 'test1');
      if (list.length === 0) return;
      const chosen = region.value;
      region.replaceChildren(
        ...list.map((x) => option(`${x.name} (${x.code})`, x.code)),
      );
      region.value = list.some((x) => x.code === chosen) && chosen !== 'us1' ? chosen : (body.default ?? list[0]!.code);
    },
  };
}
