import assert from "node:assert/strict";
import fc from "fast-check";
import { ApiError } from "../../../shared/errors.ts";
import { parseHeaderLength } from "../../../shared/header_length.ts";
import { decodeInferRequest } from "../../../shared/infer_request_codec.ts";
import { createRandom } from "../../model/prng.ts";
import { FUZZ_KINDS, fuzzCase, validCase } from "./bodies.ts";

const model = { dModel: 16, maxTokens: 8 };

function decode(body: Uint8Array, headers: Record<string, string>) {
  return decodeInferRequest(body, {
    model: { name: "m", dModel: model.dModel },
    headerLength: parseHeaderLength(new Headers(headers)),
    maxTokens: model.maxTokens,
  });
}

Deno.test("every hostile case is refused by the shared decoder with a 4xx naming something", () => {
  const kinds = FUZZ_KINDS.filter((k) => k !== "disconnect" && k !== "slow_body");
  fc.assert(
    fc.property(fc.integer(), fc.constantFrom(...kinds), (seed, kind) => {
      const c = fuzzCase(createRandom(seed), kind, model);
      assert.throws(
        () => decode(c.body, c.headers),
        (e: unknown) =>
          e instanceof ApiError && e.status >= 400 && e.status < 500 && /^Cannot /.test(e.message),
        kind,
      );
    }),
    { numRuns: 300 },
  );
});

Deno.test("valid cases decode, and raw-socket cases send a strict prefix of a valid body", () => {
  fc.assert(
    fc.property(fc.integer(), (seed) => {
      const random = createRandom(seed);
      const c = validCase(random, model);
      assert.ok(decode(c.body, c.headers).rows >= 1);
      for (const kind of ["disconnect", "slow_body"] as const) {
        const partial = fuzzCase(random, kind, model);
        assert.ok(partial.sendBytes! < partial.body.byteLength);
        assert.ok(decode(partial.body, partial.headers).rows === 1);
      }
    }),
    { numRuns: 100 },
  );
});
