"""Pull flows: one per resource `shipsync.pull.resources` declares (`pull_all`, `pull_documents`,
...), made by `shipsync.orchestration.pull_flows`; prefect.yaml names each by its path here
(`flows/pull.py:pull_documents`)."""

from __future__ import annotations

from shipsync.orchestration.pull_flows import pull_flows

globals().update(pull_flows())
