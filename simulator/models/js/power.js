// Power states (MERPSYS, SimGrid): watts drawn in state 'idle' or 'active'.
// Python reference: simulator/models/energy.py (power_for_state).
// Attributes: powerIdle, powerConsumptionLoad [W]. Optional params.load in [0, 1] for a
// partly loaded component (linear between the two states).

function power(state, params) {
  if (state === 'idle') return hw.powerIdle;
  if (state !== 'active') throw new Error("state must be 'idle' or 'active', got " + state);
  var load = params.get('load', 1);
  if (!(load >= 0 && load <= 1)) throw new Error('load must be between 0 and 1');
  return hw.powerIdle + (hw.powerConsumptionLoad - hw.powerIdle) * load;
}
