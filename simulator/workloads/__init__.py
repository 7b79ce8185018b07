"""Built-in LLM workloads (issue 43 items 1, 3 and 5; docs/workloads.md): model configs with
their sources, parallel plans, per-GPU memory, kernels by shape timed by the GPU models, the
training step and the static inference batch generated as readable application models run
through the normal runner, and a request stream served with continuous batching
(`serving`), its iterations timed by the same kernels."""
