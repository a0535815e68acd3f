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
