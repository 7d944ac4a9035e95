/**
 * The dashboard's calls to the service (same origin). The token lives in
 * sessionStorage for the tab's life; the API key is never stored. A 401 from
 * any call ends the session: `onSignedOut` brings back the sign-in form.
 */
import { isMissingRoute } from './format.js';

const TOKEN = 'dashboard.token';
const CLIENT = 'dashboard.client';

/** What a call answered: the body, a route not deployed (the fallback's 404), or another error with its cause. */
export type Outcome<T> = { kind: 'ok'; body: T } | { kind: 'missing'; cause: string } | { kind: 'error'; status: number; cause: string };

/** Thrown after a 401: the session is over and the caller stops what it was drawing. */
export class SignedOutError extends Error {}

let onSignedOut: (cause: string) => void = () => undefined;

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN),
  client: (): string | null => sessionStorage.getItem(CLIENT),
  clear(): void {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(CLIENT);
  },
  /** What to do when a call answers 401. */
  onSignedOut(fn: (cause: string) => void): void {
    onSignedOut = fn;
  },
};

async function causeOf(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { cause?: unknown };
    return typeof body.cause === 'string' ? body.cause : `HTTP ${res.status}`;
  } catch {
    return `HTTP ${res.status}`;
  }
}

/** Exchanges the client name and API key for a token (GET /v1/token); keeps the token, not the key. Returns the cause on failure. */
export async function signIn(client: string, apiKey: string): Promise<string | undefined> {
  const query = new URLSearchParams({ username: client, password: apiKey });
  const res = await fetch(`/v1/token?${query}`, { cache: 'no-store' });
  if (!res.ok) return res.status === 401 ? 'Wrong client name or API key.' : await causeOf(res);
  const { token } = (await res.json()) as { token: string };
  sessionStorage.setItem(TOKEN, token);
  sessionStorage.setItem(CLIENT, client);
  return undefined;
}

/** GET of a token-authenticated route. A 401 signs out and throws SignedOutError. */
export async function getJson<T>(path: string, query: Record<string, string> = {}): Promise<Outcome<T>> {
  const token = session.token();
  if (!token) throw new SignedOutError('no token');
  const qs = new URLSearchParams(query).toString();
  const res = await fetch(qs ? `${path}?${qs}` : path, { headers: { 'x-service-client-token': token }, cache: 'no-store' });
  // Signed out (or in as someone else) while the call ran: its answer belongs to no one on screen.
  if (session.token() !== token) throw new SignedOutError('signed out');
  if (res.status === 401) {
    const cause = await causeOf(res);
    session.clear();
    onSignedOut(cause);
    throw new SignedOutError(cause);
  }
  if (res.ok) return { kind: 'ok', body: (await res.json()) as T };
  const cause = await causeOf(res);
  return isMissingRoute(res.status, cause) ? { kind: 'missing', cause } : { kind: 'error', status: res.status, cause };
}
