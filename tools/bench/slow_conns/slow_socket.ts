/**
 * @module One slow client of `bench:slow-conns`: it opens a connection, sends part of a
 * request (the head, or the head and part of the body) and then nothing, and records
 * what came back and when the server closed the connection (if it did before `limitMs`).
 */
import { readUntilClosed, sendPartial } from "../../net/raw_http.ts";

/** What one slow client saw. */
export interface SlowOutcome {
  /** Status of the answer's first line, or "none". */
  status: string;
  /** Ms from opening until the server closed the connection; null: still open at the limit. */
  closedMs: number | null;
}

/** Sends half a request head to `url` and waits up to `limitMs` for the server to close. */
export async function slowHead(url: string, limitMs: number): Promise<SlowOutcome> {
  const started = performance.now();
  const target = new URL(url);
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
    await conn.write(
      new TextEncoder().encode(`POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\n`),
    );
  } catch {
    return { status: "none", closedMs: performance.now() - started };
  }
  return outcome(conn, started, limitMs);
}

/** Sends a whole head and part of a 10,000-byte body; waits up to `limitMs` for a close. */
export async function slowBody(url: string, limitMs: number): Promise<SlowOutcome> {
  const started = performance.now();
  let conn: Deno.TcpConn;
  try {
    conn = await sendPartial({ url, contentLength: 10_000, sent: '{"inputs":[' });
  } catch {
    return { status: "none", closedMs: performance.now() - started };
  }
  return outcome(conn, started, limitMs);
}

async function outcome(conn: Deno.Conn, started: number, limitMs: number): Promise<SlowOutcome> {
  const left = Math.max(0, limitMs - (performance.now() - started));
  const answer = await readUntilClosed(conn, left);
  return {
    status: answer.text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? "none",
    closedMs: answer.closed ? performance.now() - started : null,
  };
}
