// The run limits a launch may set: each queue's default and maximum (GET /api/queues/).

// The launch fields of a run's limits, with what the form calls them.
export const LIMIT_FIELDS = [
  { field: "time_limit_s", label: "Wall-clock limit", name: "wall-clock limit" },
  { field: "cpu_limit_s", label: "CPU-time limit", name: "CPU-time limit" },
];

// The limits of queue `name` ({field: {default, max}}), or {} while the queues are unknown.
export function queueLimits(queues, name) {
  return (queues || []).find((q) => q.name === name)?.limits || {};
}

// The limit fields of a launch's body: a whole number as a number, an empty field left out
// (the queue's default), anything else sent as typed for the API to judge.
export function limitBody(values) {
  const body = {};
  LIMIT_FIELDS.forEach(({ field }) => {
    const text = String(values?.[field] ?? "").trim();
    if (text !== "") body[field] = /^\d+$/.test(text) ? Number(text) : text;
  });
  return body;
}
