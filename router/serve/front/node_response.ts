/**
 * @module Writing a web {@linkcode Response} to a `node:http` response: status, headers
 * (each `Set-Cookie` apart), and the body. A body that is whole at once (an answer built
 * from bytes) goes out in one write with its length; one still arriving (SSE, a streamed
 * backend answer) goes out chunk by chunk, waiting for the socket to drain. A client that
 * goes away cancels the body, which is how a dashboard stream learns it ended.
 */
import type { ServerResponse } from "node:http";

const TICK = Symbol("tick");
/**
 * Microtask turns a body read may take and still count as "already there": a body built
 * from bytes answers its next read within a few; one still being produced (a stream fed by
 * a timer or a socket) does not. A wrong guess only changes the framing, never the bytes.
 */
const READY_TURNS = 16;
const nextTick = async (): Promise<typeof TICK> => {
  for (let i = 0; i < READY_TURNS; i++) await undefined;
  return TICK;
};

/** Sets status and headers of `res` from `response` (not sent yet). */
export function writeHead(res: ServerResponse, response: Response, close: boolean): void {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie") res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (close) res.setHeader("connection", "close");
}

/** Waits until `res` can take more, or has closed; false when it has closed. */
function drained(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (open: boolean) => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(open);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on("drain", onDrain);
    res.on("close", onClose);
  });
}

/** Bodies that declare a length up to this are read whole and sent in one write. */
const WHOLE_LIMIT_BYTES = 1024 * 1024;

/** Sends `response` on `res`; settles when it is written or the client went away. */
export async function writeResponse(
  res: ServerResponse,
  response: Response,
  options: { close: boolean; head: boolean },
): Promise<void> {
  writeHead(res, response, options.close);
  if (response.body === null || options.head) {
    await response.body?.cancel().catch(() => {});
    res.end();
    return;
  }
  // A declared, small length (a forwarded inference answer): read whole, far cheaper than
  // reading the body's stream chunk by chunk.
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared <= WHOLE_LIMIT_BYTES) {
    let bytes: Uint8Array;
    try {
      bytes = await response.bytes();
    } catch {
      res.destroy();
      return;
    }
    // The length on the wire is the bytes' own (node sets it from `end`).
    res.removeHeader("content-length");
    res.end(bytes);
    return;
  }
  const reader = response.body.getReader();
  // The client went away: stop producing (ends an SSE stream's subscription).
  const onClose = () => {
    if (!res.writableFinished) reader.cancel().catch(() => {});
  };
  res.on("close", onClose);
  try {
    const first = await reader.read();
    if (first.done) {
      res.end();
      return;
    }
    let next = reader.read();
    const settled = await Promise.race([next, nextTick()]);
    if (settled !== TICK && settled.done) {
      // Whole at once: one write, with its length.
      res.end(first.value);
      return;
    }
    if (!res.write(first.value) && !await drained(res)) return;
    for (;;) {
      const chunk = await next;
      if (chunk.done) break;
      if (!res.write(chunk.value) && !await drained(res)) return;
      next = reader.read();
    }
    res.end();
  } catch {
    // The body failed mid-way (or the client left): the answer cannot be completed.
    res.destroy();
  } finally {
    res.off("close", onClose);
  }
}
