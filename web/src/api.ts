/**
 * Talks to the API of the server that serves the app. The key lives in this
 * browser's localStorage (shared with the explorer and the API reference, which
 * are served from the same origin) and travels only in a request header.
 */
export const KEY_STORAGE = 'tiergraph.apiKey';

/** The header that carries the key, as the server named it in the page. */
export const KEY_HEADER =
  document
    .querySelector<HTMLMetaElement>('meta[name="tiergraph-key-header"]')
    ?.content.replace(/^%.*%$/, '') || 'X-SERVICE-KEY';

export function storedKey(): string | null {
  return localStorage.getItem(KEY_STORAGE);
}

export function saveKey(key: string): void {
  localStorage.setItem(KEY_STORAGE, key);
}

export function forgetKey(): void {
  localStorage.removeItem(KEY_STORAGE);
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    /** Seconds the server asked to wait before trying again (a 503 while it starts), else null. */
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
  }
}

/** Seconds in a Retry-After header given as a number (the form this server sends), else null. */
function retryAfterOf(res: Response): number | null {
  const v = Number(res.headers.get('retry-after') ?? NaN);
  return Number.isFinite(v) && v >= 0 ? v : null;
}

/** Raised when the server refuses the stored key, so the app can ask for another. */
export class KeyRefused extends ApiError {}

let keyRefused: ((e: KeyRefused) => void) | null = null;

/**
 * What to do when a request of any part of a page finds the stored key refused (revoked while the
 * page is open, say): the app asks for another key, wherever the refusal happened.
 */
export function whenKeyRefused(f: (e: KeyRefused) => void): void {
  keyRefused = f;
}

/** The failure of a request made with the stored key, told to the app first when it is the key's. */
async function storedKeyFailure(res: Response): Promise<ApiError> {
  const e = await failure(res);
  if (e instanceof KeyRefused) keyRefused?.(e);
  return e;
}

/**
 * Whether an answer of /graphql is not GraphQL's own: a problem document (too many requests, a
 * body too large, the server starting) or a proxy's page, to be told by its status and detail.
 */
function notGraphQL(res: Response): boolean {
  const type = res.headers.get('content-type') ?? '';
  return type.startsWith('application/problem+json') || (!res.ok && !type.includes('json'));
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  return { ...(key ? { [KEY_HEADER]: key } : {}), ...extra };
}

async function failure(res: Response): Promise<ApiError> {
  let detail = res.statusText;
  let code: string | null = null;
  try {
    const body = (await res.json()) as { detail?: string; code?: string; errors?: { message: string }[] };
    detail = body.detail ?? body.errors?.[0]?.message ?? detail;
    code = body.code ?? null;
  } catch {
    // Not JSON: keep the status text.
  }
  const Kind = res.status === 401 || res.status === 403 ? KeyRefused : ApiError;
  return new Kind(detail, res.status, code, retryAfterOf(res));
}

export async function rest<T>(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const res = await send(path, {
    method: init.method ?? 'GET',
    headers: headers({
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    }),
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (!res.ok) throw await storedKeyFailure(res);
  return (await res.json()) as T;
}

interface GqlResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; status?: number; retry_after_s?: number } }[];
}

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await send('/graphql', {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json' }),
    body: JSON.stringify({ query, variables }),
  });
  if (res.status === 401 || res.status === 403 || notGraphQL(res)) throw await storedKeyFailure(res);
  const body = (await res.json()) as GqlResponse<T>;
  const first = body.errors?.[0];
  if (first) {
    const ext = first.extensions;
    throw new ApiError(
      first.message,
      ext?.status ?? res.status,
      ext?.code ?? null,
      ext?.retry_after_s ?? null,
    );
  }
  if (!body.data) throw new ApiError('The server returned no data.', res.status, null);
  return body.data;
}

/**
 * Checks a key before keeping it, with the cheapest authenticated request there is: true, or what
 * to tell the analyst (a refused key, or the server's own reason for answering otherwise, such as
 * too many failed attempts from this address and how long to wait).
 */
export async function keyWorks(key: string): Promise<true | string> {
  const res = await send('/graphql', {
    method: 'POST',
    headers: { [KEY_HEADER]: key, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  if (res.ok) return true;
  const why = await failure(res);
  if (why instanceof KeyRefused) return `The server does not accept this key: ${why.message}`;
  // The server's own words may already say how long to wait.
  const wait =
    why.retryAfterS !== null && !/retry|try again/i.test(why.message)
      ? ` Try again in ${why.retryAfterS} s.`
      : '';
  return `The key could not be checked: ${why.message}${wait}`;
}

/** fetch, with a failure to reach the server told in words an analyst can act on. */
async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch {
    throw new ApiError(
      'The server cannot be reached. Check the connection, then try again (reload the page).',
      0,
      'UNREACHABLE',
    );
  }
}
