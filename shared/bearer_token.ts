/** @module Bearer-token checks for internal and admin endpoints. */

/** Constant-time check of an `Authorization: Bearer <token>` header. */
export function hasBearerToken(headers: Headers, token: string): boolean {
  const value = headers.get("authorization") ?? "";
  const expected = `Bearer ${token}`;
  if (value.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < value.length; i++) diff |= value.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}
