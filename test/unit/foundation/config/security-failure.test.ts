import {
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSSASLAuthenticationError,
} from 'kafkajs';
import { ReplyError as IoredisReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isCredentialRefusal, securityFailure } from '../../../../src/foundation/config/security-failure.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';
import { toKafkaError } from '../../../../src/output/kafka/kafka-error.js';
import { toRegistryError } from '../../../../src/output/encoding/registry-client.js';
import { probeSecurityFailure } from '../../../../src/app/cli/service-probes.js';

// kafkajs's typings declare these constructors without arguments; the classes take (message, options).
type ErrorClass = new (...args: unknown[]) => Error;
const make = (cls: unknown, ...args: unknown[]): Error => new (cls as ErrorClass)(...args);
const tlsError = (code: string, message: string): Error => Object.assign(new Error(message), { code });
/** What ioredis throws for a Redis error reply (its class; the reply's code is the first word of its message). */
const reply = (message: string): Error => new (IoredisReplyError as ErrorClass)(message);

describe('securityFailure', () => {
  it('recognises each kind in what the clients throw', () => {
    const cases: [unknown, string | undefined][] = [
      [
        make(
          KafkaJSSASLAuthenticationError,
          'SASL SCRAM SHA512 authentication failed: Authentication failed',
        ),
        'authentication',
      ],
      [
        make(
          KafkaJSNumberOfRetriesExceeded,
          make(KafkaJSSASLAuthenticationError, 'SASL PLAIN authentication failed'),
          { retryCount: 0, retryTime: 0 },
        ),
        'authentication',
      ],
      [
        make(KafkaJSConnectionError, 'Connection error: self-signed certificate in certificate chain'),
        'certificate',
      ],
      [tlsError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'), 'certificate'],
      [
        tlsError(
          'ERR_TLS_CERT_ALTNAME_INVALID',
          "Hostname/IP does not match certificate's altnames: IP: 127.0.0.2 is not in the cert's list",
        ),
        'host name',
      ],
      [
        new Error(
          'Connection error: 80A8D6B5F07F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number',
        ),
        'TLS handshake',
      ],
      [new Error('Failed to connect: error:1C800064:Provider routines::bad decrypt'), 'certificate'],
      [reply('WRONGPASS invalid username-password pair or user is disabled.'), 'authentication'],
      [reply('NOAUTH Authentication required.'), 'authentication'],
      [reply("NOPERM User app has no permissions to run the 'flushall' command"), 'authorisation'],
      [
        Object.assign(new Error('Request failed with status code 401'), { response: { status: 401 } }),
        'authentication',
      ],
      [Object.assign(new Error('HTTP 403'), { status: 403 }), 'authorisation'],
      [
        Object.assign(new Error('Topic authorization failed'), { type: 'TOPIC_AUTHORIZATION_FAILED' }),
        'authorisation',
      ],
      [make(KafkaJSConnectionError, 'Connection error: connect ECONNREFUSED 127.0.0.1:1'), undefined],
      [Object.assign(new Error('HTTP 503'), { status: 503 }), undefined],
    ];
    for (const [error, kind] of cases) expect(securityFailure(error)?.kind, String(error)).toBe(kind);
  });

  it('adds the hint of the kind', () => {
    expect(
      securityFailure(reply('NOAUTH Authentication required.'), { authentication: 'REDIS_URL' })?.summary,
    ).toBe('authentication failed (NOAUTH: a password is required) (check REDIS_URL)');
  });
});

describe('mapping to ServiceError', () => {
  it('Kafka: a SASL failure is one non-retriable line naming the service and the settings', () => {
    const error = toKafkaError(
      make(
        KafkaJSSASLAuthenticationError,
        'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
      ),
      ['127.0.0.1:29092'],
      'connecting the producer',
    );
    expect(error.retriable).toBe(false);
    expect(error.service).toBe('kafka');
    expect(error.message).toBe(
      'Kafka at 127.0.0.1:29092: authentication failed (check GAMEDATA_KAFKA_SASL_MECHANISM, GAMEDATA_KAFKA_SASL_USERNAME, GAMEDATA_KAFKA_SASL_PASSWORD) (while connecting the producer)',
    );
  });

  it('Kafka: an unreachable broker stays retriable', () => {
    expect(
      toKafkaError(make(KafkaJSConnectionError, 'Connection error: connect ECONNREFUSED'), ['h:1'], 'x')
        .retriable,
    ).toBe(true);
  });

  it('registry: 401 is an authentication failure, not retriable, without the credentials', () => {
    const error = toRegistryError(
      Object.assign(new Error('Request failed with status code 401'), { response: { status: 401 } }),
      'https://sr:secret-pw@127.0.0.1:28082',
      'listing subjects',
    );
    expect(error.retriable).toBe(false);
    expect(error.message).toBe(
      'schema registry at 127.0.0.1:28082: authentication failed (HTTP 401) (check GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO or GAMEDATA_SCHEMA_REGISTRY_BEARER_TOKEN) (while listing subjects)',
    );
  });

  it('probes: Redis WRONGPASS and an untrusted certificate', () => {
    const wrong = probeSecurityFailure(
      'redis',
      'Redis',
      '127.0.0.1:26379',
      reply('WRONGPASS invalid username-password pair or user is disabled.'),
    );
    expect(wrong?.message).toBe(
      'Redis at 127.0.0.1:26379: authentication failed (WRONGPASS) (check the user and password in REDIS_URL)',
    );
    expect(wrong?.retriable).toBe(false);
    const cert = probeSecurityFailure(
      'kafka',
      'Kafka',
      '127.0.0.1:29092',
      make(KafkaJSConnectionError, 'Connection error: self-signed certificate in certificate chain'),
    );
    expect(cert?.message).toMatch(
      /^Kafka at 127\.0\.0\.1:29092: certificate not trusted: self-signed certificate in certificate chain \(check GAMEDATA_KAFKA_SSL_CA_LOCATION/,
    );
    expect(probeSecurityFailure('redis', 'Redis', 'h:1', new Error('ECONNREFUSED'))).toBeUndefined();
  });
});

describe('isCredentialRefusal', () => {
  // Made as toKafkaError, toRegistryError and the probes make them: flagged where they are made.
  const refused = (service: ServiceError['service'], message: string, retriable = false): ServiceError => {
    // what the code that made such a message sets (the test's shorthand for it)
    const security = /authentication failed/.test(message)
      ? 'authentication'
      : /not authorised/.test(message)
        ? 'authorisation'
        : undefined;
    return new ServiceError(message, service, { retriable, ...(security === undefined ? {} : { security }) });
  };

  it('a refused password or token of Kafka, the registry or Redis: the worker is at fault, not the slice', () => {
    expect(
      isCredentialRefusal(
        refused('schema-registry', 'schema registry at h:1: authentication failed (HTTP 401) (while x)'),
      ),
    ).toBe(true);
    expect(isCredentialRefusal(refused('kafka', 'Kafka at h:1: authentication failed (check ...)'))).toBe(
      true,
    );
    expect(isCredentialRefusal(refused('redis', 'Redis at h:1: authentication failed (WRONGPASS)'))).toBe(
      true,
    );
  });

  it('not a missing permission, a retriable error, another service, or something else', () => {
    expect(
      isCredentialRefusal(refused('kafka', 'Kafka at h:1: not authorised: TOPIC_AUTHORIZATION_FAILED')),
    ).toBe(false);
    expect(isCredentialRefusal(refused('schema-registry', 'authentication failed (HTTP 401)', true))).toBe(
      false,
    );
    expect(isCredentialRefusal(refused('kafka-connect', 'authentication failed (HTTP 401)'))).toBe(false);
    expect(isCredentialRefusal(refused('schema-registry', 'schema registry answered 422: bad schema'))).toBe(
      false,
    );
    expect(isCredentialRefusal(new Error('authentication failed'))).toBe(false);
    expect(isCredentialRefusal(undefined)).toBe(false);
    // Issue 48, item 7: a ServiceError's text alone decides nothing; the flag set where it was made does.
    expect(isCredentialRefusal(new ServiceError('Kafka at h:1: authentication failed', 'kafka'))).toBe(false);
  });

  it('the errors made from a security failure carry the flag (toKafkaError, toRegistryError, the probes)', () => {
    const kafka = toKafkaError(
      make(KafkaJSSASLAuthenticationError, 'SASL PLAIN authentication failed'),
      ['h:1'],
      'x',
    );
    expect(kafka.security).toBe('authentication');
    expect(isCredentialRefusal(kafka)).toBe(true);
    const registry = toRegistryError(Object.assign(new Error('nope'), { status: 401 }), 'http://h:1', 'x');
    expect(registry.security).toBe('authentication');
    expect(isCredentialRefusal(registry)).toBe(true);
    const redis = probeSecurityFailure(
      'redis',
      'Redis',
      'h:1',
      reply('WRONGPASS invalid username-password pair'),
    );
    expect(redis?.security).toBe('authentication');
    expect(isCredentialRefusal(redis)).toBe(true);
    const denied = probeSecurityFailure('redis', 'Redis', 'h:1', reply('NOPERM no permissions'));
    expect(denied?.security).toBe('authorisation');
    expect(isCredentialRefusal(denied)).toBe(false);
  });
});

describe('one decision per error class (issue 48, item 7)', () => {
  it('KafkaJSSASLAuthenticationError: authentication by its class, whatever its text', () => {
    expect(securityFailure(make(KafkaJSSASLAuthenticationError, 'it said no'))?.kind).toBe('authentication');
  });

  it('KafkaJSProtocolError SASL_AUTHENTICATION_FAILED and *_AUTHORIZATION_FAILED: by their type', () => {
    const typed = (type: string): Error =>
      Object.assign(new Error('refused'), { name: 'KafkaJSProtocolError', type });
    expect(securityFailure(typed('SASL_AUTHENTICATION_FAILED'))?.kind).toBe('authentication');
    expect(securityFailure(typed('TRANSACTIONAL_ID_AUTHORIZATION_FAILED'))?.summary).toBe(
      'not authorised: TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
    );
  });

  it("ioredis' ReplyError: by the reply's code; the same words in another error decide nothing", () => {
    expect(securityFailure(reply('WRONGPASS invalid username-password pair'))?.kind).toBe('authentication');
    expect(securityFailure(new Error('WRONGPASS invalid username-password pair'))).toBeUndefined();
    expect(securityFailure(new Error('SASL PLAIN authentication failed'))).toBeUndefined();
    expect(securityFailure(new Error('Topic authorization failed: not authorised'))).toBeUndefined();
  });

  it('HTTP 401 and 403 (the registry, Connect, the token endpoint): by the status', () => {
    expect(securityFailure(Object.assign(new Error('x'), { response: { status: 401 } }))?.kind).toBe(
      'authentication',
    );
    expect(securityFailure(Object.assign(new Error('x'), { status: 403 }))?.kind).toBe('authorisation');
  });

  it('Node TLS errors: by their code; the text only when no error of the chain has a code', () => {
    expect(securityFailure(tlsError('CERT_HAS_EXPIRED', 'x'))?.kind).toBe('certificate');
    expect(securityFailure(tlsError('ERR_OSSL_BAD_DECRYPT', 'x'))?.kind).toBe('certificate');
    // a code that says something else: the words do not make it a certificate failure
    expect(
      securityFailure(tlsError('ECONNREFUSED', 'self-signed certificate in certificate chain')),
    ).toBeUndefined();
  });

  it('a ServiceError flagged where it was made (the OAUTHBEARER refusal) survives kafkajs wrapping it', () => {
    const oauth = new ServiceError(
      'Kafka at h:1: authentication failed: SASL OAUTHBEARER: the broker refused the token (invalid_token) (check X)',
      'kafka',
      { retriable: false, security: 'authentication' },
    );
    // kafkajs' retrier: KafkaJSNonRetriableError(e, { cause: e.cause || e }); the refusal has no cause of its own
    const wrapped = make(KafkaJSNumberOfRetriesExceeded, oauth, {
      retryCount: 0,
      retryTime: 0,
      cause: oauth,
    });
    expect(securityFailure(wrapped)).toEqual({
      kind: 'authentication',
      summary:
        'authentication failed: SASL OAUTHBEARER: the broker refused the token (invalid_token) (check X)',
    });
  });
});
