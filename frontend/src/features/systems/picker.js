// The hardware picker's search: which components a typed text finds, best first. Pure; no React.

// Return the components whose name (or type, or vendor) holds every word of `query`, names
// that start with the query first, then names holding it, then the rest; in the list's order
// within each. An empty query finds them all.
export function matchComponents(components, query) {
  const words = String(query || "")
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
  if (!words.length) return components;
  const text = String(query).trim().toLowerCase();
  const rank = (c) => {
    const name = c.name.toLowerCase();
    if (name.startsWith(text)) return 0;
    if (name.includes(text)) return 1;
    return 2;
  };
  return components
    .map((c, order) => ({
      c,
      order,
      haystack: `${c.name} ${c.type} ${c.vendor || ""}`.toLowerCase(),
    }))
    .filter(({ haystack }) => words.every((word) => haystack.includes(word)))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.order - b.order)
    .map(({ c }) => c);
}

// The text an option shows: the name first (what people type), the type after it.
export const optionText = (c) => `${c.name} (${c.type})`;
