import { get } from "../../lib/api.js";
import { usePolling } from "../../hooks/usePolling.js";
import { FINAL } from "./runs.js";

// Poll one simulation until it is final (with its result once it succeeded).
export function useSimulation(id) {
  const load = async (signal) => {
    const sim = await get(`/api/simulations/${id}/`, { signal });
    return {
      sim,
      result: sim.status === "succeeded" ? await get(sim.result_url, { signal }) : null,
    };
  };
  const { value, error, retrying } = usePolling(
    load,
    (v) => !FINAL.includes(v.sim.status),
    600,
    id,
  );
  return { sim: value?.sim ?? null, result: value?.result ?? null, error, retrying };
}
