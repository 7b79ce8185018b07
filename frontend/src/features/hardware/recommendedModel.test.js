import { describe, expect, it } from "vitest";
import { recommendedModelChoices } from "./recommendedModel.js";

const models = [{ name: "Volkov GPU" }, { name: "GPU kernel (current architectures)" }];

describe("recommendedModelChoices", () => {
  it("offers the built-in models by name", () => {
    expect(recommendedModelChoices(models, "")).toEqual([
      "GPU kernel (current architectures)",
      "Volkov GPU",
    ]);
  });

  it("keeps the record's own choice where the list lacks it", () => {
    expect(recommendedModelChoices(null, "Volkov GPU")).toEqual(["Volkov GPU"]);
    expect(recommendedModelChoices(models, "Retired model")[0]).toBe("Retired model");
    expect(recommendedModelChoices(models, "Volkov GPU")).toHaveLength(2);
  });
});
