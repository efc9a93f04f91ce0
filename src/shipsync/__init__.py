"""shipsync: sync a shipment-tracking JSON:API service into DuckDB."""
