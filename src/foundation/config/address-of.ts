/**
 * How an error names a service: its address (`host:port`), or its URL without credentials. Never a URL's
 * `user:password@` (an error's text ends up in logs, Redis and `status`).
 */

/**
 * `host:port` of a URL (no user, password, path or query); `(invalid address)` when `url` is not a URL.
 * @example addressOf('https://u:pw@registry.example:8081/apis') // 'registry.example:8081'
 */
export function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return u.port === '' ? u.hostname : `${u.hostname}:${u.port}`;
  } catch {
    return '(invalid address)';
  }
}

/**
 * `url` without its user and password (path and query kept, a trailing slash as given); `(invalid address)` when it
 * is not a URL.
 * @example withoutCredentials('http://u:pw@api.example/trpc') // 'http://api.example/trpc'
 */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    const out = u.toString();
    return url.endsWith('/') || !out.endsWith('/') ? out : out.slice(0, -1);
  } catch {
    return '(invalid address)';
  }
}
