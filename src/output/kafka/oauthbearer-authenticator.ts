/**
 * SASL OAUTHBEARER as kafkajs should speak it (RFC 7628). kafkajs 2.2.4's own authenticator sends the token and
 * ignores the broker's answer: a broker that refuses the token answers with an error challenge
 * (`{"status":"invalid_token"}`) and waits for the client's `%x01` before it fails the exchange, so kafkajs took the
 * refusal for success, its next request was dropped with the connection, and the refusal read as `No brokers in the
 * broker pool` after a round of retries. This authenticator (kafkajs' `sasl.authenticationProvider`, no patch of
 * kafkajs) reads the answer: an error challenge is answered with `%x01` as the RFC asks, and the refusal is one
 * non-retriable line naming the broker, the status the broker gave and the settings to check.
 */
import { ServiceError } from '../../foundation/errors/index.js';

/** kafkajs' OAUTHBEARER SASL options (`KafkaClientSecurity['sasl']` with mechanism `oauthbearer`). */
export interface OauthbearerSasl {
  mechanism: 'oauthbearer';
  oauthBearerProvider: () => Promise<{ value: string }>;
}

/** What kafkajs hands an authentication provider (its `AuthenticationProviderArgs`). */
interface ProviderArgs {
  host: string;
  port: number;
  saslAuthenticate: (exchange: {
    request: { encode: () => Promise<Buffer> };
    response?: { decode: (raw: Buffer) => Promise<Buffer>; parse: (data: Buffer) => Promise<Buffer> };
  }) => Promise<Buffer | undefined>;
}

const SOH = '\u0001';
const HINT =
  'check the token: GAMEDATA_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE, or the token endpoint settings GAMEDATA_KAFKA_SASL_OAUTHBEARER_*, and what the brokers expect (issuer, audience, signing keys)';

/** A SASL BYTES field: int32 length, then the bytes (kafkajs' framing of SaslAuthenticate's auth bytes). */
const bytesField = (payload: Buffer): Buffer => {
  const length = Buffer.alloc(4);
  length.writeInt32BE(payload.length);
  return Buffer.concat([length, payload]);
};

/** The auth bytes of a SaslAuthenticate answer (kafkajs gives them framed as a BYTES field). */
const unframe = (raw: Buffer): Buffer => {
  if (raw.length < 4) return Buffer.alloc(0);
  const length = raw.readInt32BE(0);
  return length <= 0 ? Buffer.alloc(0) : raw.subarray(4, 4 + length);
};

/** `sasl` with an authentication provider that reads the broker's answer (see the header). */
export function withOauthbearerAuthenticator(sasl: OauthbearerSasl): OauthbearerSasl & {
  authenticationProvider: (args: ProviderArgs) => { authenticate: () => Promise<void> };
} {
  return {
    ...sasl,
    authenticationProvider: ({ host, port, saslAuthenticate }: ProviderArgs) => ({
      authenticate: async () => {
        const where = `Kafka at ${host}:${port}`;
        const token = await sasl.oauthBearerProvider();
        const initial = Buffer.from(`n,,${SOH}auth=Bearer ${token.value}${SOH}${SOH}`);
        const response = {
          decode: (raw: Buffer) => Promise.resolve(unframe(raw)),
          parse: (data: Buffer) => Promise.resolve(data),
        };
        let challenge: Buffer | undefined;
        try {
          challenge = await saslAuthenticate({
            request: { encode: () => Promise.resolve(bytesField(initial)) },
            response,
          });
        } catch (error) {
          throw refused(where, (error as Error).message);
        }
        if (challenge === undefined || challenge.length === 0) return;
        // RFC 7628 §3.2.2: an error challenge; the client answers %x01 and the server then fails the exchange
        const status = statusOf(challenge);
        try {
          await saslAuthenticate({
            request: { encode: () => Promise.resolve(bytesField(Buffer.from(SOH))) },
            response,
          });
        } catch {
          // the expected failure of the exchange
        }
        throw refused(where, `the broker refused the token (${status})`);
      },
    }),
  };
}

function statusOf(challenge: Buffer): string {
  try {
    const status = (JSON.parse(challenge.toString('utf8')) as { status?: unknown }).status;
    return typeof status === 'string' && /^[\w.-]{1,40}$/.test(status) ? status : 'error';
  } catch {
    return 'error';
  }
}

/**
 * The broker refused the token: flagged as an authentication failure where it is made (`securityFailure` reads the
 * flag, not the text). It carries no `cause` on purpose: kafkajs' retrier wraps a failure as
 * `KafkaJSNonRetriableError(e, { cause: e.cause || e })`, so an error with a cause of its own would be dropped from
 * the chain and its flag with it; the broker's answer is in `detail`.
 */
function refused(where: string, detail: string): ServiceError {
  return new ServiceError(`${where}: authentication failed: SASL OAUTHBEARER: ${detail} (${HINT})`, 'kafka', {
    retriable: false,
    security: 'authentication',
  });
}
