"""The DuckDB warehouse: schema (SQLModel), migration, bulk upsert loaders, run ledger, views."""
