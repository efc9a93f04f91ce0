"""Webhooks: signature checks, the receiver, its durable spool, and loading the spool as an event log."""
