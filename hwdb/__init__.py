"""Hardware database: components with attributes, computational models, system models."""
