"""Prefect flows of shipsync: parameters, tasks and order only; the logic is in `shipsync`."""
