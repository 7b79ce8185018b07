import { describe, expect, it } from "vitest";
import { limitBody, queueLimits } from "./limits.js";

const QUEUES = [
  { name: "default", limits: { time_limit_s: { default: 30, max: 120 } } },
  { name: "batch", limits: { time_limit_s: { default: 300, max: 600 } } },
];

describe("queueLimits", () => {
  it("finds the chosen queue's limits", () => {
    expect(queueLimits(QUEUES, "batch").time_limit_s).toEqual({ default: 300, max: 600 });
    expect(queueLimits(QUEUES, "nowhere")).toEqual({});
    expect(queueLimits(undefined, "default")).toEqual({});
  });
});

describe("limitBody", () => {
  it("sends whole numbers, leaves empty fields to the queue and the rest to the API", () => {
    expect(limitBody({ time_limit_s: " 45 ", cpu_limit_s: "" })).toEqual({ time_limit_s: 45 });
    expect(limitBody({ time_limit_s: "1.5", cpu_limit_s: "ten" })).toEqual({
      time_limit_s: "1.5",
      cpu_limit_s: "ten",
    });
    expect(limitBody({})).toEqual({});
  });
});
