"""Bulk edits from spreadsheets: read, validate, diff against the warehouse, write, report, undo."""
