/**
 * A TLS reset is not a wrong certificate (issue 34, item 3): a reset during the handshake (a broker restarting) is
 * retriable; a certificate or name mismatch, a server alert or a plaintext answer is permanent; resets in a row
 * before a service's first answer are taken for a plaintext port.
 */
import { createServer, type Server } from 'node:net';
import { KafkaJSConnectionError } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FIRST_CONNECT_TLS_RESETS,
  handshakeResetFailure,
  isTlsHandshakeReset,
  securityFailure,
} from '../../../../src/foundation/config/security-failure.js';
import { toKafkaError } from '../../../../src/output/kafka/kafka-error.js';
import { requireReachable } from '../../../../src/app/cli/service-probes.js';
import { ServiceError } from '../../../../src/foundation/errors/index.js';

type ErrorClass = new (...args: unknown[]) => Error;
const kafkaConnectionError = (message: string, code: string): Error =>
  new (KafkaJSConnectionError as unknown as ErrorClass)(`Connection error: ${message}`, {
    broker: '127.0.0.1:29092',
    code,
  });
const coded = (code: string, message: string): Error => Object.assign(new Error(message), { code });

const RESET = kafkaConnectionError(
  'Client network socket disconnected before secure TLS connection was established',
  'ECONNRESET',
);

describe('TLS failures by meaning', () => {
  it('a reset during the handshake and a bare EPROTO are retriable, not security failures', () => {
    expect(securityFailure(RESET)).toBeUndefined();
    expect(isTlsHandshakeReset(RESET)).toBe(true);
    const eproto = coded('EPROTO', 'write EPROTO');
    expect(securityFailure(eproto)).toBeUndefined();
    expect(isTlsHandshakeReset(eproto)).toBe(true);
    const e = toKafkaError(RESET, ['127.0.0.1:29092'], 'connecting');
    expect(e.retriable).toBe(true);
  });

  it('certificate, name, alert and plaintext-port failures are permanent, from their codes', () => {
    const cases: [Error, string][] = [
      [
        kafkaConnectionError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN'),
        'certificate',
      ],
      [coded('ERR_TLS_CERT_ALTNAME_INVALID', 'Hostname/IP does not match'), 'host name'],
      [
        kafkaConnectionError(
          'ssl3_read_bytes:tlsv13 alert certificate required',
          'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
        ),
        'certificate',
      ],
      [coded('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', 'x'), 'certificate'],
      [coded('ERR_SSL_WRONG_VERSION_NUMBER', 'ssl3_get_record:wrong version number'), 'TLS handshake'],
      [coded('ERR_SSL_PACKET_LENGTH_TOO_LONG', 'x'), 'TLS handshake'],
      // EPROTO carries its OpenSSL alert in the text only
      [coded('EPROTO', 'write EPROTO ...:SSL routines:...:sslv3 alert handshake failure'), 'certificate'],
    ];
    for (const [error, kind] of cases) {
      expect(securityFailure(error)?.kind, error.message).toBe(kind);
      expect(isTlsHandshakeReset(error), error.message).toBe(false);
      expect(toKafkaError(error, ['b:1'], 'connecting').retriable, error.message).toBe(false);
    }
    // the wording of a reset's message does not make it permanent
    expect(securityFailure(coded('ECONNRESET', 'wrong version number'))).toBeUndefined();
  });

  it(`resets are judged a plaintext port only before the first connection, from ${FIRST_CONNECT_TLS_RESETS} in a row`, () => {
    expect(handshakeResetFailure(FIRST_CONNECT_TLS_RESETS - 1, false)).toBeUndefined();
    expect(handshakeResetFailure(FIRST_CONNECT_TLS_RESETS, false)?.kind).toBe('TLS handshake');
    expect(handshakeResetFailure(100, true)).toBeUndefined();
  });
});

describe('requireReachable against a port that resets every TLS handshake', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => server?.close(r));
  });

  it('tries again, then says one permanent line naming the address', async () => {
    let connections = 0;
    server = createServer((socket) => {
      connections += 1;
      socket.resetAndDestroy();
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const error = await requireReachable({
      schemaRegistryUrl: `https://127.0.0.1:${port}/apis/ccompat/v7`,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).retriable).toBe(false);
    expect((error as ServiceError).message).toMatch(
      new RegExp(
        `^The schema registry at 127\\.0\\.0\\.1:${port}: TLS handshake failed: the connection was reset 3 times`,
      ),
    );
    expect(connections).toBeGreaterThanOrEqual(FIRST_CONNECT_TLS_RESETS);
  });
});
