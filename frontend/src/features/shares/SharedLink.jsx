// The page a published link opens (/app/shared/<token>): it asks for the signed-in user's
// grant (POST /api/shares/redeem/) and goes on to the run's or sweep's page.
import { useEffect, useState } from "react";
import { ignoreAbort, post } from "../../lib/api.js";
import { navigate } from "../../lib/router.jsx";
import { ErrorSummary } from "../../components/ErrorSummary.jsx";
import { Loading } from "../../components/Loading.jsx";
import { sharedPage } from "./shares.js";

export function SharedLink({ token }) {
  const [error, setError] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    post("/api/shares/redeem/", { link: token }, { signal: controller.signal }).then(
      (share) => navigate(sharedPage(share), { replace: true, force: true }),
      ignoreAbort(setError),
    );
    return () => controller.abort();
  }, [token]);
  return error ? <ErrorSummary error={error} /> : <Loading />;
}
