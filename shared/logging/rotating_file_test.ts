import assert from "node:assert/strict";
import { join } from "node:path";
import { rotatedPaths, RotatingFile } from "./rotating_file.ts";

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

const line = (i: number) => `{"n":${String(i).padStart(3, "0")}}\n`; // 12 bytes

Deno.test("RotatingFile rotates by size and keeps max_files rotated files, newest first", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "nested", "router.log");
    const file = new RotatingFile({ path, maxBytes: 36, maxFiles: 2 });
    for (let i = 0; i < 14; i++) file.write(line(i));
    await file.close();
    // 3 lines per file: 0-2, 3-5, 6-8, 9-11, 12-13 → live holds 12-13, .1 9-11, .2 6-8.
    const [live, one, two] = await Promise.all(rotatedPaths(path, 2).map(readOrNull));
    assert.equal(live, line(12) + line(13));
    assert.equal(one, line(9) + line(10) + line(11));
    assert.equal(two, line(6) + line(7) + line(8));
    assert.equal(await readOrNull(`${path}.3`), null);
    assert.equal(file.written, 14);
    assert.equal(file.dropped, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RotatingFile appends to an existing file and counts its size", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "backend-1.log");
    await Deno.writeTextFile(path, line(0) + line(1));
    const file = new RotatingFile({ path, maxBytes: 36, maxFiles: 1 });
    file.write(line(2));
    file.write(line(3));
    await file.flush();
    file.write(line(4));
    await file.close();
    assert.equal(await Deno.readTextFile(`${path}.1`), line(0) + line(1) + line(2));
    assert.equal(await Deno.readTextFile(path), line(3) + line(4));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RotatingFile gives a line longer than max_bytes a file of its own", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "x.log");
    const file = new RotatingFile({ path, maxBytes: 20, maxFiles: 3 });
    const long = `{"msg":"${"a".repeat(40)}"}\n`;
    file.write(line(1));
    file.write(long);
    file.write(line(2));
    await file.close();
    assert.equal(await Deno.readTextFile(`${path}.2`), line(1));
    assert.equal(await Deno.readTextFile(`${path}.1`), long);
    assert.equal(await Deno.readTextFile(path), line(2));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RotatingFile drops and counts lines it cannot write, reports once, and never throws", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A regular file where the directory should be: every open fails.
    const blocker = join(dir, "blocker");
    await Deno.writeTextFile(blocker, "");
    const errors: string[] = [];
    const file = new RotatingFile({
      path: join(blocker, "router.log"),
      maxBytes: 1000,
      maxFiles: 1,
      onError: (message) => errors.push(message),
    });
    file.write(line(1));
    await file.flush();
    file.write(line(2));
    file.write(line(3));
    await file.close();
    assert.equal(file.dropped, 3);
    assert.equal(file.written, 0);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /Cannot write log file ".*router\.log"/);
    file.write(line(4));
    assert.equal(file.dropped, 4, "writes after close are dropped");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RotatingFile bounds its queue, dropping the oldest lines", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "q.log");
    const file = new RotatingFile({ path, maxBytes: 10_000, maxFiles: 1, maxQueuedLines: 3 });
    for (let i = 0; i < 5; i++) file.write(line(i));
    assert.equal(file.queued, 3);
    await file.close();
    assert.equal(file.dropped, 2);
    assert.equal(await Deno.readTextFile(path), line(2) + line(3) + line(4));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
