"""The flow-level network model checked against SimGrid (docs/validation/network.md)."""
