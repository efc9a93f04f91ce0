"""`shipsync bench`: each benchmark beside its peer or limit, measured in the same run."""
