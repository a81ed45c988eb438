/**
 * A tiny loopback OIDC token endpoint for the secured stack's tests (issue 34): the client-credentials grant
 * (RFC 6749 §4.4, the client's id and secret in HTTP basic auth), answering RS256 JWTs signed with the stack's
 * OAUTHBEARER key (`STACK_SECURE_OAUTH_SIGNING_KEY`), whose JWKS the stack's broker validates against. Each client
 * has its own secret, subject (the Kafka principal) and token life; a client may be given expired tokens. Every token
 * issued is recorded, so a test can see when each client fetched one.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';

export interface OidcClient {
  secret: string;
  /** The token's `sub`: the Kafka principal (`User:<sub>`). */
  sub: string;
  /** Seconds from issue to `exp`. Negative: the token is already expired when issued. */
  lifeS: number;
  /** `scope` the client must ask for, when set (else `invalid_scope`). */
  scope?: string;
}

export interface IssuedToken {
  clientId: string;
  /** When it was issued and when it expires (ms since the epoch). */
  issuedAt: number;
  expiresAt: number;
}

export interface OidcTokenEndpoint {
  /** `http://127.0.0.1:<port>/token`. */
  url: string;
  issued: IssuedToken[];
  /** A signed JWT with these claims over the defaults (iss, aud, iat, exp in 1 h); `key` to sign with another key. */
  mint(claims: Record<string, unknown>, key?: KeyObject): string;
  close(): Promise<void>;
}

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');

/** A JWT signed RS256 (kid `stack-1`, the stack's JWKS key id). */
export function signJwt(claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'stack-1' })}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/** A key the broker does not trust (tests of a wrongly signed token). */
export function foreignKey(): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

export async function startOidcTokenEndpoint(options: {
  signingKeyFile: string;
  issuer: string;
  audience: string;
  clients: Record<string, OidcClient>;
}): Promise<OidcTokenEndpoint> {
  const key = createPrivateKey(readFileSync(options.signingKeyFile));
  const issued: IssuedToken[] = [];
  const defaults = (): Record<string, unknown> => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: options.issuer, aud: options.audience, iat: now, exp: now + 3600 };
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const answer = (status: number, json: object): void => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(json));
      };
      const form = new URLSearchParams(body);
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const [rawId, rawSecret] = Buffer.from(basic ?? '', 'base64')
        .toString()
        .split(':');
      const decode = (s: string | undefined): string => decodeURIComponent((s ?? '').replace(/\+/g, ' '));
      const clientId = decode(rawId);
      const client = options.clients[clientId];
      if (req.method !== 'POST' || req.url !== '/token') return answer(404, { error: 'not_found' });
      if (form.get('grant_type') !== 'client_credentials')
        return answer(400, { error: 'unsupported_grant_type' });
      if (client === undefined || decode(rawSecret) !== client.secret)
        return answer(401, { error: 'invalid_client' });
      if (client.scope !== undefined && form.get('scope') !== client.scope)
        return answer(400, { error: 'invalid_scope' });
      const now = Date.now();
      const iat = Math.floor(now / 1000);
      const exp = iat + client.lifeS;
      issued.push({ clientId, issuedAt: now, expiresAt: exp * 1000 });
      answer(200, {
        access_token: signJwt({ ...defaults(), sub: client.sub, iat, exp }, key),
        token_type: 'Bearer',
        expires_in: client.lifeS,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/token`,
    issued,
    mint: (claims, other) => signJwt({ ...defaults(), ...claims }, other ?? key),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
