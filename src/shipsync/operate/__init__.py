"""Operating shipsync on one host: `shipsync up` starts and keeps running what production needs
(a Prefect server, the work pool, the deployments, a worker, the webhook receiver), and `status`
shows what is up."""
