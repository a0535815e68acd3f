/**
 * @module HTTP/1.1 over a raw TCP socket, for what `fetch` cannot do — send part of a
 * body and stop, or hang up mid-body — and to see whether the server closed the
 * connection. Used by the hostile-input tests and `bench:fuzz`.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A request whose headers are sent whole and whose body is sent only in part. */
export interface PartialRequest {
  /** `http://host:port/path` */
  url: string;
  headers?: Record<string, string>;
  /** Announced in `content-length`; -1 sends none (set `transfer-encoding` instead). */
  contentLength: number;
  /** The bytes actually sent after the headers. */
  sent: string;
}

/** Opens a connection and sends the headers and the partial body; the caller owns the socket. */
export async function sendPartial(request: PartialRequest): Promise<Deno.TcpConn> {
  const url = new URL(request.url);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const lines = [
    `POST ${url.pathname} HTTP/1.1`,
    `host: ${url.host}`,
    `content-type: application/json`,
    ...(request.contentLength >= 0 ? [`content-length: ${request.contentLength}`] : []),
    ...Object.entries(request.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
  ];
  const bytes = encoder.encode(`${lines.join("\r\n")}\r\n\r\n${request.sent}`);
  // The server may answer (and stop reading) before all bytes are in; that is not an error here.
  for (let at = 0; at < bytes.length;) {
    const n = await conn.write(bytes.subarray(at)).catch(() => null);
    if (n === null) break;
    at += n;
  }
  return conn;
}

/** What came back on a connection until the server closed it (or `limitMs` passed). */
export interface ReadUntilClosed {
  text: string;
  /** True when the server closed the connection (EOF or reset). */
  closed: boolean;
}

/** Reads until EOF; gives up (closed: false) after `limitMs`, a bound against hanging tests. */
export async function readUntilClosed(conn: Deno.Conn, limitMs: number): Promise<ReadUntilClosed> {
  const buffer = new Uint8Array(16_384);
  let text = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const giveUp = new Promise<"limit">((resolve) => {
    timer = setTimeout(() => resolve("limit"), limitMs);
  });
  try {
    for (;;) {
      const n = await Promise.race([conn.read(buffer).catch(() => null), giveUp]);
      if (n === "limit") return { text, closed: false };
      if (n === null) return { text, closed: true };
      text += decoder.decode(buffer.subarray(0, n));
    }
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

/** Reads until the text received matches `pattern` (or EOF); closes the socket unless `close` is false. */
export async function readUntil(conn: Deno.Conn, pattern: RegExp, close = true): Promise<string> {
  const buffer = new Uint8Array(16_384);
  let text = "";
  while (!pattern.test(text)) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) break;
    text += decoder.decode(buffer.subarray(0, n));
  }
  if (close) {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
  return text;
}

/** Sends a whole request on an open keep-alive connection (the caller owns the socket). */
export async function sendWhole(
  conn: Deno.Conn,
  request: { url: string; body: string; headers?: Record<string, string> },
): Promise<void> {
  const url = new URL(request.url);
  const body = encoder.encode(request.body);
  const lines = [
    `POST ${url.pathname} HTTP/1.1`,
    `host: ${url.host}`,
    `content-type: application/json`,
    `content-length: ${body.byteLength}`,
    ...Object.entries(request.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
  ];
  const head = encoder.encode(`${lines.join("\r\n")}\r\n\r\n`);
  const bytes = new Uint8Array(head.byteLength + body.byteLength);
  bytes.set(head);
  bytes.set(body, head.byteLength);
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/**
 * Reads one whole answer (`content-length` or chunked) from a keep-alive connection and
 * leaves the connection open; `status` 0 when it closed first.
 */
export async function readAnswer(conn: Deno.Conn): Promise<{ status: number; body: string }> {
  const buffer = new Uint8Array(16_384);
  let bytes = new Uint8Array(0);
  const more = async () => {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) return false;
    const next = new Uint8Array(bytes.byteLength + n);
    next.set(bytes);
    next.set(buffer.subarray(0, n), bytes.byteLength);
    bytes = next;
    return true;
  };
  const text = () => decoder.decode(bytes);
  while (!text().includes("\r\n\r\n")) if (!await more()) return { status: 0, body: text() };
  const headEnd = text().indexOf("\r\n\r\n");
  const head = text().slice(0, headEnd);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
  const bodyStart = encoder.encode(text().slice(0, headEnd + 4)).byteLength;
  if (length !== undefined) {
    while (bytes.byteLength - bodyStart < Number(length)) {
      if (!await more()) break;
    }
    return { status, body: decoder.decode(bytes.subarray(bodyStart)) };
  }
  // Chunked: until the last chunk.
  while (!text().endsWith("\r\n0\r\n\r\n") && !text().endsWith("\r\n\r\n0\r\n\r\n")) {
    if (!await more()) break;
  }
  return { status, body: decoder.decode(bytes.subarray(bodyStart)) };
}
