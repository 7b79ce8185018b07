"""The kernel zoo (issue 42 items 3 and 4): CUDA programs, frozen predictions, per-class scoring."""
