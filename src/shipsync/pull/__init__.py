"""Pulls from the service into the warehouse, as plain functions the flows and the CLI share; each
resource is declared once in `pull.resources`, and the commands and flows follow from it."""
