import { describe, expect, it } from "vitest";
import { shareAddress, shareLabel, sharedNote, sharedPage, sharesUrl } from "./shares.js";

describe("share helpers", () => {
  it("lists one run's or sweep's shares", () => {
    expect(sharesUrl("simulation", 7)).toBe("/api/shares/?simulation=7");
    expect(sharesUrl("sweep", 3)).toBe("/api/shares/?sweep=3");
  });
  it("gives a link share its full address and a user's share none", () => {
    const link = { link_path: "/app/shared/abc" };
    expect(shareAddress(link, "https://studio.example")).toBe(
      "https://studio.example/app/shared/abc",
    );
    expect(shareAddress({ user: "bob", link_path: null }, "https://studio.example")).toBeNull();
  });
  it("says who may read: a user, a user who opened the link, or anyone with the link", () => {
    expect(shareLabel({ user: "bob", link_path: null, via_link: false })).toBe("bob");
    expect(shareLabel({ user: "eve", link_path: null, via_link: true })).toBe(
      "eve (opened the link)",
    );
    expect(shareLabel({ user: null, link_path: "/app/shared/x" })).toBe(
      "Anyone signed in with the link",
    );
  });
  it("leads a redeemed share to its run's or sweep's page", () => {
    expect(sharedPage({ simulation: 7, sweep: null })).toBe("/app/runs/7");
    expect(sharedPage({ simulation: null, sweep: 3 })).toBe("/app/sweeps/3");
  });
  it("names the owner to the grantee", () => {
    expect(sharedNote("run", "alice")).toMatch(
      /^Shared with you read-only by alice: you see this run/,
    );
  });
});
