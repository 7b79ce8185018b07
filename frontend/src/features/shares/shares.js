// Pure helpers of the Share control: what each share row says, and the API paths.

// The shares of one run or sweep: GET /api/shares/?simulation=<id> (or sweep=<id>).
export function sharesUrl(kind, id) {
  return `/api/shares/?${kind}=${encodeURIComponent(id)}`;
}

// The full address of a link share, to copy and send (null: a user's share).
export function shareAddress(share, origin) {
  return share.link_path ? `${origin}${share.link_path}` : null;
}

// What a share row of the owner's control says: who may read, and how they came to.
export function shareLabel(share) {
  if (share.link_path) return "Anyone signed in with the link";
  return share.via_link ? `${share.user} (opened the link)` : share.user;
}

// Where a redeemed share leads: the run's or the sweep's page.
export function sharedPage(share) {
  return share.simulation ? `/app/runs/${share.simulation}` : `/app/sweeps/${share.sweep}`;
}

// The line a grantee reads under the title of a run or sweep shared with them.
export function sharedNote(kind, owner) {
  return `Shared with you read-only by ${owner}: you see this ${kind} as its owner does, and cannot change it.`;
}
