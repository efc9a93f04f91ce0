"""The demo: the product end to end against the sandbox, each step as the Prefect flow it is."""
