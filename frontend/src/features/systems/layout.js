// Where the system editor puts things: sizes, the automatic layout of nodes that carry no stored
// position (in a row inside their group, or in a grid along their memory paths), the slot of a
// node added to a group, and which group a point falls in. Pure functions of React Flow nodes
// ({id, position, parentId, style, measured, data}) or of graph nodes; no React.

export const LEAF = { w: 190, h: 78 };
// A new group's size.
export const GROUP_SIZE = { w: 520, h: 190 };
export const PAD = 24;
export const HEADER = 34;
// The gap between a new child and the sibling to its left.
const CHILD_GAP = 30;

// Grid cells {col, row} of the children of a group joined by memory paths (`next` between
// siblings): one column per level outwards (cores, their L1s, L2s, ...), a level shared by
// several paths between their rows, the rest (fabrics) in a row below. Null when no sibling
// is linked.
export function memoryGrid(kids) {
  const ids = new Set(kids.map((k) => k.id));
  const inner = (k) => kids.filter((p) => p.next === k.id);
  const onPath = kids.filter((k) => (k.next && ids.has(k.next)) || inner(k).length);
  if (!onPath.length) return null;
  const col = new Map();
  const stack = new Set();
  const depth = (k) => {
    if (col.has(k.id)) return col.get(k.id);
    if (stack.has(k.id)) return 0; // a loop: the server reports it at save
    stack.add(k.id);
    const from = inner(k);
    const d = from.length ? Math.max(...from.map((p) => depth(p) + 1)) : 0;
    stack.delete(k.id);
    col.set(k.id, d);
    return d;
  };
  onPath.forEach(depth);
  const cells = new Map();
  for (let c = 0; c <= Math.max(...col.values()); c += 1) {
    const used = [];
    onPath
      .filter((k) => col.get(k.id) === c)
      .forEach((k) => {
        const rows = inner(k)
          .map((p) => cells.get(p.id)?.row)
          .filter((r) => r !== undefined);
        let row = rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
        while (used.some((r) => Math.abs(r - row) < 1))
          row = Math.max(...used.filter((r) => Math.abs(r - row) < 1)) + 1;
        used.push(row);
        cells.set(k.id, { col: c, row });
      });
  }
  const below = Math.floor(Math.max(...[...cells.values()].map((cell) => cell.row))) + 1;
  kids.filter((k) => !cells.has(k.id)).forEach((k, i) => cells.set(k.id, { col: i, row: below }));
  return cells;
}

// Place nodes that carry no stored position: children in a row inside their group, or in a
// grid along their memory paths (memoryGrid).
export function autoLayout(graphNodes) {
  const byParent = new Map();
  graphNodes.forEach((n) => {
    const key = n.parent || "";
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(n);
  });
  const place = new Map();
  const size = (n) => {
    if (!n.group) return n.ui?.w ? { w: n.ui.w, h: n.ui.h } : LEAF;
    const kids = byParent.get(n.id) || [];
    const stored = (k) => k.ui && k.ui.x !== undefined;
    const grid = memoryGrid(kids);
    let auto;
    if (grid) {
      const sizesOf = new Map(kids.map((k) => [k.id, size(k)]));
      const cols = Math.max(...[...grid.values()].map((c) => c.col)) + 1;
      const colW = Array.from({ length: cols }, (_, c) =>
        Math.max(
          0,
          ...kids.filter((k) => grid.get(k.id).col === c).map((k) => sizesOf.get(k.id).w),
        ),
      );
      const rowH = Math.max(...[...sizesOf.values()].map((s) => s.h)) + 50;
      const colX = colW.map((_, c) => PAD + colW.slice(0, c).reduce((a, w) => a + w + 70, 0));
      let w = 0;
      let h = 0;
      kids.forEach((k) => {
        const { col, row } = grid.get(k.id);
        const at = { x: colX[col], y: HEADER + 10 + row * rowH };
        place.set(k.id, stored(k) ? { x: k.ui.x, y: k.ui.y } : at);
        w = Math.max(w, at.x + sizesOf.get(k.id).w);
        h = Math.max(h, at.y + sizesOf.get(k.id).h);
      });
      auto = { w: Math.max(260, w + PAD), h: h + PAD + 20 };
    } else {
      let x = PAD;
      let h = 0;
      kids.forEach((k) => {
        const s = size(k);
        place.set(k.id, stored(k) ? { x: k.ui.x, y: k.ui.y } : { x, y: HEADER + 10 });
        x += s.w + 40;
        h = Math.max(h, s.h);
      });
      auto = { w: Math.max(260, x - 40 + PAD), h: HEADER + 10 + h + PAD };
    }
    return n.ui?.w ? { w: Math.max(n.ui.w, 120), h: Math.max(n.ui.h, 80) } : auto;
  };
  const sizes = new Map();
  let x = 40;
  (byParent.get("") || []).forEach((n) => {
    const s = size(n);
    place.set(n.id, n.ui && n.ui.x !== undefined ? { x: n.ui.x, y: n.ui.y } : { x, y: 40 });
    x += s.w + 60;
  });
  graphNodes.forEach((n) => sizes.set(n.id, size(n)));
  return { place, sizes };
}

// Return true when `nodeId` lies (at any depth) inside the group `ancestorId`.
export function isDescendant(nodes, ancestorId, nodeId) {
  let current = nodes.find((n) => n.id === nodeId);
  const seen = new Set();
  while (current && current.parentId && !seen.has(current.id)) {
    seen.add(current.id);
    if (current.parentId === ancestorId) return true;
    current = nodes.find((n) => n.id === current.parentId);
  }
  return false;
}

// How many groups hold the node `id`.
export function depthOf(nodes, id) {
  let d = 0;
  let current = nodes.find((n) => n.id === id);
  while (current && current.parentId && d < 50) {
    d += 1;
    current = nodes.find((n) => n.id === current.parentId);
  }
  return d;
}

const widthOf = (n) => n.style?.width ?? n.measured?.width ?? LEAF.w;
const heightOf = (n) => n.style?.height ?? n.measured?.height ?? LEAF.h;

// The room kept between boxes by the placement of new nodes and by layeredLayout.
export const GAP = { x: 60, y: 40 };

// A node's box {x, y, w, h} in its parent's coordinates.
export const boxOf = (n) => ({ x: n.position.x, y: n.position.y, w: widthOf(n), h: heightOf(n) });

// Return true when the boxes a and b, each grown by `margin` on every side, overlap.
export function overlaps(a, b, margin = 0) {
  return (
    a.x - margin < b.x + b.w + margin &&
    b.x - margin < a.x + a.w + margin &&
    a.y - margin < b.y + b.h + margin &&
    b.y - margin < a.y + a.h + margin
  );
}

// The first free cell, row by row on a grid of `columns` cells of the new node's size plus the
// gaps, at the top level of the canvas: a new node covers no node already there.
export function freeSpot(nodes, size = LEAF, columns = 4) {
  const taken = nodes.filter((n) => !n.parentId).map(boxOf);
  const step = { x: Math.max(size.w, LEAF.w) + GAP.x, y: Math.max(size.h, LEAF.h) + GAP.y };
  for (let cell = 0; ; cell += 1) {
    const at = { x: 40 + (cell % columns) * step.x, y: 40 + Math.floor(cell / columns) * step.y };
    if (!taken.some((box) => overlaps({ ...at, ...size }, box, GAP.y / 4))) return at;
  }
}

// Layers of the nodes `ids` joined by `links` ([a, b] pairs among them, either way round: the
// edges of a system have no direction): each connected part is walked breadth first from its
// first node in `ids` (the canvas's order, the order nodes were added), so a chain CPU - PCIe -
// GPU takes three layers from the CPU. Return Map id -> layer; unlinked nodes get -1.
export function layers(ids, links) {
  const next = new Map(ids.map((id) => [id, []]));
  links.forEach(([a, b]) => {
    if (a === b || !next.has(a) || !next.has(b)) return;
    next.get(a).push(b);
    next.get(b).push(a);
  });
  const layer = new Map();
  ids.forEach((root) => {
    if (layer.has(root)) return;
    if (!next.get(root).length) {
      layer.set(root, -1);
      return;
    }
    layer.set(root, 0);
    const queue = [root];
    while (queue.length) {
      const id = queue.shift();
      next.get(id).forEach((other) => {
        if (layer.has(other)) return;
        layer.set(other, layer.get(id) + 1);
        queue.push(other);
      });
    }
  });
  return layer;
}

// The automatic layout of the whole canvas (React Flow nodes, edges {source, target}): inside
// every group and at the top level, the nodes linked by edges (or memory paths) run in layers
// from left to right, one column per layer, stacked without overlaps; unlinked nodes go in a
// row below; each group is sized to hold what it holds. Groups are arranged from the innermost
// out, so a group's size is known before its parent is arranged. Return the new nodes.
export function layeredLayout(nodes, edges) {
  const byId = new Map(nodes.map((n) => [n.id, { ...n, position: { ...n.position } }]));
  // The child of `container` ("" for the top level) that holds `id`, at any depth.
  const childOf = (id, container) => {
    let current = byId.get(id);
    let guard = 0;
    while (current && (current.parentId || "") !== container && guard < 100) {
      current = byId.get(current.parentId);
      guard += 1;
    }
    return current && (current.parentId || "") === container ? current.id : null;
  };
  const links = [
    ...edges.map((e) => [e.source, e.target]),
    ...nodes.filter((n) => n.data?.next).map((n) => [n.id, n.data.next]),
  ];
  const containers = ["", ...nodes.filter((n) => n.data?.group).map((n) => n.id)];
  containers.sort((a, b) => depthOf(nodes, b) - depthOf(nodes, a) || (a === "") - (b === ""));
  containers.forEach((container) => {
    const kids = nodes.filter((n) => (n.parentId || "") === container).map((n) => n.id);
    if (!kids.length) return;
    const projected = links
      .map(([a, b]) => [childOf(a, container), childOf(b, container)])
      .filter(([a, b]) => a && b && a !== b);
    const layer = layers(kids, projected);
    const origin = container ? { x: PAD, y: HEADER + 10 } : { x: 40, y: 40 };
    const columns = Math.max(-1, ...layer.values()) + 1;
    const sizeOf = (id) => ({ w: widthOf(byId.get(id)), h: heightOf(byId.get(id)) });
    let x = origin.x;
    let bottom = origin.y;
    for (let c = 0; c < columns; c += 1) {
      const column = kids.filter((id) => layer.get(id) === c);
      let y = origin.y;
      column.forEach((id) => {
        byId.get(id).position = { x, y };
        y += sizeOf(id).h + GAP.y;
      });
      bottom = Math.max(bottom, y);
      x += Math.max(...column.map((id) => sizeOf(id).w)) + GAP.x;
    }
    let rowX = origin.x;
    kids
      .filter((id) => layer.get(id) === -1)
      .forEach((id) => {
        byId.get(id).position = { x: rowX, y: bottom };
        rowX += sizeOf(id).w + GAP.x;
      });
    if (container) {
      const group = byId.get(container);
      let w = 0;
      let h = 0;
      kids.forEach((id) => {
        const { x: kx, y: ky } = byId.get(id).position;
        w = Math.max(w, kx + sizeOf(id).w);
        h = Math.max(h, ky + sizeOf(id).h);
      });
      group.style = { ...group.style, width: Math.max(260, w + PAD), height: h + PAD };
      // The measured size is stale until React Flow measures the group again.
      delete group.measured;
    }
  });
  return nodes.map((n) => byId.get(n.id));
}

// Return the nodes with the group `groupId` (and its ancestors) made big enough for their children.
export function grow(nodes, groupId) {
  const out = [...nodes];
  let gid = groupId;
  let guard = 0;
  while (gid && guard < 20) {
    guard += 1;
    const g = out.find((n) => n.id === gid);
    if (!g) return out;
    const kids = out.filter((n) => n.parentId === gid);
    let w = 0;
    let h = 0;
    kids.forEach((k) => {
      w = Math.max(w, k.position.x + widthOf(k));
      h = Math.max(h, k.position.y + (k.style?.height ?? k.measured?.height ?? LEAF.h + 20));
    });
    const width = Math.max(g.style?.width ?? 260, w + PAD);
    const height = Math.max(g.style?.height ?? 160, h + PAD);
    out[out.indexOf(g)] = { ...g, style: { ...g.style, width, height } };
    gid = g.parentId;
  }
  return out;
}

// The position of a node put into the group `parentId`: below the group's title, right of the
// rightmost child already there (other than `excludeId`), so that it covers none of them.
export function childSlot(nodes, parentId, excludeId) {
  const kids = nodes.filter((n) => n.parentId === parentId && n.id !== excludeId);
  const x = kids.length ? Math.max(...kids.map((k) => k.position.x + widthOf(k))) + CHILD_GAP : PAD;
  return { x, y: HEADER + 10 };
}

// The innermost group (other than `excludeId` and the groups inside it) that holds the point;
// `absolute(id)` gives a node's position on the canvas. Null when none does.
export function groupAt(nodes, point, absolute, excludeId) {
  const candidates = nodes
    .filter((n) => n.data.group && n.id !== excludeId && !isDescendant(nodes, n.id, excludeId))
    .filter((g) => {
      const a = absolute(g.id);
      const w = g.measured?.width ?? g.style?.width ?? 0;
      const h = g.measured?.height ?? g.style?.height ?? 0;
      return point.x >= a.x && point.x <= a.x + w && point.y >= a.y && point.y <= a.y + h;
    });
  candidates.sort((a, b) => depthOf(nodes, b.id) - depthOf(nodes, a.id));
  return candidates[0] || null;
}

// Where a new node goes: dropped at a point (into the group there, if any), else into the
// selected group or the selected node's group, else at the top level in the first free cell
// (freeSpot) for a node of `size`.
export function placeNew(nodes, selectedId, dropPoint, absolute, size = LEAF) {
  if (dropPoint) {
    const g = groupAt(nodes, dropPoint, absolute);
    if (!g) return { parent: null, position: dropPoint };
    const a = absolute(g.id);
    return { parent: g.id, position: { x: dropPoint.x - a.x, y: dropPoint.y - a.y } };
  }
  const selected = nodes.find((n) => n.id === selectedId);
  const parent = selected ? (selected.data.group ? selected.id : selected.parentId || null) : null;
  if (parent) return { parent, position: childSlot(nodes, parent) };
  return { parent: null, position: freeSpot(nodes, size) };
}
