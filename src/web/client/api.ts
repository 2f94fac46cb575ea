/**
 * The dashboard's client of the service's own HTTP API (same origin): JSON
 * GET/POST/PATCH/DELETE with the key in `X-API-Key`, text pages (a pool's
 * txt/csv downloads), network failures as status 0, and the
 * WebSocket progress channel (/ws?jobId=&apiKey=), opened before the check is
 * posted so no message is missed. Also where the API key lives in the browser
 * (sessionStorage, or localStorage when the user asks to be remembered).
 */
import { win, type StorageLike } from './browser';

export interface ApiAnswer {
  ok: boolean;
  /** HTTP status; 0 when the service could not be reached */
  status: number;
  body: unknown;
}

async function send(path: string, init: RequestInit): Promise<ApiAnswer> {
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, body: null };
  }
  const text = await res.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { ok: res.ok, status: res.status, body };
}

export function apiGet(path: string, key?: string): Promise<ApiAnswer> {
  return send(path, { headers: key ? { 'X-API-Key': key, Accept: 'application/json' } : { Accept: 'application/json' } });
}

export function apiPost(path: string, key: string, json: unknown): Promise<ApiAnswer> {
  return send(path, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(json),
  });
}

/** PATCH or DELETE with the key (the pools' changes); a JSON body when given. */
export function apiSend(method: 'PATCH' | 'DELETE', path: string, key: string, json?: unknown): Promise<ApiAnswer> {
  return send(path, {
    method,
    headers: { 'X-API-Key': key, Accept: 'application/json', ...(json !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

/** A text answer (a txt or csv page of a pool's proxies) with the next page's cursor header. */
export async function apiText(path: string, key: string): Promise<{ ok: boolean; status: number; text: string; nextCursor: string | null }> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { 'X-API-Key': key } });
  } catch {
    return { ok: false, status: 0, text: '', nextCursor: null };
  }
  const text = await res.text().catch(() => '');
  return { ok: res.ok, status: res.status, text, nextCursor: res.headers.get('x-next-cursor') };
}

/** A progress subscription: `close()` ends it (idempotent). */
export interface ProgressChannel {
  close(): void;
}

/**
 * Opens /ws?jobId=&apiKey= on this origin. Resolves once it is open, or with
 * null when it cannot be opened within `openTimeoutMs` (the check then runs
 * without live progress). `onMessage` gets each parsed message; `onEnd` fires
 * once, when the channel closes for any reason after it opened.
 */
export function openProgress(
  jobId: string,
  key: string,
  onMessage: (msg: unknown) => void,
  onEnd: (code: number) => void,
  openTimeoutMs = 4000,
): Promise<ProgressChannel | null> {
  const location = win().location;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = `${proto}//${location.host}/ws?jobId=${encodeURIComponent(jobId)}&apiKey=${encodeURIComponent(key)}`;
  return new Promise((resolve) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch {
      resolve(null);
      return;
    }
    let opened = false;
    let ended = false;
    const timer = setTimeout(() => {
      if (!opened) {
        ws.close();
        resolve(null);
      }
    }, openTimeoutMs);
    ws.onopen = () => {
      opened = true;
      clearTimeout(timer);
      resolve({ close: () => ws.close(1000) });
    };
    ws.onmessage = (e) => {
      try {
        onMessage(JSON.parse(String(e.data)));
      } catch {
        // a message that is not JSON is ignored
      }
    };
    ws.onclose = (e) => {
      clearTimeout(timer);
      if (!opened) {
        resolve(null);
        return;
      }
      if (ended) return;
      ended = true;
      onEnd(e.code);
    };
    ws.onerror = () => {
      // followed by onclose, which settles everything
    };
  });
}

const KEY_NAME = 'proxycheck.apiKey';

function storages(): StorageLike[] {
  const out: StorageLike[] = [];
  try {
    out.push(win().sessionStorage);
  } catch {
    // storage disabled
  }
  try {
    out.push(win().localStorage);
  } catch {
    // storage disabled
  }
  return out;
}

/** The saved key: this tab's session first, then the remembered one. */
export function loadKey(): string | null {
  for (const s of storages()) {
    const k = s.getItem(KEY_NAME);
    if (k) return k;
  }
  return null;
}

/** Saves the key for this tab only, or on this device when `remember`. */
export function saveKey(key: string, remember: boolean): void {
  clearKey();
  try {
    (remember ? win().localStorage : win().sessionStorage).setItem(KEY_NAME, key);
  } catch {
    // storage disabled: the key lives in memory only (see main.ts)
  }
}

export function clearKey(): void {
  for (const s of storages()) s.removeItem(KEY_NAME);
}

/**
 * A pool's events (`/ws?pool=`, the key in the query: a browser cannot set
 * the header on a WebSocket). `onMessage` gets each JSON message; `onClose`
 * the close's code and reason once (also when it never opened: code 1006).
 * Returns its close (idempotent; no onClose after it).
 */
export function openPoolEvents(poolId: string, key: string, onMessage: (msg: unknown) => void, onOpen: () => void, onClose: (code: number, reason: string) => void): () => void {
  const location = win().location;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let ws: WebSocket;
  try {
    ws = new WebSocket(`${proto}//${location.host}/ws?pool=${encodeURIComponent(poolId)}&apiKey=${encodeURIComponent(key)}`);
  } catch {
    setTimeout(() => onClose(1006, ''), 0);
    return () => {};
  }
  let done = false;
  ws.onopen = () => onOpen();
  ws.onmessage = (e) => {
    try {
      onMessage(JSON.parse(String(e.data)));
    } catch {
      // a message that is not JSON is ignored
    }
  };
  ws.onclose = (e) => {
    if (done) return;
    done = true;
    onClose(e.code, e.reason);
  };
  return () => {
    done = true;
    ws.close(1000);
  };
}
