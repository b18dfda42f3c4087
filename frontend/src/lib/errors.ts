/**
 * The gateway's error envelope as the dashboard reads and shows it. Imports
 * nothing, so any module (dom.ts, lib/words.ts) can use it without a circle.
 */

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  readonly param: string | undefined;

  constructor(status: number, message: string, code: string, type: string, param?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.type = type;
    this.param = param;
  }
}

export interface ErrorEnvelope {
  message: string;
  code: string;
  type: string;
  param: string | undefined;
}

/**
 * Reads the gateway's error envelope `{"error":{"message","type","code","param"?}}`
 * from a parsed body. Anything else (a proxy's HTML page, an empty body, a
 * non-JSON answer) still gives a sentence and an `http_<status>` code.
 */
export function parseErrorEnvelope(status: number, statusText: string, data: unknown): ErrorEnvelope {
  const raw = (data as { error?: unknown } | null | undefined)?.error;
  const env = typeof raw === 'object' && raw !== null ? (raw as { message?: unknown; type?: unknown; code?: unknown; param?: unknown }) : undefined;
  const message =
    typeof env?.message === 'string' && env.message.trim()
      ? env.message
      : typeof raw === 'string' && raw.trim()
        ? raw
        : `Request failed: HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  const code = env?.code != null && env.code !== '' ? String(env.code) : `http_${status}`;
  const type = typeof env?.type === 'string' ? env.type : '';
  const param = typeof env?.param === 'string' && env.param ? env.param : undefined;
  return { message, code, type, param };
}

export function isAbortError(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

/** Turns anything thrown into something to show: a message and a small code. */
export function describeError(err: unknown): { message: string; code: string } {
  if (err instanceof ApiError) return { message: err.message, code: err.code || err.type || `http_${err.status}` };
  if (err instanceof Error) return { message: err.message, code: 'client_error' };
  return { message: String(err), code: 'client_error' };
}
