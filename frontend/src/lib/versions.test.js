import { describe, expect, it } from "vitest";
import { ApiError } from "./api.js";
import { changedFields, versionConflict, withVersion } from "./versions.js";

const REFUSED = {
  detail: "Someone else saved this record after you loaded it.",
  code: "version_conflict",
  expected_version: 1,
  version: 2,
  changed: ["description"],
  current: { id: 3, description: "theirs", version: 2 },
};

describe("withVersion", () => {
  it("adds the version the save was made from", () => {
    expect(withVersion({ name: "a" }, 4)).toEqual({ name: "a", version: 4 });
  });

  it("sends the body unchanged without a version", () => {
    expect(withVersion({ name: "a" }, null)).toEqual({ name: "a" });
    expect(withVersion({ name: "a" }, undefined)).toEqual({ name: "a" });
  });
});

describe("versionConflict", () => {
  it("reads the refusal of a stale save", () => {
    expect(versionConflict(new ApiError(409, REFUSED))).toEqual({
      detail: REFUSED.detail,
      changed: ["description"],
      version: 2,
      expected: 1,
      current: REFUSED.current,
    });
  });

  it("is null for every other failure, a record in use included", () => {
    expect(versionConflict(new ApiError(409, { detail: "In use by 'S'." }))).toBeNull();
    expect(versionConflict(new ApiError(400, REFUSED))).toBeNull();
    expect(versionConflict(new Error("network"))).toBeNull();
  });
});

describe("changedFields", () => {
  it("names the fields in words", () => {
    expect(changedFields(["description"])).toBe("Description");
    expect(changedFields(["name", "source_url", "attributes"])).toBe(
      "Name, Source url and Attributes",
    );
    expect(changedFields([])).toBe("");
  });

  it("uses the editor's labels when given", () => {
    expect(changedFields(["graph", "name"], (f) => (f === "graph" ? "the nodes" : f))).toBe(
      "the nodes and name",
    );
  });
});
