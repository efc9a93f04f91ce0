"""Everything shipsync does with Prefect, and the only package of the product that imports it.

The flows themselves live in the project's `flows/` folder (parameters, tasks and order only), which
`prefect.yaml` names; what they use, and what runs them, is here, a module per concept:

- `environment`: Prefect's home and environment for the processes shipsync starts or runs in.
- `flow_settings`: the settings of a flow run, built once per run and passed down.
- `task_runner`: a flow's blocking body in a worker thread, and batch steps as task runs.
- `artifacts`: what a run leaves on the Prefect server for people (counts, results, links).
- `pull_flows`: the flow of each pulled resource `pull.resources` declares (`flows/pull.py`).
- `rate_budget`: one rate budget per API key across every worker (a global concurrency limit).
- `api_auth`: the credential that `shipsync up`'s Prefect API requires of every client.
- `deployments`: the work pool (whose runs cannot change the command), the deployments of
  prefect.yaml, and reading back what is deployed.
- `server`: the Prefect server `shipsync up` runs (its command, where its database is).
- `project`: the project folder (prefect.yaml and flows/) and loading a flow from it.
- `state`, `children`, `supervisor`, `up`: `shipsync up`, which starts and keeps running what
  production needs on one host (a Prefect server, the pool, the deployments, a worker, the webhook
  receiver); `shipsync status` shows what it runs.
- `stranded_runs`: the flow runs a stopped worker left holding their deployment's slot, which up
  marks crashed; `collisions`: deployments whose runs keep being cancelled as collisions.
- `first_pull`: whether the warehouse has pulled data yet (up pulls everything at start if not).

The modules the command line uses import Prefect only inside the functions that need it, so that a
command starts without paying for it; `task_runner` and `artifacts`, which only flow runs use,
import it at the top (`pull_flows` too).
"""
