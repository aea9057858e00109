"""hot: Python tooling for the hot MLIR compiler."""
