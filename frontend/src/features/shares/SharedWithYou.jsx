// "Shared with you": the runs and sweeps other users shared with the reader (GET
// /api/shares/?received=true), each linking to its page; nothing when there are none.
import { Link } from "../../lib/router.jsx";
import { useApiGet } from "../../hooks/useApiGet.js";
import { sharedPage } from "./shares.js";

export const RECEIVED_URL = "/api/shares/?received=true&page_size=100";

export function SharedWithYou() {
  const { data } = useApiGet(RECEIVED_URL);
  const shares = data?.results ?? [];
  if (shares.length === 0) return null;
  return (
    <section aria-labelledby="shared-with-you">
      <h2 id="shared-with-you">Shared with you</h2>
      <ul>
        {shares.map((share) => (
          <li key={share.id}>
            {share.simulation ? "Run" : "Sweep"}{" "}
            <Link to={sharedPage(share)}>{share.target_name}</Link>{" "}
            <span className="muted">by {share.owner}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
