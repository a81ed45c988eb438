/** The tRPC error body the service answers with (also for the layer's own 404, 413, 429 and 500). */
export function errorEnvelope(
  message: string,
  code: number,
  key: string,
  httpStatus: number,
  path?: string,
): string {
  return JSON.stringify({
    error: { message, code, data: { code: key, httpStatus, ...(path === undefined ? {} : { path }) } },
  });
}
