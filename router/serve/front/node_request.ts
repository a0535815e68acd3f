/**
 * @module A `node:http` request as a web {@linkcode Request}: URL from the Host header,
 * headers in their order, and the body: its bytes when it has already arrived whole (the
 * usual small request, in one read with its head), else a byte stream that pauses the
 * socket while nobody reads. Cancelling the stream (a body timeout) only stops reading:
 * the socket stays for the answer, which the front then closes.
 */
import type { IncomingMessage } from "node:http";
import { concatBytes } from "../../../shared/concat_bytes.ts";

/** Methods whose requests carry no body here (as with `Deno.serve`). */
const NO_BODY = new Set(["GET", "HEAD"]);

/** Bytes buffered ahead of the reader before the socket is paused. */
const HIGH_WATER_BYTES = 64 * 1024;

/** The body of `req` if it has arrived whole and nobody has read it yet; else undefined. */
export function wholeBody(req: IncomingMessage): Uint8Array<ArrayBuffer> | undefined {
  if (!req.complete || req.readableDidRead) return undefined;
  const chunks: Uint8Array[] = [];
  for (let chunk = req.read(); chunk !== null; chunk = req.read()) chunks.push(chunk);
  return concatBytes(chunks);
}

/** The body of `req` as a web stream; errors when the client closes mid-body. */
export function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  const detach = () => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("close", onClose);
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Uint8Array) => {
    if (finished) return;
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  const onEnd = () => {
    if (finished) return;
    finished = true;
    detach();
    controller.close();
  };
  // `close` before `end`: the client went away mid-body.
  const onClose = () => {
    if (finished) return;
    finished = true;
    detach();
    controller.error(new Error("the client closed the connection mid-body"));
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("close", onClose);
    },
    pull() {
      req.resume();
    },
    cancel() {
      finished = true;
      detach();
      req.pause();
    },
  }, { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength });
}

/** `req` as a web request; `scheme` and `fallbackHost` build its URL. */
export function toRequest(
  req: IncomingMessage,
  scheme: "http" | "https",
  fallbackHost: string,
): Request {
  const method = req.method ?? "GET";
  const host = req.headers.host || fallbackHost;
  const init: RequestInit & { duplex?: "half" } = { method };
  if (!NO_BODY.has(method)) {
    const whole = wholeBody(req);
    if (whole !== undefined) init.body = whole;
    else {
      init.body = bodyStream(req);
      init.duplex = "half";
    }
  }
  const request = new Request(`${scheme}://${host}${req.url ?? "/"}`, init);
  // Appended in place: a `Headers` passed in `init` would be converted and copied again.
  const raw = req.rawHeaders;
  const headers = request.headers;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return request;
}
