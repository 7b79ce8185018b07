// The placeholder while a page's data is on its way.
export function Loading() {
  return (
    <p className="muted" aria-live="polite">
      Loading…
    </p>
  );
}
