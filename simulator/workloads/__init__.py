"""Built-in LLM workloads (issue 43 items 1, 3 and 5; docs/workloads.md): model configs with
their sources, parallel plans, per-GPU memory, kernels by shape timed by the GPU models, and
the training step generated as a readable application model run through the normal runner."""
