/**
 * @module DOM helpers that only ever insert text (`textContent`), never HTML: every
 * value the API sends is data, not markup.
 */

/** Creates `<tag>` with attributes and children (strings become text nodes). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Replaces the children of `node`. */
export function replaceChildren(node, ...children) {
  node.replaceChildren(...children);
}

/** Sets the text of the element with `id` (if it exists). */
export function setText(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = String(text);
}

/** Escapes text for the one place HTML strings are unavoidable: ECharts tooltips. */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The element with `id`. */
export function byId(id) {
  return document.getElementById(id);
}

/** Sets the header status badge (`data-state` drives its colour). */
export function setStatus(state, text) {
  const status = byId("status");
  status.dataset.state = state;
  status.textContent = text;
}

/** Replaces a select's options when they changed, and selects `current`. */
export function fillSelect(select, values, current) {
  const wanted = values.map(String);
  if (wanted.join("\u0000") !== [...select.options].map((o) => o.value).join("\u0000")) {
    replaceChildren(select, ...wanted.map((v) => el("option", { value: v }, v)));
  }
  if (current !== undefined) select.value = String(current);
}

/** GETs JSON from the router's API; a non-2xx answer throws with the API's error text. */
export async function getJson(path) {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(`${path}: ${body.error ?? response.status}`);
  return body;
}
