"""Prefect flows of shipsync: parameters, tasks and order only. prefect.yaml names them by path
(`flows/pull.py:pull_all`); what they use is `shipsync` and `shipsync.orchestration`."""
