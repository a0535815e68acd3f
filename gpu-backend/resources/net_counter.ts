/**
 * @module Counts the network body bytes a backend process receives and sends, cheaply.
 *
 * What is counted: HTTP request bodies (their `content-length`, else the bytes read from
 * a streamed body) and response bodies (their `content-length`, else the bytes written
 * from the body stream) of the backend's `Deno.serve` handler, and the payload of every
 * peer WebSocket frame, received and sent, on both ends of the expert channel. What is
 * not: HTTP headers and framing, WebSocket frame headers, TCP/IP and TLS overhead, and
 * requests the process itself sends over `fetch` (none on the hot path). The counts are
 * therefore a lower bound of what the NIC sees, close to it for inference traffic.
 */

/** Cumulative body bytes received and sent. */
export class NetCounter {
  /** Body bytes received since start. */
  rxBytes = 0;
  /** Body bytes sent since start. */
  txBytes = 0;

  /** Counts `bytes` received. */
  received(bytes: number): void {
    this.rxBytes += bytes;
  }

  /** Counts `bytes` sent. */
  sent(bytes: number): void {
    this.txBytes += bytes;
  }
}

/** The declared `content-length`, if it is a whole number. */
function declaredLength(headers: Headers): number | undefined {
  const text = headers.get("content-length");
  if (text === null || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

/**
 * `body` passed through unchanged, each chunk's size handed to `count`. Pulled on demand
 * (high-water mark 0), never read ahead: a request body the handler stops reading (413,
 * 408) has no read left pending, so the server can close that connection.
 */
function counted(
  body: ReadableStream<Uint8Array>,
  count: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      count(value.byteLength);
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

/** A handler counting request and response body bytes of `handler` into `counter`. */
export function countingHandler<Info>(
  handler: (request: Request, info: Info) => Response | Promise<Response>,
  counter: NetCounter,
): (request: Request, info: Info) => Promise<Response> {
  return async (request, info) => {
    // Step 1: the request body — the declared length, else count as it is read.
    let countedRequest = request;
    const requestLength = declaredLength(request.headers);
    if (requestLength !== undefined) counter.received(requestLength);
    else if (request.body !== null) {
      countedRequest = new Request(request, {
        body: counted(request.body, (bytes) => counter.received(bytes)),
      });
    }
    const response = await handler(countedRequest, info);
    // Step 2: the response body; a WebSocket upgrade (101) is counted per frame elsewhere.
    if (response.status === 101 || response.body === null) return response;
    const responseLength = declaredLength(response.headers);
    if (responseLength !== undefined) {
      counter.sent(responseLength);
      return response;
    }
    return new Response(counted(response.body, (bytes) => counter.sent(bytes)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
