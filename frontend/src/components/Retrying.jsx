// Say that the live view lost the server and keeps trying.
export function Retrying({ error }) {
  if (!error) return null;
  return (
    <p className="note" role="status" data-testid="retrying">
      {error.message} Retrying…
    </p>
  );
}
