import {
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSSASLAuthenticationError,
} from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { isCredentialRefusal, securityFailure } from '../../../src/foundation/config/security-failure.js';
import { ServiceError } from '../../../src/foundation/errors.js';
import { toKafkaError } from '../../../src/output/kafka/kafka-error.js';
import { toRegistryError } from '../../../src/output/encoding/registry-client.js';
import { probeSecurityFailure } from '../../../src/app/cli/service-probes.js';

// kafkajs's typings declare these constructors without arguments; the classes take (message, options).
type ErrorClass = new (...args: unknown[]) => Error;
const make = (cls: unknown, ...args: unknown[]): Error => new (cls as ErrorClass)(...args);
const tlsError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

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
      [new Error('WRONGPASS invalid username-password pair or user is disabled.'), 'authentication'],
      [new Error('NOAUTH Authentication required.'), 'authentication'],
      [new Error("NOPERM User app has no permissions to run the 'flushall' command"), 'authorisation'],
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
      securityFailure(new Error('NOAUTH Authentication required.'), { authentication: 'REDIS_URL' })?.summary,
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
      new Error('WRONGPASS invalid username-password pair or user is disabled.'),
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
  const refused = (service: ServiceError['service'], message: string, retriable = false): ServiceError =>
    new ServiceError(message, service, { retriable });

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
  });
});
