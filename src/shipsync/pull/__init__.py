"""Pulls from the service into the warehouse, as plain functions the flows and the CLI share."""
